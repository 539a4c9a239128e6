#!/usr/bin/env python3
"""Start-up time of `tinycoder config` (configuration loaded and validated) against
`tinycoder --help` (nothing loaded), as wall-time percentiles over N runs.

Usage: scripts/bench_startup.py [BINARY] [RUNS]
"""
import os
import subprocess
import sys
import tempfile
import time


def percentiles(cmd, runs, env):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.95))]


def main():
    cache = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/tinycoder/cargo-target"))
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(cache, "release", "tinycoder")
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    with tempfile.TemporaryDirectory() as home:
        workspace = os.path.join(home, "ws")
        os.mkdir(workspace)
        env = dict(os.environ)
        env.update(
            TINYCODER_DATA_DIR=os.path.join(home, "data"),
            TINYCODER_CACHE_DIR=os.path.join(home, "cache"),
            TINYCODER_CONFIG=os.path.join(home, "none.toml"),
        )
        base = percentiles([binary, "--help"], runs, env)
        config = percentiles([binary, "--workspace", workspace, "config"], runs, env)
    print(f"tinycoder --help: p50 {base[0]:.1f} ms, p95 {base[1]:.1f} ms")
    print(f"tinycoder config: p50 {config[0]:.1f} ms, p95 {config[1]:.1f} ms ({config[0] / base[0]:.1f}x --help p50)")


if __name__ == "__main__":
    main()
