"""tinycoder's call tracer: a pytest plugin loaded (`-p tinycoder_call_trace`)
in a sandboxed shadow copy of the project while one failing test runs again.

It records the calls that test makes into the project's own code (not the
tests, not installed packages): each function's arguments and what it
returned or raised, so tinycoder can tell which function produced the wrong
value. The calls go to $TINYCODER_TRACE_OUT as JSON. Nothing in the project
is changed; only the test's own thread is traced.
"""
import json
import os
import sys

import pytest

_ROOT = os.path.abspath(os.getcwd()) + os.sep
_OUT = os.environ.get("TINYCODER_TRACE_OUT", "")
_MAX_CALLS = int(os.environ.get("TINYCODER_TRACE_MAX_CALLS", "200"))
_VALUE_CHARS = int(os.environ.get("TINYCODER_TRACE_VALUE_CHARS", "60"))
# Code objects without a name a user would look for.
_ANONYMOUS = {"<module>", "<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>", "<lambda>"}


_PROJECT_FILES = {}


def _is_project_code(filename):
    known = _PROJECT_FILES.get(filename)
    if known is None:
        known = _PROJECT_FILES[filename] = _decide(filename)
    return known


def _decide(filename):
    # "<frozen os>", "<string>": code without a file of the project.
    if not filename or filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    if not path.startswith(_ROOT):
        return False
    rel = path[len(_ROOT):]
    base = os.path.basename(rel)
    if base == "conftest.py" or base.startswith("test_") or base.endswith("_test.py"):
        return False
    parts = rel.split(os.sep)
    return not any(p in ("site-packages", ".venv", "venv", "node_modules") for p in parts)


def _short(value):
    kind = type(value)
    if kind.__repr__ is object.__repr__:
        # "<cart.Cart object at 0x7f…>" says nothing a model can use and changes every run.
        return "<%s>" % kind.__name__
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ is the project's bug, not the tracer's
        text = "<%s>" % kind.__name__
    text = " ".join(text.split())
    if len(text) > _VALUE_CHARS:
        text = text[: max(_VALUE_CHARS - 3, 1)] + "..."
    return text


class _Tracer:
    def __init__(self):
        self.calls = []
        self.depth = 0
        self.truncated = False

    def on_call(self, frame, event, arg):
        if event != "call":
            return None
        code = frame.f_code
        if code.co_name in _ANONYMOUS or not _is_project_code(code.co_filename):
            return None
        if len(self.calls) >= _MAX_CALLS:
            self.truncated = True
            return None
        count = code.co_argcount + code.co_kwonlyargcount
        count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
        args = ", ".join("%s=%s" % (n, _short(frame.f_locals.get(n))) for n in code.co_varnames[:count])
        record = {
            "path": os.path.relpath(os.path.abspath(code.co_filename), _ROOT),
            "name": getattr(code, "co_qualname", code.co_name),
            "line": code.co_firstlineno,
            "depth": self.depth,
            "args": args,
            "result": None,
            "raised": None,
        }
        self.calls.append(record)
        self.depth += 1
        frame.f_trace_lines = False
        raised = []

        def on_event(frame, event, arg):
            if event == "exception":
                raised[:] = [arg[0].__name__]
            elif event == "return":
                self.depth -= 1
                if arg is None and raised:
                    record["raised"] = raised[0]
                else:
                    record["result"] = _short(arg)
            return on_event

        return on_event


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    tracer = _Tracer()
    sys.settrace(tracer.on_call)
    try:
        yield
    finally:
        sys.settrace(None)
        if _OUT:
            with open(_OUT, "w", encoding="utf-8") as out:
                json.dump({"test": item.nodeid, "calls": tracer.calls, "truncated": tracer.truncated}, out)
