"""tinycoder's time limit for each pytest test (loaded through PYTEST_PLUGINS).

A test that runs past TINYCODER_TEST_TIMEOUT_S seconds fails where it was
stopped (pytest shows the stack at that moment) and the run goes on with the
next test. If the test swallows that failure or is stuck where Python cannot
interrupt it, a watchdog prints the test's name and every thread's stack and
ends the run, so the hang is still named instead of waiting for the run's
whole time limit.
"""

import faulthandler
import os
import signal
import threading

import pytest

LIMIT = float(os.environ.get("TINYCODER_TEST_TIMEOUT_S", "0") or 0)
GRACE = float(os.environ.get("TINYCODER_TEST_TIMEOUT_GRACE_S", "5") or 5)
MARK = "tinycoder-test-timeout:"
# The real stderr, taken before pytest's capture replaces fd 2 with a file that
# the watchdog's exit would throw away.
try:
    REAL_STDERR = os.dup(2)
except OSError:
    REAL_STDERR = 2


def _usable():
    # Another handler (pytest-timeout, the project's own) keeps SIGALRM.
    return (
        LIMIT > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)
    )


def _watchdog(nodeid, done):
    if done.wait(LIMIT + GRACE):
        return
    os.write(REAL_STDERR, f"\n{MARK} {nodeid} ran past {LIMIT:g} s and did not stop; its stack:\n".encode())
    faulthandler.dump_traceback(file=REAL_STDERR, all_threads=True)
    os._exit(1)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if not _usable():
        yield
        return

    def stop(signum, frame):
        __tracebackhide__ = True  # the report points at the test's own line
        pytest.fail(
            f"test timed out: ran past {LIMIT:g} s (sandbox.test_timeout_s) and was stopped here",
            pytrace=True,
        )

    done = threading.Event()
    dog = threading.Thread(target=_watchdog, args=(item.nodeid, done), daemon=True)
    dog.start()
    signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, LIMIT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        done.set()
