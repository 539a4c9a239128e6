"""An in-memory work queue. Higher priority runs first; equal priorities run oldest first."""
import itertools
from dataclasses import dataclass, field

LOW, NORMAL, HIGH, URGENT = 0, 5, 10, 20


@dataclass
class Job:
    name: str
    priority: int = NORMAL
    seq: int = 0
    attempts: int = 0
    tags: set = field(default_factory=set)


class WorkQueue:
    def __init__(self, max_attempts=3):
        self._jobs = []
        self._counter = itertools.count()
        self.max_attempts = max_attempts
        self.dead = []

    def __len__(self):
        return len(self._jobs)

    def submit(self, name, priority=NORMAL, tags=()):
        job = Job(name, priority, next(self._counter), tags=set(tags))
        self._jobs.append(job)
        return job

    def _ordered(self):
        return sorted(self._jobs, key=lambda j: (j.priority, j.seq))

    def peek(self):
        ordered = self._ordered()
        return ordered[0] if ordered else None

    def take(self, tag=None):
        """Remove and return the next job (optionally only among jobs with a tag)."""
        for job in self._ordered():
            if tag is None or tag in job.tags:
                self._jobs.remove(job)
                job.attempts += 1
                return job
        return None

    def retry(self, job):
        """Put a failed job back, or move it to the dead list after max_attempts."""
        if job.attempts >= self.max_attempts:
            self.dead.append(job)
            return False
        self._jobs.append(job)
        return True

    def drain(self):
        names = []
        while (job := self.take()) is not None:
            names.append(job.name)
        return names
