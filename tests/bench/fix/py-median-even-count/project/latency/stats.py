"""Order statistics over latency samples (milliseconds)."""
import math


def median(samples):
    if not samples:
        raise ValueError("median of no samples")
    ordered = sorted(samples)
    mid = len(ordered) // 2
    return ordered[mid]


def percentile(samples, p):
    """Nearest-rank percentile, p in (0, 100]."""
    if not samples:
        raise ValueError("percentile of no samples")
    if not 0 < p <= 100:
        raise ValueError("p must be in (0, 100]")
    ordered = sorted(samples)
    rank = math.ceil(p / 100 * len(ordered))
    return ordered[rank - 1]


def summary(samples):
    return {
        "count": len(samples),
        "min": min(samples),
        "median": median(samples),
        "p95": percentile(samples, 95),
        "max": max(samples),
    }
