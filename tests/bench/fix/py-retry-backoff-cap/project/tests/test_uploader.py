import pytest

from retrying import RetryError
from uploader import Uploader


class FlakyTransport:
    def __init__(self, failures):
        self.failures = failures
        self.calls = 0

    def put(self, name, data):
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionResetError("reset by peer")
        return f"stored {name} ({len(data)} bytes)"


def test_succeeds_after_failures_with_growing_waits():
    waits = []
    up = Uploader(FlakyTransport(2), attempts=4, max_delay=10.0, sleep=waits.append)
    assert up.upload("a.txt", b"abc") == "stored a.txt (3 bytes)"
    assert waits == [1.0, 2.0]


def test_waits_never_exceed_max_delay():
    waits = []
    up = Uploader(FlakyTransport(10), attempts=6, max_delay=5.0, sleep=waits.append)
    with pytest.raises(RetryError) as err:
        up.upload("b.bin", b"")
    assert err.value.attempts == 6
    assert waits == [1.0, 2.0, 4.0, 5.0, 5.0]
