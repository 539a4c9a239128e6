#!/usr/bin/env python3
"""Checks the benchmark corpus of `tinycoder bench fix` (tests/bench/fix/).

For every task: task.toml has the required keys and its bug_files exist; the
project's tests fail as shipped; after `patch -p1` with fix.patch they pass.
Each project runs in a temporary copy, so nothing is written into the repository;
Rust tasks share one temporary CARGO_TARGET_DIR so dependencies of the test
harness compile once.

    python3 tests/bench/check_corpus.py [--only ID[,ID..]] [--verbose]

Prints one row per task and exits non-zero on any problem. Python 3 stdlib only.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    tomllib = None

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "fix"
# Hard ceiling per test run; the projects are meant to finish in about a second.
TEST_TIMEOUT_S = 120
LANGUAGES = ("python", "rust")
KINDS = ("single", "multi")


def load_task_toml(path):
    text = path.read_text()
    if tomllib is not None:
        return tomllib.loads(text)
    return _parse_flat_toml(text)


def _parse_flat_toml(text):
    """Enough TOML for task.toml (flat keys, strings, string arrays) on old Pythons."""
    import ast

    data = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        value = value.strip().replace("true", "True").replace("false", "False")
        data[key.strip()] = ast.literal_eval(value)
    return data


def test_command(language):
    if language == "python":
        return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    return ["cargo", "test", "--offline", "--quiet"]


def run_tests(language, workdir, target_dir):
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["CARGO_TARGET_DIR"] = str(target_dir)
    env["CARGO_TERM_COLOR"] = "never"
    start = time.monotonic()
    try:
        proc = subprocess.run(
            test_command(language),
            cwd=workdir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=TEST_TIMEOUT_S,
        )
        code, out = proc.returncode, proc.stdout
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or ""
        code, out = None, out.decode(errors="replace") if isinstance(out, bytes) else out
    return code, out, time.monotonic() - start


def check_meta(task_dir):
    problems = []
    toml_path = task_dir / "task.toml"
    if not toml_path.is_file():
        return None, ["task.toml missing"]
    try:
        meta = load_task_toml(toml_path)
    except Exception as exc:  # a syntax error must be reported, not crash the run
        return None, [f"task.toml does not parse: {exc}"]
    for key in ("language", "kind", "description", "bug_files"):
        if key not in meta:
            problems.append(f"task.toml lacks `{key}`")
    if problems:
        return meta, problems
    if meta["language"] not in LANGUAGES:
        problems.append(f"language `{meta['language']}` is not one of {LANGUAGES}")
    if meta["kind"] not in KINDS:
        problems.append(f"kind `{meta['kind']}` is not one of {KINDS}")
    if not isinstance(meta["description"], str) or not meta["description"].strip():
        problems.append("description must be a non-empty string")
    bug_files = meta["bug_files"]
    if not isinstance(bug_files, list) or not bug_files:
        problems.append("bug_files must be a non-empty list")
        bug_files = []
    for rel in bug_files:
        if not (task_dir / "project" / rel).is_file():
            problems.append(f"bug file `{rel}` does not exist in project/")
    if meta["kind"] == "multi":
        if not str(meta.get("request", "")).strip():
            problems.append("multi task lacks `request`")
        if len(bug_files) < 2:
            problems.append("multi task must name 2+ bug_files")
    elif meta["kind"] == "single" and len(bug_files) != 1:
        problems.append("single task must name exactly one bug file")
    if not (task_dir / "fix.patch").is_file():
        problems.append("fix.patch missing")
    return meta, problems


def patched_files(patch_text):
    files = set()
    for line in patch_text.splitlines():
        if line.startswith("+++ "):
            name = line[4:].split("\t")[0].strip()
            if name != "/dev/null":
                files.add(name.split("/", 1)[1] if "/" in name else name)
    return files


def stray_outputs(project):
    """Build outputs that must not be committed with a project."""
    found = []
    for pattern in ("Cargo.lock", "target", "__pycache__", ".pytest_cache"):
        found += [str(p.relative_to(project)) for p in project.rglob(pattern)]
    return found


def check_task(task_dir, target_dir, verbose):
    row = {"id": task_dir.name, "language": "?", "kind": "?", "fail": "-", "pass": "-", "secs": 0.0}
    meta, problems = check_meta(task_dir)
    if meta:
        row["language"] = meta.get("language", "?")
        row["kind"] = meta.get("kind", "?")
    project = task_dir / "project"
    if not project.is_dir():
        problems.append("project/ missing")
    if problems:
        return row, problems
    stray = stray_outputs(project)
    if stray:
        problems.append(f"build outputs committed in project/: {', '.join(sorted(stray))}")

    patch_text = (task_dir / "fix.patch").read_text()
    touched = patched_files(patch_text)
    if set(meta["bug_files"]) != touched:
        problems.append(f"bug_files {sorted(meta['bug_files'])} differ from files in fix.patch {sorted(touched)}")

    with tempfile.TemporaryDirectory(prefix=f"corpus-{task_dir.name}-") as tmp:
        work = Path(tmp) / "project"
        shutil.copytree(project, work)
        code, out, secs = run_tests(meta["language"], work, target_dir)
        row["secs"] += secs
        if code == 0:
            row["fail"] = "NO"
            problems.append("tests pass before the fix (the bug is not exercised)")
        elif code is None:
            row["fail"] = "TIMEOUT"
            problems.append(f"tests before the fix ran past {TEST_TIMEOUT_S} s")
        else:
            row["fail"] = "yes"
        if verbose:
            print(f"--- {task_dir.name}: before the fix (exit {code})\n{out[-3000:]}")

        patch = subprocess.run(
            ["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-d", str(work)],
            input=patch_text,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        if patch.returncode != 0:
            problems.append(f"fix.patch does not apply: {patch.stdout.strip()[-500:]}")
            return row, problems
        code, out, secs = run_tests(meta["language"], work, target_dir)
        row["secs"] += secs
        if code == 0:
            row["pass"] = "yes"
        else:
            row["pass"] = "NO" if code is not None else "TIMEOUT"
            problems.append("tests still fail after the fix:\n" + _indent(out[-2000:]))
        if verbose:
            print(f"--- {task_dir.name}: after the fix (exit {code})\n{out[-3000:]}")
    return row, problems


def _indent(text):
    return "\n".join("      " + line for line in text.splitlines())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated task ids")
    parser.add_argument("--verbose", action="store_true", help="print test output")
    args = parser.parse_args()

    tasks = sorted(p for p in CORPUS.iterdir() if p.is_dir())
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {t.name for t in tasks}
        if unknown:
            sys.exit(f"unknown task ids: {', '.join(sorted(unknown))}")
        tasks = [t for t in tasks if t.name in wanted]
    if not tasks:
        sys.exit(f"no tasks under {CORPUS}")
    if shutil.which("patch") is None:
        sys.exit("`patch` is not installed (apt-get install patch)")

    failures = {}
    rows = []
    with tempfile.TemporaryDirectory(prefix="corpus-cargo-target-") as target_dir:
        for task_dir in tasks:
            row, problems = check_task(task_dir, target_dir, args.verbose)
            rows.append(row)
            if problems:
                failures[row["id"]] = problems
            status = "ok" if not problems else "PROBLEM"
            print(
                f"{row['id']:<32} {row['language']:<7} {row['kind']:<7} "
                f"fails-before={row['fail']:<4} passes-after={row['pass']:<4} {row['secs']:5.1f}s  {status}",
                flush=True,
            )

    counts = {}
    for row in rows:
        key = (row["language"], row["kind"])
        counts[key] = counts.get(key, 0) + 1
    print()
    print("tasks: " + ", ".join(f"{lang}/{kind}={n}" for (lang, kind), n in sorted(counts.items())) + f", total={len(rows)}")
    print(f"checked in {sum(r['secs'] for r in rows):.1f} s of test runs; {len(rows) - len(failures)} ok, {len(failures)} with problems")
    for task_id, problems in failures.items():
        print(f"\n{task_id}:")
        for p in problems:
            print(f"  - {p}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
