"""Copies changed files from a source tree to a destination tree."""
import shutil
from pathlib import Path


def needs_copy(src: Path, dst: Path):
    if not dst.exists():
        return True
    s, d = src.stat(), dst.stat()
    return s.st_size != d.st_size or int(s.st_mtime) > int(d.st_mtime)


def run_backup(source, dest, reporter, exclude=()):
    source, dest = Path(source), Path(dest)
    for src in sorted(p for p in source.rglob("*") if p.is_file()):
        rel = src.relative_to(source)
        if any(rel.match(pattern) for pattern in exclude):
            continue
        dst = dest / rel
        try:
            if not needs_copy(src, dst):
                reporter.skipped_file(rel)
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
            reporter.copied_file(rel, src.stat().st_size)
        except OSError as exc:
            reporter.error(rel, exc.strerror or str(exc))
    return reporter.finish()
