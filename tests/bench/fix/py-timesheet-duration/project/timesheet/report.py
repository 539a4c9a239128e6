"""Weekly report: time per project from clock-in/clock-out entries."""
from collections import defaultdict
from datetime import datetime

from .fmt import hms, percent, table


def parse_entries(lines):
    """Lines 'YYYY-MM-DD HH:MM HH:MM project' -> (project, seconds)."""
    entries = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        day, start, end, project = line.split(maxsplit=3)
        t0 = datetime.fromisoformat(f"{day} {start}")
        t1 = datetime.fromisoformat(f"{day} {end}")
        if t1 <= t0:
            raise ValueError(f"entry ends before it starts: {line!r}")
        entries.append((project, (t1 - t0).total_seconds()))
    return entries


def weekly_report(lines):
    totals = defaultdict(float)
    for project, seconds in parse_entries(lines):
        totals[project] += seconds
    grand = sum(totals.values())
    rows = [(p, hms(s), percent(s, grand)) for p, s in sorted(totals.items(), key=lambda kv: -kv[1])]
    rows.append(("total", hms(grand), percent(grand, grand)))
    return table(rows, ("project", "time", "share"))
