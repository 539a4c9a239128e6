#!/usr/bin/env python3
"""Checks docs/architecture.md against the tree of server/src/.

Fails (exit 1, one line per problem) when:
  - the file has 400 lines or more;
  - a path it names in backticks does not exist;
  - a module of server/src/ is named nowhere in it.

What counts as a path: an inline `code span` (outside fenced blocks) made of
letters, digits, `_`, `-`, `.` and `/` that either ends in `.rs`, or holds a
`/` and starts with a folder of server/src/, a top-level entry of the
repository, `server`, or a sub-folder of the current section's folder. So
`agent/router.rs`, `lsp/`, `server/src/index/store.rs`, `prompts/` and
`docs/benchmarks.md` are paths; `workspace/applyEdit`, `tinycoder/chat` and
`prompts/*.md` (a glob) are not.

How a path is resolved, first match wins: against each folder the current
section's heading names, then server/src/, then server/, then the repository
root. A section is the text under a `###` heading; its folders are the
backticked folders in that heading (e.g. "### `server/src/sandbox/`,
`server/src/sandbox/test_parse/`"), so a bare `runner.rs` under the
`store/` heading is store/runner.rs and under the `sandbox/` heading
sandbox/runner.rs. A `##` heading ends the section.

What must be named: every .rs file under server/src/ except mod.rs (covered
by its folder), tests.rs and *_tests.rs, and every folder under server/src/.
A module is named when some backticked path (headings included) resolves to
it, e.g. `agent/plan/run.rs` anywhere, or a bare `run.rs` in the section of
`agent/plan/`.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "server" / "src"
DOC = ROOT / "docs" / "architecture.md"
MAX_LINES = 400

SPAN = re.compile(r"`([^`\n]+)`")
PATHLIKE = re.compile(r"^[A-Za-z0-9_.\-/]+$")


def modules():
    """Every module that must be named: paths relative to server/src/ (folders end in /)."""
    out = set()
    for p in SRC.rglob("*"):
        rel = p.relative_to(SRC).as_posix()
        if p.is_dir():
            out.add(rel + "/")
        elif p.suffix == ".rs" and p.name != "mod.rs" and p.name != "tests.rs" and not p.name.endswith("_tests.rs"):
            out.add(rel)
    return out


def is_path(token, section):
    if not PATHLIKE.match(token) or token.startswith("/"):
        return False
    if token.endswith(".rs"):
        return True
    if "/" not in token:
        return False
    first = token.split("/", 1)[0]
    if first in ("server", "."):
        return True
    if (SRC / first).is_dir() or (ROOT / first).exists():
        return True
    return any((SRC / folder / first).is_dir() for folder in section)


def resolve(token, section):
    """The existing path `token` names, as (base, path), or None."""
    token = token.rstrip("/") if token != "/" else token
    bases = [SRC / f for f in section] + [SRC, ROOT / "server", ROOT]
    for base in bases:
        candidate = base / token
        if candidate.exists():
            return candidate
    return None


def main():
    text = DOC.read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    problems = []
    if len(lines) >= MAX_LINES:
        problems.append(f"docs/architecture.md has {len(lines)} lines; keep it under {MAX_LINES}")

    named = set()
    section = []
    fenced = False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith("## "):
            section = []
        elif line.startswith("### "):
            section = []
            for token in SPAN.findall(line):
                rel = token[len("server/src/"):] if token.startswith("server/src/") else token
                if rel.endswith("/") and (SRC / rel).is_dir():
                    section.append(rel.rstrip("/"))
        for token in SPAN.findall(line):
            if not is_path(token, section):
                continue
            found = resolve(token, section)
            if found is None:
                where = f" (section of {', '.join(f + '/' for f in section)})" if section else ""
                problems.append(f"line {number}: `{token}` does not exist{where}")
                continue
            try:
                rel = found.resolve().relative_to(SRC.resolve()).as_posix()
            except ValueError:
                continue
            named.add(rel + "/" if found.is_dir() else rel)

    for module in sorted(modules() - named):
        problems.append(f"server/src/{module} is named nowhere in docs/architecture.md")

    if problems:
        print("check_codemap: docs/architecture.md does not match server/src/:")
        for p in problems:
            print(f"  {p}")
        return 1
    print(f"check_codemap: ok ({len(lines)} lines, {len(modules())} modules named)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
