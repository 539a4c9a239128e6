#!/usr/bin/env python3
"""tinycoder and Aider on the same corpus, the same model and the same server,
task by task in turn (so both meet the same machine load), each through the
logging proxy (so both have their tokens counted the same way).

usage: bench_compare.py --model qwen2.5-coder:0.5b [--tasks a,b] [--out DIR]
                        [--tinycoder PATH] [--upstream http://127.0.0.1:8080]
                        [--skip-aider] [--format whole_symbol] [--describe]
                        [--roles critic=qwen2.5-coder:0.5b,summarizer=...]

--roles gives tinycoder a model per role (the roles it does not name keep
--model); Aider has no roles and always uses --model.

Writes DIR/<agent>-<task>.json and DIR/summary.md (a table per agent).
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "bench" / "fix"
PROXY = ROOT / "scripts" / "bench" / "llm_proxy.py"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def single_tasks():
    out = []
    for d in sorted(CORPUS.iterdir()):
        toml = d / "task.toml"
        if toml.is_file() and 'kind = "single"' in toml.read_text():
            out.append(d.name)
    return out


def with_proxy(upstream, log_path, fn):
    port = free_port()
    proxy = subprocess.Popen([sys.executable, str(PROXY), "--listen", f"127.0.0.1:{port}", "--upstream", upstream,
                              "--log", str(log_path)], stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        return fn(f"http://127.0.0.1:{port}")
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)


def calls(log_path):
    if not log_path.exists():
        return []
    return [json.loads(l) for l in log_path.read_text().splitlines() if l.strip()]


def run_tinycoder(binary, task, model, fmt, url, out_dir, describe, roles):
    result = out_dir / f"tinycoder-{task}.json"
    env = {**os.environ, "TINYCODER_BACKEND__KIND": "openai", "TINYCODER_BACKEND__URL": url, "RUST_LOG": "warn"}
    home = tempfile.mkdtemp(prefix="bench-tc-")
    env.update({"TINYCODER_CACHE_DIR": f"{home}/cache", "TINYCODER_DATA_DIR": f"{home}/data",
                "TINYCODER_CONFIG": f"{home}/none.toml"})
    args = [binary, "bench", "fix", str(CORPUS / task), "--json", str(result)]
    if roles:
        # `bench fix --model` would set every role; per-role names go through the environment.
        for role in ("planner", "coder", "critic", "summarizer"):
            env[f"TINYCODER_MODELS__{role.upper()}__NAME"] = roles.get(role, model)
    else:
        args += ["--model", model]
    if fmt:
        args += ["--format", fmt]
    if describe:
        args.append("--describe")
    t0 = time.time()
    subprocess.run(args, env=env, cwd=home, stdout=subprocess.DEVNULL)
    data = json.loads(result.read_text())[0] if result.exists() else {"fixed": False, "failure": "no result"}
    data["wall_s"] = time.time() - t0
    return data


def run_aider(task, model, url, out_dir, describe):
    result = out_dir / f"aider-{task}.json"
    subprocess.run([str(ROOT / "scripts" / "bench_aider.sh"), "--model", model, "--tasks", task, "--upstream", url,
                    "--out", str(result)] + (["--describe"] if describe else []), stdout=subprocess.DEVNULL)
    if not result.exists():
        return {"fixed": False, "failure": "no result"}
    data = json.loads(result.read_text())
    tasks = data.get("tasks", data if isinstance(data, list) else [])
    return tasks[0] if tasks else {"fixed": False}


def summary(rows):
    n = max(len(rows), 1)
    fixed = [r for r in rows if r["fixed"]]
    per_call = [c for r in rows for c in r["prompt_tokens"]]
    return {
        "tasks": len(rows),
        "fixed": len(fixed),
        "fix_rate": len(fixed) / n,
        "calls_per_task": sum(r["calls"] for r in rows) / n,
        "prompt_tokens_per_call_max": max(per_call, default=0),
        "prompt_tokens_per_call_mean": statistics.mean(per_call) if per_call else 0,
        "prompt_tokens_per_fixed_task": statistics.mean([sum(r["prompt_tokens"]) for r in fixed]) if fixed else 0,
        "seconds_per_task": statistics.mean([r["seconds"] for r in rows]) if rows else 0,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="qwen2.5-coder:0.5b")
    ap.add_argument("--tasks", default="")
    ap.add_argument("--out", default="/tmp/bench-compare")
    ap.add_argument("--tinycoder", default=str(Path.home() / ".cache/tinycoder/cargo-target/release/tinycoder"))
    ap.add_argument("--upstream", default="http://127.0.0.1:8080")
    ap.add_argument("--skip-aider", action="store_true")
    ap.add_argument("--format", default="")
    ap.add_argument("--describe", action="store_true",
                    help="give both agents each task's description as the user's words")
    ap.add_argument("--roles", default="", help="ROLE=MODEL,… for tinycoder (the others keep --model)")
    a = ap.parse_args()
    roles = dict(r.split("=", 1) for r in a.roles.split(",") if r)
    out_dir = Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    tasks = [t for t in a.tasks.split(",") if t] or single_tasks()
    rows = {"tinycoder": [], "aider": []}
    for task in tasks:
        log = out_dir / f"tinycoder-{task}.calls.jsonl"
        log.unlink(missing_ok=True)
        tc = with_proxy(a.upstream, log, lambda url: run_tinycoder(a.tinycoder, task, a.model, a.format, url, out_dir, a.describe, roles))
        c = [x for x in calls(log) if not x.get("aborted")]
        rows["tinycoder"].append({"task": task, "fixed": bool(tc.get("fixed")), "calls": len(c),
                                  "prompt_tokens": [x.get("prompt_tokens") or 0 for x in c],
                                  "seconds": tc.get("seconds", tc.get("wall_s", 0))})
        print(f"{task}: tinycoder {'FIXED' if tc.get('fixed') else 'not fixed'} ({len(c)} calls, {tc.get('seconds', 0):.0f} s)", flush=True)
        if not a.skip_aider:
            ad = run_aider(task, a.model, a.upstream, out_dir, a.describe)
            ac = [x for x in calls(out_dir / f"{task}.calls.jsonl") if x.get("prompt_tokens") is not None]
            rows["aider"].append({"task": task, "fixed": bool(ad.get("fixed")), "calls": ad.get("calls", len(ac)),
                                  "prompt_tokens": [x["prompt_tokens"] for x in ac], "seconds": ad.get("seconds", 0),
                                  "invented_files": ad.get("invented_count", 0)})
            print(f"{task}: aider {'FIXED' if ad.get('fixed') else 'not fixed'} ({ad.get('calls', 0)} calls, {ad.get('seconds', 0):.0f} s)", flush=True)
        (out_dir / "rows.json").write_text(json.dumps(rows, indent=1))
    lines = [f"model {a.model}{' (' + a.roles + ')' if roles else ''}, {len(tasks)} single-file tasks, same server, tasks in turn",
             "| agent | fixed | calls / task | prompt tokens / call (max, mean) | prompt tokens / fixed task | s / task |",
             "|---|---|---|---|---|---|"]
    for agent, r in rows.items():
        if not r:
            continue
        s = summary(r)
        lines.append(f"| {agent} | {s['fixed']}/{s['tasks']} ({100 * s['fix_rate']:.0f} %) | {s['calls_per_task']:.2f} | "
                     f"{s['prompt_tokens_per_call_max']}, {s['prompt_tokens_per_call_mean']:.0f} | "
                     f"{s['prompt_tokens_per_fixed_task']:.0f} | {s['seconds_per_task']:.0f} |")
    (out_dir / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
