"""Progress and error output of a backup run."""
import sys


class Reporter:
    def __init__(self, out=None, err=None):
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.copied = 0
        self.skipped = 0
        self.failed = 0

    def copied_file(self, path, size):
        self.copied += 1
        self.out.write(f"copied  {path} ({size} bytes)\n")

    def skipped_file(self, path):
        self.skipped += 1
        self.out.write(f"skipped {path} (unchanged)\n")

    def error(self, path, reason):
        self.failed += 1
        self.err.write(f"error   {path}: {reason}\n")

    def finish(self):
        self.out.write(f"{self.copied} copied, {self.skipped} unchanged, {self.failed} failed\n")
        return 1 if self.failed else 0
