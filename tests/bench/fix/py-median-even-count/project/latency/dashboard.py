"""Text dashboard of per-endpoint latencies."""
from collections import defaultdict

from .stats import summary


def parse_log(lines):
    """Lines like 'GET /users 12.5' -> {'GET /users': [12.5, ...]}."""
    by_endpoint = defaultdict(list)
    for line in lines:
        parts = line.split()
        if len(parts) != 3:
            continue
        method, path, ms = parts
        by_endpoint[f"{method} {path}"].append(float(ms))
    return dict(by_endpoint)


def render(lines):
    rows = []
    for endpoint, samples in sorted(parse_log(lines).items()):
        s = summary(samples)
        rows.append(f"{endpoint:<16} n={s['count']:<4} median={s['median']:.1f} p95={s['p95']:.1f}")
    return rows
