// The status bar item: backend and coder model, or the running job's title.
import * as vscode from 'vscode';
import { BackendSummary, statusText } from './configurationSummary';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  private summary: BackendSummary = { kind: 'auto', model: '…' };
  private progress: string | undefined;
  private problem: string | undefined;

  constructor(command: string) {
    this.item.command = command;
    this.item.name = 'tinycoder';
    this.render();
    this.item.show();
  }

  setSummary(summary: BackendSummary): void {
    this.summary = summary;
    this.problem = undefined;
    this.render();
  }

  setProgress(label: string | undefined): void {
    this.progress = label;
    this.render();
  }

  /** The server is not running: say so until it starts. */
  setProblem(problem: string | undefined): void {
    this.problem = problem;
    this.render();
  }

  private render(): void {
    if (this.problem) {
      this.item.text = '$(error) tinycoder';
      this.item.tooltip = `${this.problem}\nClick for actions.`;
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      return;
    }
    this.item.backgroundColor = undefined;
    this.item.text = statusText(this.summary, this.progress);
    const url = this.summary.url ? ` at ${this.summary.url}` : '';
    this.item.tooltip = `tinycoder: backend ${this.summary.kind}${url}, coder model ${this.summary.model}\nClick for actions.`;
  }

  dispose(): void {
    this.item.dispose();
  }
}
