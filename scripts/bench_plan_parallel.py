#!/usr/bin/env python3
"""Does running independent plan steps at once pay off? Runs the same 4-step
plan (two independent chains: tax -> cart, stock -> orders) with
`runtime.parallel_edits` = 1 and 2, alternating, and prints the wall time of
each run, the medians and their ratio.

    python3 scripts/bench_plan_parallel.py [--tinycoder BIN] [--model M] [--runs N]

The plan is given (`tinycoder run --plan`), so the planner does not vary; each
step is a real coder call on the test bed's llama-server (4 slots) and real
pytest runs in the sandbox. Start the test bed first (`scripts/testbed.sh up`).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "tests", "bench", "plan", "parallel")
REQUEST = "Document the shop's four functions."


def run_once(binary, model, url, parallel):
    home = tempfile.mkdtemp(prefix="tc-plan-")
    try:
        project = os.path.join(home, "shop")
        shutil.copytree(FIXTURE, project, ignore=shutil.ignore_patterns("plan.json", "__pycache__"))
        env = dict(os.environ)
        env.update({
            "TINYCODER_CACHE_DIR": os.path.join(home, "cache"),
            "TINYCODER_DATA_DIR": os.path.join(home, "data"),
            "TINYCODER_CONFIG": os.path.join(home, "none.toml"),
            "TINYCODER_BACKEND__KIND": "openai",
            "TINYCODER_BACKEND__URL": url,
            "TINYCODER_RUNTIME__CRITIC": "false",
            "TINYCODER_RUNTIME__PARALLEL_EDITS": str(parallel),
            "RUST_LOG": "warn",
        })
        for role in ("PLANNER", "CODER", "CRITIC", "SUMMARIZER"):
            env[f"TINYCODER_MODELS__{role}__NAME"] = model
        cmd = [binary, "run", REQUEST, "--plan", os.path.join(FIXTURE, "plan.json"), "--json"]
        started = time.monotonic()
        out = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True)
        seconds = time.monotonic() - started
        try:
            report = json.loads(out.stdout)
        except json.JSONDecodeError:
            sys.exit(f"tinycoder printed no report (exit {out.returncode}):\n{out.stderr[-2000:]}")
        steps = [(s["id"], s["state"], round(s["duration_ms"] / 1000, 1)) for s in report.get("steps", [])]
        return seconds, report["status"], report["model_calls"], steps
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tinycoder", default=os.path.expanduser("~/.cache/tinycoder/cargo-target/release/tinycoder"))
    ap.add_argument("--model", default="qwen2.5-coder:0.5b")
    ap.add_argument("--url", default=os.environ.get("TINYCODER_TEST_OPENAI_URL", "http://127.0.0.1:8080"))
    ap.add_argument("--runs", type=int, default=3, help="runs per setting")
    args = ap.parse_args()
    times = {1: [], 2: []}
    for i in range(args.runs):
        for parallel in (1, 2):
            seconds, status, calls, steps = run_once(args.tinycoder, args.model, args.url, parallel)
            times[parallel].append(seconds)
            print(f"run {i + 1} parallel_edits={parallel}: {seconds:.1f} s, {status}, {calls} model calls, steps {steps}", flush=True)
    m1, m2 = statistics.median(times[1]), statistics.median(times[2])
    print(f"\nmedian wall time: parallel_edits=1 {m1:.1f} s (min {min(times[1]):.1f}, max {max(times[1]):.1f}); "
          f"parallel_edits=2 {m2:.1f} s (min {min(times[2]):.1f}, max {max(times[2]):.1f}); speed-up {m1 / m2:.2f}x")


if __name__ == "__main__":
    main()
