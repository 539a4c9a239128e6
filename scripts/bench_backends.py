#!/usr/bin/env python3
"""Prompt and generation speed of the same model and prompt on the test bed's
Ollama and llama-server, measured in one run (stdlib only).

usage: bench_backends.py [--model qwen2.5-coder:0.5b] [--runs 3]

Each server gets one warm-up call (model load), then `--runs` timed calls with
the same ~600-token prompt and a 128-token reply at temperature 0. Prompt
caching is defeated by a unique first line per call. Reported: median prompt
tokens/s, generation tokens/s and time to first token, from each server's own
timings, and the ratio Ollama / llama-server.
"""

import argparse
import json
import statistics
import time
import urllib.request

CODE = "\n".join(
    f"def f{i}(values):\n    total = 0\n    for v in values:\n        total += v * {i}\n    return total\n" for i in range(24)
)


def post(url, body, stream=False):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    return urllib.request.urlopen(req, timeout=900)


def ollama(base, model, prompt):
    body = {"model": model, "stream": True, "messages": [{"role": "user", "content": prompt}],
            "options": {"num_ctx": 4096, "temperature": 0, "num_predict": 128, "seed": 42}}
    t0 = time.time()
    first = None
    last = {}
    with post(f"{base}/api/chat", body) as r:
        for line in r:
            msg = json.loads(line)
            if first is None and msg.get("message", {}).get("content"):
                first = time.time() - t0
            last = msg
    return {
        "prompt_tps": last["prompt_eval_count"] / (last["prompt_eval_duration"] / 1e9),
        "gen_tps": last["eval_count"] / (last["eval_duration"] / 1e9),
        "ttft_s": first,
        "prompt_tokens": last["prompt_eval_count"],
    }


def llama(base, model, prompt):
    body = {"model": model, "stream": True, "temperature": 0, "max_tokens": 128, "seed": 42,
            "messages": [{"role": "user", "content": prompt}]}
    t0 = time.time()
    first = None
    timings = {}
    with post(f"{base}/v1/chat/completions", body) as r:
        for raw in r:
            line = raw.decode().strip()
            if not line.startswith("data:") or line.endswith("[DONE]"):
                continue
            msg = json.loads(line[5:])
            delta = (msg.get("choices") or [{}])[0].get("delta", {}).get("content")
            if first is None and delta:
                first = time.time() - t0
            timings = msg.get("timings", timings)
    return {
        "prompt_tps": timings["prompt_per_second"],
        "gen_tps": timings["predicted_per_second"],
        "ttft_s": first,
        "prompt_tokens": timings["prompt_n"],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="qwen2.5-coder:0.5b")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ollama", default="http://127.0.0.1:11434")
    ap.add_argument("--llama", default="http://127.0.0.1:8080")
    a = ap.parse_args()
    results = {}
    for name, fn, base in (("llama-server", llama, a.llama), ("ollama", ollama, a.ollama)):
        fn(base, a.model, "warm up\n" + CODE[:200])
        runs = [fn(base, a.model, f"run {i} {time.time()}\n{CODE}\nWhich function multiplies by 7?") for i in range(a.runs)]
        results[name] = {k: statistics.median(r[k] for r in runs) for k in ("prompt_tps", "gen_tps", "ttft_s", "prompt_tokens")}
    print(f"model {a.model}, median of {a.runs} runs after a warm-up")
    print("| server | prompt tokens | prompt tok/s | generation tok/s | time to first token |")
    print("|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['prompt_tokens']:.0f} | {r['prompt_tps']:.1f} | {r['gen_tps']:.1f} | {r['ttft_s']:.2f} s |")
    o, l = results["ollama"], results["llama-server"]
    print(f"llama-server / Ollama: prompt {l['prompt_tps'] / o['prompt_tps']:.2f}x, generation {l['gen_tps'] / o['gen_tps']:.2f}x")


if __name__ == "__main__":
    main()
