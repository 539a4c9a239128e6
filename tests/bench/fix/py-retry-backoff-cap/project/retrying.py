"""Retry with exponential backoff, for the uploader's flaky network calls."""
import time


class RetryError(Exception):
    def __init__(self, attempts, last):
        super().__init__(f"gave up after {attempts} attempts: {last}")
        self.attempts = attempts
        self.last = last


class Backoff:
    def __init__(self, base=0.5, factor=2.0, max_delay=30.0):
        if base <= 0 or factor < 1:
            raise ValueError("base must be positive and factor at least 1")
        self.base = base
        self.factor = factor
        self.max_delay = max_delay

    def delay(self, attempt):
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        raw = self.base * self.factor ** (attempt - 1)
        return max(raw, self.max_delay)

    def delays(self, attempts):
        return [self.delay(n) for n in range(1, attempts + 1)]


def retry(call, attempts=5, backoff=None, retry_on=(OSError,), sleep=time.sleep):
    """Call `call()` until it succeeds, sleeping between failures."""
    backoff = backoff or Backoff()
    last = None
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except retry_on as exc:
            last = exc
            if attempt < attempts:
                sleep(backoff.delay(attempt))
    raise RetryError(attempts, last)
