"""Quick checks of the diagnostic corpus (tests/bench/diag/) that run no checker.

check_diag_corpus.py runs the checkers and the tests of every task; these only
read the files: task.toml, the patches, the checker settings, and the output
parser (the same reading as server/src/sandbox/check_parse.rs).
"""
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_diag_corpus as diag  # noqa: E402

TASKS = sorted(p for p in diag.CORPUS.iterdir() if p.is_dir())
CHECKERS = diag.load_checkers()


def test_corpus_covers_both_languages_and_every_checker_it_names():
    metas = [diag.tomllib.loads((t / "task.toml").read_text()) for t in TASKS]
    assert len(TASKS) >= 16
    assert {m["checker"] for m in metas} >= {"cargo", "clippy", "ruff", "mypy"}
    codes = [(m["checker"], m["diagnostic"]["code"]) for m in metas]
    assert len(set(codes)) == len(codes), "two tasks expect the same diagnostic code"


@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_task_files(task):
    meta, problems = diag.check_meta(task, CHECKERS)
    assert not problems, problems
    assert not diag.stray_outputs(task / "project")
    fix = (task / "fix.patch").read_text()
    assert diag.patched_files(fix) == set(meta["bug_files"])
    assert diag.patched_files((task / "wrong.patch").read_text())
    want = meta["diagnostic"]
    lines = (task / "project" / want["file"]).read_text().splitlines()
    assert 1 <= want["line"] <= len(lines), f"{want['file']} has no line {want['line']}"
    if meta["checker"] == "ruff":
        # The rules are the project's own, not the ruff release's defaults.
        assert "[tool.ruff.lint]" in (task / "project" / "pyproject.toml").read_text()


def test_cargo_messages_one_each_without_summaries():
    out = "\n".join([
        '{"reason":"compiler-artifact","target":{}}',
        '{"reason":"compiler-message","message":{"level":"error","message":"cannot find value `totl` in this scope","code":{"code":"E0425"},"spans":[{"file_name":"src/lib.rs","line_start":6,"is_primary":true}]}}',
        '{"reason":"compiler-message","message":{"level":"error","message":"cannot find value `totl` in this scope","code":{"code":"E0425"},"spans":[{"file_name":"src/lib.rs","line_start":6,"is_primary":true}]}}',
        '{"reason":"compiler-message","message":{"level":"warning","message":"manual `Range::contains` implementation","code":{"code":"clippy::manual_range_contains"},"spans":[{"file_name":"src/lib.rs","line_start":2,"is_primary":false},{"file_name":"src/lib.rs","line_start":3,"is_primary":true}]}}',
        '{"reason":"compiler-message","message":{"level":"error","message":"aborting due to 1 previous error","code":null,"spans":[]}}',
    ])
    found = diag.parse("cargo-json", out, "/s")
    assert [(d["line"], d["code"], d["severity"]) for d in found] == [
        (6, "E0425", "error"), (3, "clippy::manual_range_contains", "warning")]
    assert diag.matches(found[0], {"file": "src/lib.rs", "line": 6, "code": "E0425", "message": "`totl`"})


def test_ruff_paths_relative_and_mypy_lines():
    ruff = '[{"code":"F821","filename":"/s/app/a.py","location":{"row":4,"column":12},"message":"Undefined name `y`"}]'
    assert diag.parse("ruff-json", ruff, "/s") == [
        {"path": "app/a.py", "line": 4, "severity": "error", "code": "F821", "message": "Undefined name `y`"}]
    mypy = ('./a.py:3:5: error: Incompatible return value type (got "str", expected "int")  [return-value]\n'
            "a.py:9: note: See https://mypy.rtfd.io\n")
    found = diag.parse("lines", mypy, "/s")
    assert [(d["path"], d["line"], d["code"]) for d in found] == [("a.py", 3, "return-value")]


def test_a_missing_checker_fails_with_how_to_install_it():
    proc = subprocess.run(
        [sys.executable, str(HERE / "check_diag_corpus.py"), "--only", "py-ledger-rounding-import", "--ruff", "/nonexistent/ruff"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode != 0
    assert "pip install ruff" in proc.stderr and "/nonexistent/ruff" in proc.stderr
