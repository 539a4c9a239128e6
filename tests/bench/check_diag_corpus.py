#!/usr/bin/env python3
"""Checks the diagnostic-fixing corpus (tests/bench/diag/).

Every task is a small project with one compile or lint error that a checker of
config/tinycoder.toml (`[checkers.NAME]`: cargo, clippy, ruff, mypy) reports.
For each task, in a temporary copy of its project:

  1. the task's checker, run with the command config/tinycoder.toml gives it,
     reports the diagnostic task.toml expects (file, line, code, a piece of
     the message);
  2. with fix.patch applied, the checker reports no error and no warning, and
     the project's tests pass;
  3. with wrong.patch applied (a fix that only silences the checker: the code
     deleted, stubbed or changed in meaning), the expected diagnostic is gone
     and the checker reports no error, but the tests fail.

Rust tasks share one temporary CARGO_TARGET_DIR. A checker that is not
installed fails the run with how to install it; nothing is skipped.

    python3 tests/bench/check_diag_corpus.py [--only ID[,ID..]] [--verbose]
                                             [--ruff PATH] [--mypy PATH]
    python3 tests/bench/check_diag_corpus.py --show ID   # what the checker reports, as shipped

ruff: --ruff, else $TINYCODER_TEST_RUFF (set by `eval "$(scripts/testbed.sh up)"`),
else `ruff` on PATH, else the diag venv (below). mypy: --mypy, else
$TINYCODER_TEST_MYPY, else `mypy` on PATH, else the diag venv:

    python3 -m venv ~/.cache/tinycoder/diag-venv
    ~/.cache/tinycoder/diag-venv/bin/pip install ruff mypy

Prints one row per task and exits non-zero on any problem. Python 3.11+
(tomllib reads config/tinycoder.toml), stdlib only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Shared with the test-failure corpus's checker, in the same folder.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_corpus import _indent, patched_files, test_command  # noqa: E402

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    sys.exit("check_diag_corpus.py needs Python 3.11 or later (tomllib reads config/tinycoder.toml)")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = HERE / "diag"
CONFIG = ROOT / "config" / "tinycoder.toml"
# Hard ceiling per checker or test run; each is meant to take a few seconds.
RUN_TIMEOUT_S = 180
LANGUAGES = {"python": ("ruff", "mypy", "pyright"), "rust": ("cargo", "clippy")}
DIAG_KEYS = ("file", "line", "code", "message")
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tinycoder"
DIAG_VENV = CACHE / "diag-venv"
INSTALL = {
    "cargo": "install Rust with rustup: https://rustup.rs",
    "clippy": "rustup component add clippy",
    "ruff": f"python3 -m venv {DIAG_VENV} && {DIAG_VENV}/bin/pip install ruff "
    "(or `eval \"$(scripts/testbed.sh up)\"`, which sets TINYCODER_TEST_RUFF), then pass --ruff PATH if it is not on PATH",
    "mypy": f"python3 -m venv {DIAG_VENV} && {DIAG_VENV}/bin/pip install mypy, then pass --mypy PATH if it is not on PATH",
    "pyright": "npm install -g pyright (or pip install pyright)",
}


# ---------------------------------------------------------------- task.toml


def check_meta(task_dir, checkers):
    problems = []
    toml_path = task_dir / "task.toml"
    if not toml_path.is_file():
        return None, ["task.toml missing"]
    try:
        meta = tomllib.loads(toml_path.read_text())
    except Exception as exc:  # a syntax error must be reported, not crash the run
        return None, [f"task.toml does not parse: {exc}"]
    for key in ("id", "language", "checker", "description", "bug_files", "diagnostic"):
        if key not in meta:
            problems.append(f"task.toml lacks `{key}`")
    if problems:
        return meta, problems
    if meta["id"] != task_dir.name:
        problems.append(f"id `{meta['id']}` differs from the folder name `{task_dir.name}`")
    lang = meta["language"]
    if lang not in LANGUAGES:
        problems.append(f"language `{lang}` is not one of {sorted(LANGUAGES)}")
    elif meta["checker"] not in LANGUAGES[lang]:
        problems.append(f"checker `{meta['checker']}` does not check {lang} (one of {LANGUAGES[lang]})")
    if meta["checker"] not in checkers:
        problems.append(f"checker `{meta['checker']}` is not a [checkers.*] table of {CONFIG.relative_to(ROOT)}")
    if not isinstance(meta["description"], str) or not meta["description"].strip():
        problems.append("description must be a non-empty string")
    diag = meta["diagnostic"]
    if not isinstance(diag, dict) or any(k not in diag for k in DIAG_KEYS):
        problems.append(f"[diagnostic] must have {', '.join(DIAG_KEYS)}")
    elif not isinstance(diag["line"], int) or not all(isinstance(diag[k], str) and diag[k] for k in ("file", "code", "message")):
        problems.append("[diagnostic]: line is an integer; file, code and message non-empty strings")
    elif not (task_dir / "project" / diag["file"]).is_file():
        problems.append(f"diagnostic file `{diag['file']}` does not exist in project/")
    bug_files = meta["bug_files"]
    if not isinstance(bug_files, list) or not bug_files:
        problems.append("bug_files must be a non-empty list")
        bug_files = []
    for rel in bug_files:
        if not (task_dir / "project" / rel).is_file():
            problems.append(f"bug file `{rel}` does not exist in project/")
    for name in ("fix.patch", "wrong.patch"):
        if not (task_dir / name).is_file():
            problems.append(f"{name} missing")
    if not (task_dir / "project").is_dir():
        problems.append("project/ missing")
    return meta, problems


def stray_outputs(project):
    """Build outputs that must not be committed with a project."""
    found = []
    for pattern in ("Cargo.lock", "target", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"):
        found += [str(p.relative_to(project)) for p in project.rglob(pattern)]
    return found


# ---------------------------------------------------------------- checkers


def load_checkers():
    config = tomllib.loads(CONFIG.read_text())
    return config.get("checkers", {})


def find_tool(name, option, env_var):
    """(program, None) for `name`: the option, the env var, PATH, the diag venv;
    (None, why) when none of them has it."""
    for how, candidate in ((f"--{name}", option), (f"${env_var}", os.environ.get(env_var))):
        if candidate:
            found = shutil.which(candidate)
            return (found, None) if found else (None, f"{how} is `{candidate}`, which is not an executable")
    found = shutil.which(name) or shutil.which(str(DIAG_VENV / "bin" / name))
    return (found, None) if found else (None, f"not on PATH nor in {DIAG_VENV}/bin")


def resolve_programs(args, needed):
    """{checker: argv0}; exits with how to install whatever is missing."""
    programs, missing = {}, []
    for checker in sorted(needed):
        why = "not on PATH"
        if checker in ("cargo", "clippy"):
            found = shutil.which("cargo")
            if found and checker == "clippy":
                ok = subprocess.run(["cargo", "clippy", "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                found, why = (found, None) if ok.returncode == 0 else (None, "`cargo clippy` is not installed")
        elif checker == "ruff":
            found, why = find_tool("ruff", args.ruff, "TINYCODER_TEST_RUFF")
        elif checker == "mypy":
            found, why = find_tool("mypy", args.mypy, "TINYCODER_TEST_MYPY")
        else:
            found = shutil.which(checker)
        if found:
            programs[checker] = found
        else:
            missing.append(f"  {checker} ({why}): {INSTALL.get(checker, 'install it')}")
    if shutil.which("patch") is None:
        missing.append("  patch: apt-get install patch")
    if missing:
        sys.exit("the diag corpus needs checkers that are not installed:\n" + "\n".join(missing))
    return programs


def tool_env(target_dir):
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["CARGO_TARGET_DIR"] = str(target_dir)
    env["CARGO_TERM_COLOR"] = "never"
    env["CARGO_NET_OFFLINE"] = "true"
    env["NO_COLOR"] = "1"
    env["MYPY_FORCE_COLOR"] = "0"
    return env


def run(argv, workdir, target_dir):
    start = time.monotonic()
    try:
        proc = subprocess.run(
            argv,
            cwd=workdir,
            env=tool_env(target_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=RUN_TIMEOUT_S,
        )
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        def text(b):
            return (b.decode(errors="replace") if isinstance(b, bytes) else b) or ""
        code, out, err = None, text(exc.stdout), text(exc.stderr)
    return code, out, err, time.monotonic() - start


def run_checker(checker, spec, program, workdir, target_dir):
    """(diagnostics, raw output, seconds); each diagnostic a dict like tinycoder's CheckedDiagnostic."""
    argv = list(spec["command"])
    if checker in ("ruff", "mypy", "pyright"):
        argv[0] = program
    code, out, err, secs = run(argv, workdir, target_dir)
    diags = parse(spec["format"], out, workdir)
    if code is None:
        raise CheckerFailed(f"`{' '.join(argv)}` ran past {RUN_TIMEOUT_S} s")
    if not diags and code != 0:
        # A checker that exits non-zero with nothing parsed did not run
        # (a crash, a missing component), which must not read as "clean".
        raise CheckerFailed(f"`{' '.join(argv)}` exited {code} and reported nothing:\n" + _indent((out + err)[-1500:]))
    return diags, out + err, secs


class CheckerFailed(Exception):
    pass


def _severity(level):
    level = (level or "error").lower()
    if level in ("error", "error: internal compiler error"):
        return "error"
    return {"warning": "warning", "information": "info", "info": "info", "note": "note", "help": "note"}.get(level, "error")


LINE = re.compile(
    r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<sev>error|warning|note|info)\s*:\s*(?P<msg>.*?)(?:\s+\[(?P<code>[\w.-]+)\])?\s*$"
)


def parse(fmt, output, root):
    """The same reading as server/src/sandbox/check_parse.rs."""
    found = []
    if fmt == "cargo-json":
        for line in output.splitlines():
            if not line.startswith("{"):
                continue
            try:
                v = json.loads(line)
            except ValueError:
                continue
            if v.get("reason") != "compiler-message":
                continue
            m = v["message"]
            spans = m.get("spans") or []
            span = next((s for s in spans if s.get("is_primary")), spans[0] if spans else None)
            if span is None:
                continue
            found.append(dict(path=span["file_name"], line=span["line_start"], severity=_severity(m.get("level")),
                              code=(m.get("code") or {}).get("code") or "", message=m.get("message", "")))
    elif fmt == "ruff-json":
        start = output.find("[")
        items = json.loads(output[start:]) if start >= 0 else []
        for d in items:
            found.append(dict(path=d["filename"], line=d["location"]["row"], severity="error",
                              code=d.get("code") or "", message=d.get("message", "")))
    elif fmt == "pyright-json":
        start = output.find("{")
        items = json.loads(output[start:]).get("generalDiagnostics", []) if start >= 0 else []
        for d in items:
            found.append(dict(path=d["file"], line=d["range"]["start"]["line"] + 1, severity=_severity(d.get("severity")),
                              code=d.get("rule") or "", message=d.get("message", "")))
    elif fmt == "lines":
        for line in output.splitlines():
            m = LINE.match(line)
            if m and m["sev"] != "note":
                found.append(dict(path=m["file"], line=int(m["line"]), severity=_severity(m["sev"]),
                                  code=m["code"] or "", message=m["msg"]))
    else:
        raise CheckerFailed(f"unknown checker format `{fmt}`")
    prefixes = [f"{root}/", f"{Path(root).resolve()}/"]
    unique = []
    for d in found:
        for prefix in prefixes:
            if d["path"].startswith(prefix):
                d["path"] = d["path"][len(prefix):]
        while d["path"].startswith("./"):
            d["path"] = d["path"][2:]
        if d not in unique:
            unique.append(d)
    return unique


def headline(d):
    return f"{d['path']}:{d['line']}: [{d['severity']}] {d['code']} {d['message']}"


def matches(d, want):
    return (d["path"] == want["file"] and d["line"] == want["line"] and d["code"] == want["code"]
            and want["message"] in d["message"])


# ---------------------------------------------------------------- one task


def apply_patch(patch_text, work):
    proc = subprocess.run(
        ["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-d", str(work)],
        input=patch_text, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    return None if proc.returncode == 0 else proc.stdout.strip()[-500:]


def check_task(task_dir, checkers, programs, target_dir, verbose):
    row = {"id": task_dir.name, "language": "?", "checker": "?", "code": "?",
           "found": "-", "fixed": "-", "wrong": "-", "secs": 0.0}
    meta, problems = check_meta(task_dir, checkers)
    if meta:
        row["language"] = meta.get("language", "?")
        row["checker"] = meta.get("checker", "?")
        row["code"] = (meta.get("diagnostic") or {}).get("code", "?")
    if problems:
        return row, problems
    project = task_dir / "project"
    stray = stray_outputs(project)
    if stray:
        problems.append(f"build outputs committed in project/: {', '.join(sorted(stray))}")
    fix_text = (task_dir / "fix.patch").read_text()
    if set(meta["bug_files"]) != patched_files(fix_text):
        problems.append(f"bug_files {sorted(meta['bug_files'])} differ from the files in fix.patch {sorted(patched_files(fix_text))}")
    want = meta["diagnostic"]
    checker, spec, program = meta["checker"], checkers[meta["checker"]], programs[meta["checker"]]

    def log(stage, text):
        if verbose:
            print(f"--- {task_dir.name}: {stage}\n{text[-3000:]}")

    with tempfile.TemporaryDirectory(prefix=f"diag-{task_dir.name}-") as tmp:
        # 1. As shipped: the checker reports the expected diagnostic.
        work = Path(tmp) / "shipped"
        shutil.copytree(project, work)
        try:
            diags, out, secs = run_checker(checker, spec, program, work, target_dir)
        except CheckerFailed as exc:
            return row, problems + [f"as shipped: {exc}"]
        row["secs"] += secs
        log("checker as shipped", "\n".join(map(headline, diags)) or out)
        if any(matches(d, want) for d in diags):
            row["found"] = "yes"
        else:
            row["found"] = "NO"
            problems.append(
                f"the checker does not report {want['file']}:{want['line']}: {want['code']} …{want['message']}…; it reports:\n"
                + _indent("\n".join(map(headline, diags)) or "(nothing)")
            )

        # 2. With the reference fix: checker clean, tests pass.
        work = Path(tmp) / "fixed"
        shutil.copytree(project, work)
        failed = apply_patch(fix_text, work)
        if failed:
            return row, problems + [f"fix.patch does not apply: {failed}"]
        try:
            diags, out, secs = run_checker(checker, spec, program, work, target_dir)
        except CheckerFailed as exc:
            return row, problems + [f"after fix.patch: {exc}"]
        row["secs"] += secs
        log("checker after fix.patch", "\n".join(map(headline, diags)) or "(clean)")
        left = [d for d in diags if d["severity"] in ("error", "warning")]
        if left:
            problems.append("the checker still reports after fix.patch:\n" + _indent("\n".join(map(headline, left))))
        code, out, err, secs = run(test_command(meta["language"]), work, target_dir)
        row["secs"] += secs
        log(f"tests after fix.patch (exit {code})", out + err)
        if code != 0:
            problems.append("tests fail after fix.patch:\n" + _indent((out + err)[-2000:]))
        row["fixed"] = "yes" if not left and code == 0 else "NO"

        # 3. With the silencing fix: checker quiet, tests fail.
        work = Path(tmp) / "wrong"
        shutil.copytree(project, work)
        failed = apply_patch((task_dir / "wrong.patch").read_text(), work)
        if failed:
            return row, problems + [f"wrong.patch does not apply: {failed}"]
        try:
            diags, out, secs = run_checker(checker, spec, program, work, target_dir)
        except CheckerFailed as exc:
            return row, problems + [f"after wrong.patch: {exc}"]
        row["secs"] += secs
        log("checker after wrong.patch", "\n".join(map(headline, diags)) or "(clean)")
        errors = [d for d in diags if d["severity"] == "error" or matches(d, want)]
        if errors:
            problems.append("wrong.patch does not silence the checker:\n" + _indent("\n".join(map(headline, errors))))
        code, out, err, secs = run(test_command(meta["language"]), work, target_dir)
        row["secs"] += secs
        log(f"tests after wrong.patch (exit {code})", out + err)
        if code == 0:
            problems.append("tests pass after wrong.patch (they do not tell a silenced checker from a fix)")
        row["wrong"] = "caught" if not errors and code != 0 else "NO"
    return row, problems


def show(task_dir, checkers, programs, target_dir):
    meta, problems = check_meta(task_dir, checkers)
    if not meta or "checker" not in meta or meta["checker"] not in programs:
        sys.exit("\n".join(problems) or "no checker")
    with tempfile.TemporaryDirectory(prefix=f"diag-{task_dir.name}-") as tmp:
        work = Path(tmp) / "shipped"
        shutil.copytree(task_dir / "project", work)
        diags, out, _ = run_checker(meta["checker"], checkers[meta["checker"]], programs[meta["checker"]], work, target_dir)
    for d in diags:
        print(headline(d))
    if not diags:
        print(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated task ids")
    parser.add_argument("--verbose", action="store_true", help="print checker and test output")
    parser.add_argument("--ruff", help="the ruff program (default: $TINYCODER_TEST_RUFF, ruff on PATH, the diag venv's)")
    parser.add_argument("--mypy", help="the mypy program (default: $TINYCODER_TEST_MYPY, mypy on PATH, the diag venv's)")
    parser.add_argument("--show", metavar="ID", help="print what the task's checker reports on the project as shipped")
    args = parser.parse_args()

    checkers = load_checkers()
    tasks = sorted(p for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else []
    if args.show:
        args.only = args.show
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {t.name for t in tasks}
        if unknown:
            sys.exit(f"unknown task ids: {', '.join(sorted(unknown))}")
        tasks = [t for t in tasks if t.name in wanted]
    if not tasks:
        sys.exit(f"no tasks under {CORPUS}")

    needed = set()
    for task_dir in tasks:
        try:
            needed.add(tomllib.loads((task_dir / "task.toml").read_text())["checker"])
        except Exception:
            pass  # reported by check_meta
    needed &= set(checkers)
    if any(tomllib.loads((t / "task.toml").read_text()).get("language") == "rust" for t in tasks if (t / "task.toml").is_file()):
        needed.add("cargo")  # the Rust tests
    programs = resolve_programs(args, needed)

    with tempfile.TemporaryDirectory(prefix="diag-cargo-target-") as target_dir:
        if args.show:
            show(tasks[0], checkers, programs, target_dir)
            return 0
        failures = {}
        rows = []
        for task_dir in tasks:
            row, problems = check_task(task_dir, checkers, programs, target_dir, args.verbose)
            rows.append(row)
            if problems:
                failures[row["id"]] = problems
            status = "ok" if not problems else "PROBLEM"
            print(
                f"{row['id']:<32} {row['language']:<7} {row['checker']:<7} {row['code']:<30} "
                f"reported={row['found']:<3} fixed={row['fixed']:<3} wrong-fix={row['wrong']:<6} {row['secs']:5.1f}s  {status}",
                flush=True,
            )

    counts = {}
    for row in rows:
        counts[(row["language"], row["checker"])] = counts.get((row["language"], row["checker"]), 0) + 1
    print()
    print("tasks: " + ", ".join(f"{lang}/{checker}={n}" for (lang, checker), n in sorted(counts.items())) + f", total={len(rows)}")
    print("checkers: " + ", ".join(f"{c}={programs[c]}" for c in sorted(programs)))
    print(f"checked in {sum(r['secs'] for r in rows):.1f} s of checker and test runs; "
          f"{len(rows) - len(failures)} ok, {len(failures)} with problems")
    for task_id, problems in failures.items():
        print(f"\n{task_id}:")
        for p in problems:
            print(f"  - {p}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
