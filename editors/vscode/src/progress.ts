// Work-done progress the server starts (`window/workDoneProgress/create`, then
// `$/progress`): shown as a cancellable notification and in the status bar.
// The client's own handler is replaced because only one handler may listen to a
// token, and the status bar needs the titles too.
import * as vscode from 'vscode';
import { LanguageClient, WorkDoneProgress, WorkDoneProgressCreateRequest } from 'vscode-languageclient/node';
import { ProgressTracker } from './progressTracker';

export function trackProgress(
  client: LanguageClient,
  tracker: ProgressTracker,
  onLabel: (label: string | undefined) => void,
): vscode.Disposable {
  return client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
    let finish: (() => void) | undefined;
    let report: ((v: { message?: string; increment?: number }) => void) | undefined;
    let percentage = 0;
    const listener = client.onProgress(WorkDoneProgress.type, token, (value) => {
      onLabel(tracker.apply(token, value));
      if (value.kind === 'begin') {
        void vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: value.title, cancellable: value.cancellable ?? true },
          (progress, cancel) => {
            report = (v) => progress.report(v);
            report({ message: value.message });
            cancel.onCancellationRequested(() => {
              void client.sendNotification('window/workDoneProgress/cancel', { token });
            });
            return new Promise<void>((resolve) => (finish = resolve));
          },
        );
      } else if (value.kind === 'report') {
        const increment = value.percentage !== undefined ? value.percentage - percentage : undefined;
        percentage = value.percentage ?? percentage;
        report?.({ message: value.message, increment });
      } else {
        finish?.();
        listener.dispose();
      }
    });
  });
}
