// The few LSP shapes the extension's pure logic builds (0-based lines and characters).

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface Diagnostic {
  range: Range;
  message: string;
  severity?: number;
  source?: string;
  code?: string | number;
}

export interface Command {
  title: string;
  command: string;
  arguments?: unknown[];
}

export interface CodeAction {
  title: string;
  kind?: string;
  isPreferred?: boolean;
  command?: Command;
  diagnostics?: Diagnostic[];
}
