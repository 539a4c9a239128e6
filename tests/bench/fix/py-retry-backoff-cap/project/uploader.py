"""Uploads files through a transport that may fail with OSError."""
from retrying import Backoff, retry


class Uploader:
    def __init__(self, transport, attempts=4, max_delay=5.0, sleep=None):
        self.transport = transport
        self.attempts = attempts
        self.backoff = Backoff(base=1.0, max_delay=max_delay)
        self._sleep = sleep

    def upload(self, name, data):
        kwargs = {"sleep": self._sleep} if self._sleep else {}
        return retry(lambda: self.transport.put(name, data), self.attempts, self.backoff, **kwargs)
