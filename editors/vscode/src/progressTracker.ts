// The work-done progress the server reports (`$/progress`, one token per job):
// the title of the latest running job, for the status bar. No `vscode` import.

export type ProgressValue =
  | { kind: 'begin'; title: string; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: 'report'; message?: string; percentage?: number }
  | { kind: 'end'; message?: string };

interface Job {
  title: string;
  message?: string;
}

export class ProgressTracker {
  private readonly jobs = new Map<string, Job>();

  /** Applies one `$/progress` value; returns the new label (undefined: nothing runs). */
  apply(token: string | number, value: ProgressValue): string | undefined {
    const id = String(token);
    if (value.kind === 'begin') {
      this.jobs.delete(id);
      this.jobs.set(id, { title: value.title, message: value.message });
    } else if (value.kind === 'report') {
      const job = this.jobs.get(id);
      if (job && value.message !== undefined) {
        job.message = value.message;
      }
    } else {
      this.jobs.delete(id);
    }
    return this.label();
  }

  /** The job ids still running, oldest first. */
  running(): string[] {
    return [...this.jobs.keys()];
  }

  /** `title — message` of the most recently started job; with a count when several run. */
  label(): string | undefined {
    const entries = [...this.jobs.values()];
    const last = entries[entries.length - 1];
    if (!last) {
      return undefined;
    }
    let text = last.message ? `${last.title} — ${last.message}` : last.title;
    if (entries.length > 1) {
      text += ` (+${entries.length - 1})`;
    }
    return text;
  }
}
