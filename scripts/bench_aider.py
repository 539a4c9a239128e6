#!/usr/bin/env python3
"""Runs the Aider coding agent on the single-file tasks of tests/bench/fix.

Use scripts/bench_aider.sh, which installs Aider into its own venv once and
passes --aider. For each task:

1. copy project/ to a temporary directory, `git init` and commit it;
2. start scripts/bench/llm_proxy.py in front of the model server, logging
   every model call of this task to <out-dir>/<id>.calls.jsonl;
3. run Aider non-interactively through the proxy: whole-file edits, the task's
   bug_files as the files in the chat, `/test` first (Aider's own way of
   putting the failing output into the chat), then "Fix the failing test."
   with --auto-test (it reruns the tests after each edit and retries);
4. afterwards restore the original test files and run the tests: fixed or not.

Results go to one JSON file (per task and a summary); a summary is printed.
Python 3 stdlib only (Aider itself runs from its venv).

    scripts/bench_aider.sh --model qwen2.5-coder:0.5b --tasks py-money-rounding,rs-wallet-overdraw
"""
import argparse
import json
import os
import shutil
import signal
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
sys.path.insert(0, str(ROOT / "tests" / "bench"))
from check_corpus import load_task_toml  # noqa: E402  (shared task.toml reader)

MESSAGE = "Fix the failing test."
# The start of Aider's chat-history summarisation prompt (aider/prompts.py).
SUMMARY_HEAD = "*Briefly* summarize"
TEST_COMMANDS = {
    "python": "python3 -m pytest -q -p no:cacheprovider",
    "rust": "cargo test --offline --quiet",
}
# Files an agent or a build writes that are not edits to the project.
IGNORED_PARTS = {".git", "target", "__pycache__", ".pytest_cache"}
IGNORED_NAMES = {"Cargo.lock", ".gitignore"}


def log(msg):
    print(f"[bench_aider {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def project_files(root):
    """Relative paths of the files that make up the project (no build or agent state)."""
    files = set()
    for p in root.rglob("*"):
        if not p.is_file():
            continue
        rel = p.relative_to(root)
        if IGNORED_PARTS & set(rel.parts) or rel.name in IGNORED_NAMES:
            continue
        if any(part.startswith(".aider") for part in rel.parts):  # Aider's caches and histories
            continue
        if rel.suffix == ".pyc":
            continue
        files.add(rel.as_posix())
    return files


def is_test_file(rel, language):
    name = rel.rsplit("/", 1)[-1]
    if language == "python":
        return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
    return rel.startswith("tests/") and rel.endswith(".rs")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_proxy(upstream, log_path):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(PROXY), "--listen", f"127.0.0.1:{port}", "--upstream", upstream, "--log", str(log_path)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, so stop() signals only it
    )
    line = proc.stdout.readline()
    if not line.startswith("listening on"):
        proc.kill()
        raise RuntimeError(f"the proxy did not start: {line!r}")
    return proc, line.split()[-1]


def stop(proc, grace=5):
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def run_tests(language, workdir, env, timeout=300):
    try:
        proc = subprocess.run(
            TEST_COMMANDS[language],
            shell=True,
            cwd=workdir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
        return proc.returncode == 0, proc.stdout
    except subprocess.TimeoutExpired:
        return False, "test run timed out"


def git(workdir, *args):
    subprocess.run(["git", *args], cwd=workdir, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def write_model_files(cfg_dir, model, max_tokens, ctx):
    """Aider settings for a model it does not know: edit format, reply cap, context size.

    JSON is valid YAML, so the settings file needs no YAML library here."""
    name = f"openai/{model}"
    settings = cfg_dir / "model-settings.yml"
    settings.write_text(json.dumps([{
        "name": name,
        "edit_format": "whole",
        "extra_params": {"max_tokens": max_tokens},
    }], indent=2))
    metadata = cfg_dir / "model-metadata.json"
    metadata.write_text(json.dumps({name: {
        "max_input_tokens": ctx,
        "max_tokens": max_tokens,
        "max_output_tokens": max_tokens,
        "input_cost_per_token": 0.0,
        "output_cost_per_token": 0.0,
        "litellm_provider": "openai",
        "mode": "chat",
    }}, indent=2))
    return settings, metadata


def summarise_calls(path):
    calls = []
    if path.exists():
        calls = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    # Calls cut off by the wall-clock cap have no token counts: they count as
    # calls but stay out of the token statistics rather than counting as zero.
    counted = [c for c in calls if c.get("prompt_tokens") is not None]
    prompts = [c["prompt_tokens"] for c in counted]
    completions = [c.get("completion_tokens") or 0 for c in counted]
    return {
        "calls": len(calls),
        "counted_calls": len(counted),
        # Aider folds long chat history with extra calls to the (weak) model.
        "summary_calls": sum(1 for c in calls if (c.get("first_message_head") or "").startswith(SUMMARY_HEAD)),
        "failed_calls": sum(1 for c in calls if (c.get("status") or 0) >= 400),
        # Cut off by the wall-clock cap: no token counts arrived for these.
        "aborted_calls": sum(1 for c in calls if c.get("aborted")),
        "prompt_tokens_max": max(prompts, default=0),
        "prompt_tokens_mean": round(statistics.mean(prompts), 1) if prompts else 0,
        "prompt_tokens_total": sum(prompts),
        "completion_tokens_total": sum(completions),
        "model_seconds": round(sum(c.get("seconds") or 0 for c in calls), 2),
    }


def run_task(task_dir, meta, args, work_root, out_dir, env_base):
    task_id = task_dir.name
    language = meta["language"]
    work = work_root / task_id / "project"
    shutil.copytree(task_dir / "project", work)
    git(work, "init", "-q")
    git(work, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "add", "-A")
    git(work, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "task")
    before = project_files(work)

    calls_log = out_dir / f"{task_id}.calls.jsonl"
    calls_log.unlink(missing_ok=True)
    load_file = work_root / task_id / "load.txt"
    load_file.write_text("/test\n")
    transcript = out_dir / f"{task_id}.aider.md"
    transcript.unlink(missing_ok=True)

    test_cmd = TEST_COMMANDS[language]
    env = dict(env_base)
    proxy, proxy_url = start_proxy(args.upstream, calls_log)
    cmd = [
        args.aider,
        "--model", f"openai/{args.model}",
        "--openai-api-base", f"{proxy_url}/v1",
        "--openai-api-key", "dummy",
        "--model-settings-file", str(args.settings_file),
        "--model-metadata-file", str(args.metadata_file),
        "--edit-format", "whole",
        "--test-cmd", test_cmd,
        "--auto-test",
        "--yes-always",
        "--no-auto-commits",
        "--no-dirty-commits",
        "--no-gitignore",
        "--no-analytics",
        "--no-check-update",
        "--no-show-release-notes",
        "--no-show-model-warnings",
        "--no-check-model-accepts-settings",
        "--no-detect-urls",
        "--no-fancy-input",
        "--no-pretty",
        "--no-notifications",
        "--no-restore-chat-history",
        "--timeout", str(args.wall),
        "--chat-history-file", str(transcript),
        "--input-history-file", str(work_root / task_id / "input.history"),
        "--load", str(load_file),
        "--message", f"{MESSAGE} {meta['description']}" if args.describe else MESSAGE,
        *meta["bug_files"],
    ]
    log(f"{task_id}: running aider ({args.model})")
    t0 = time.monotonic()
    timed_out = False
    with open(out_dir / f"{task_id}.aider.log", "w") as out:
        proc = subprocess.Popen(
            cmd, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=args.wall)
        except subprocess.TimeoutExpired:
            timed_out = True
            stop(proc)
    seconds = round(time.monotonic() - t0, 1)
    # Let the proxy write the record of a call that was cut off.
    time.sleep(0.5)
    stop(proxy)

    after = project_files(work)
    invented = sorted(after - before)
    changed = sorted(
        rel for rel in before & after
        if (work / rel).read_bytes() != (task_dir / "project" / rel).read_bytes()
    )
    deleted = sorted(before - after)
    # Judge with the original tests: an agent that edits a test has not fixed the code.
    touched_tests = [rel for rel in changed + deleted if is_test_file(rel, language)]
    for rel in touched_tests:
        shutil.copy2(task_dir / "project" / rel, work / rel)
    fixed, test_output = run_tests(language, work, env)
    result = {
        "id": task_id,
        "language": language,
        "fixed": fixed,
        "timed_out": timed_out,
        "exit_code": proc.returncode if not timed_out else None,
        "seconds": seconds,
        "invented_files": invented,
        "invented_count": len(invented),
        "changed_files": changed,
        "deleted_files": deleted,
        "touched_test_files": touched_tests,
        "changed_bug_files": [rel for rel in changed if rel in meta["bug_files"]],
        **summarise_calls(calls_log),
    }
    if not fixed:
        result["final_test_tail"] = test_output[-1500:]
    if not args.keep:
        shutil.rmtree(work_root / task_id, ignore_errors=True)
    return result


def summary_of(results):
    fixed = [r for r in results if r["fixed"]]

    def mean(values):
        values = list(values)
        return round(statistics.mean(values), 1) if values else None

    return {
        "tasks": len(results),
        "fixed": len(fixed),
        "fix_rate": round(len(fixed) / len(results), 3) if results else None,
        "mean_tokens_per_fixed_task": mean(r["prompt_tokens_total"] + r["completion_tokens_total"] for r in fixed),
        "mean_prompt_tokens_per_fixed_task": mean(r["prompt_tokens_total"] for r in fixed),
        "mean_calls": mean(r["calls"] for r in results),
        "mean_summary_calls": mean(r.get("summary_calls", 0) for r in results),
        "mean_seconds": mean(r["seconds"] for r in results),
        "mean_prompt_tokens_per_call": (
            round(sum(r["prompt_tokens_total"] for r in results) / counted, 1)
            if (counted := sum(r.get("counted_calls", 0) for r in results)) else None
        ),
        "aborted_calls": sum(r.get("aborted_calls", 0) for r in results),
        "max_prompt_tokens": max((r["prompt_tokens_max"] for r in results), default=0),
        "invented_files": sum(r["invented_count"] for r in results),
        "tasks_with_invented_files": sum(1 for r in results if r["invented_count"]),
        "timeouts": sum(1 for r in results if r["timed_out"]),
        "touched_tests": sum(1 for r in results if r["touched_test_files"]),
        "by_language": {
            lang: f"{sum(1 for r in results if r['language'] == lang and r['fixed'])}/"
                  f"{sum(1 for r in results if r['language'] == lang)}"
            for lang in sorted({r["language"] for r in results})
        },
    }


def print_table(results, summary):
    print(f"{'task':<30} {'fixed':<5} {'calls':>5} {'p.max':>6} {'p.mean':>7} {'p.total':>8} {'compl':>6} {'secs':>6} {'inv':>3} {'t/o':>3}")
    for r in results:
        print(
            f"{r['id']:<30} {'yes' if r['fixed'] else 'no':<5} {r['calls']:>5} {r['prompt_tokens_max']:>6} "
            f"{r['prompt_tokens_mean']:>7} {r['prompt_tokens_total']:>8} {r['completion_tokens_total']:>6} "
            f"{r['seconds']:>6} {r['invented_count']:>3} {'yes' if r['timed_out'] else '':>3}"
        )
    s = summary
    print()
    print(f"fix rate: {s['fixed']}/{s['tasks']} ({(s['fix_rate'] or 0) * 100:.0f}%)  by language: {s['by_language']}")
    print(f"mean tokens per fixed task: {s['mean_tokens_per_fixed_task']}  mean calls: {s['mean_calls']}  "
          f"(of which history summaries: {s['mean_summary_calls']})  "
          f"mean seconds: {s['mean_seconds']}  mean prompt tokens per call: {s['mean_prompt_tokens_per_call']}")
    print(f"invented files: {s['invented_files']} in {s['tasks_with_invented_files']} tasks  timeouts: {s['timeouts']}  "
          f"calls cut off by the cap: {s['aborted_calls']}  "
          f"tasks where tests were edited: {s['touched_tests']}")


def merge(paths, out):
    """Combine runs (e.g. one cut short and its continuation); the later run of a task wins."""
    by_id, header = {}, {}
    for path in map(Path, paths):
        data = json.loads(path.read_text())
        header = {k: v for k, v in data.items() if k not in ("summary", "tasks")}
        for task in data["tasks"]:
            task.update(summarise_calls(path.parent / f"{task['id']}.calls.jsonl"))
            by_id[task["id"]] = task
    results = list(by_id.values())
    summary = summary_of(results)
    if out:
        Path(out).write_text(json.dumps({**header, "merged_from": paths, "summary": summary, "tasks": results}, indent=2))
    print_table(results, summary)
    return 0


def main():
    parser = argparse.ArgumentParser(description="Run Aider on the tinycoder fix corpus.")
    parser.add_argument("--aider", help="path of the aider executable (required unless --merge)")
    parser.add_argument("--model", default="qwen2.5-coder:0.5b", help="model id on the server")
    parser.add_argument("--upstream", default="http://127.0.0.1:8080", help="OpenAI-compatible server (no /v1)")
    parser.add_argument("--tasks", help="comma-separated task ids (default: every single-file task)")
    parser.add_argument("--include-multi", action="store_true", help="also run the multi-file tasks")
    parser.add_argument("--wall", type=int, default=600, help="wall-clock cap per task in seconds")
    parser.add_argument("--max-tokens", type=int, default=2000, help="reply cap per model call")
    parser.add_argument("--ctx", type=int, default=8192, help="the server's context window per request")
    parser.add_argument("--out", help="results JSON (default: /tmp/bench-aider/<model>/results.json)")
    parser.add_argument("--keep", action="store_true", help="keep the working copies")
    parser.add_argument("--describe", action="store_true",
                        help="add the task's description (the user's words) to the message")
    parser.add_argument("--merge", nargs="+", metavar="RESULTS_JSON",
                        help="no run: recompute the figures of earlier runs (from the call logs beside "
                             "each results file) and combine them into --out")
    args = parser.parse_args()
    if args.merge:
        return merge(args.merge, args.out)
    if not args.aider:
        parser.error("--aider is required (scripts/bench_aider.sh passes it)")

    up = args.upstream.rstrip("/")
    try:
        import urllib.request

        with urllib.request.urlopen(up + "/v1/models", timeout=10) as resp:
            served = [m["id"] for m in json.loads(resp.read()).get("data", [])]
    except OSError as exc:
        sys.exit(f"the model server at {up} is not reachable ({exc}); start the test bed first")
    if args.model not in served:
        sys.exit(f"model `{args.model}` is not served at {up} (served: {', '.join(served)})")

    tasks = []
    for task_dir in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        meta = load_task_toml(task_dir / "task.toml")
        if meta["kind"] != "single" and not args.include_multi:
            continue
        tasks.append((task_dir, meta))
    if args.tasks:
        wanted = args.tasks.split(",")
        known = {t.name: (t, m) for t, m in tasks}
        missing = [w for w in wanted if w not in known]
        if missing:
            sys.exit(f"unknown (or multi-file without --include-multi) task ids: {', '.join(missing)}")
        tasks = [known[w] for w in wanted]

    out_path = Path(args.out) if args.out else Path("/tmp/bench-aider") / args.model.replace(":", "-") / "results.json"
    out_dir = out_path.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    work_root = Path(tempfile.mkdtemp(prefix="bench-aider-"))
    args.settings_file, args.metadata_file = write_model_files(work_root, args.model, args.max_tokens, args.ctx)

    env = dict(os.environ)
    env.update({
        # No network beyond the model server: litellm's price list is read locally.
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "AIDER_ANALYTICS": "false",
        "PYTHONDONTWRITEBYTECODE": "1",
        "CARGO_TARGET_DIR": str(work_root / "cargo-target"),
        "CARGO_TERM_COLOR": "never",
        "NO_COLOR": "1",
        "TERM": "dumb",
    })
    aider_version = subprocess.run([args.aider, "--version"], capture_output=True, text=True, env=env).stdout.strip()
    log(f"{len(tasks)} tasks, {aider_version}, model {args.model}, results in {out_path}")
    results = []
    started = time.time()
    for task_dir, meta in tasks:
        try:
            result = run_task(task_dir, meta, args, work_root, out_dir, env)
        except Exception as exc:  # one broken task must not lose the others' results
            log(f"{task_dir.name}: harness error: {exc}")
            result = {"id": task_dir.name, "language": meta["language"], "fixed": False, "timed_out": False,
                      "seconds": 0, "invented_count": 0, "invented_files": [], "touched_test_files": [],
                      "calls": 0, "prompt_tokens_max": 0, "prompt_tokens_mean": 0, "prompt_tokens_total": 0,
                      "completion_tokens_total": 0, "harness_error": str(exc)}
        results.append(result)
        log(f"{result['id']}: fixed={result['fixed']} calls={result['calls']} "
            f"prompt_total={result['prompt_tokens_total']} seconds={result['seconds']}")
        # Written after every task so that a long run can be read while it goes on.
        out_path.write_text(json.dumps({
            "agent": "aider",
            "aider": aider_version,
            "model": args.model,
            "upstream": up,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
            "settings": {"edit_format": "whole", "max_tokens": args.max_tokens, "wall_s": args.wall,
                         "message": MESSAGE, "ctx": args.ctx},
            "summary": summary_of(results),
            "tasks": results,
        }, indent=2))
    if not args.keep:
        shutil.rmtree(work_root, ignore_errors=True)
    print_table(results, summary_of(results))
    print(f"\nresults: {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
