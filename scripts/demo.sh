#!/usr/bin/env bash
# Sets everything up and runs the main job: builds tinycoder, starts the real
# model test bed, checks the setup with `tinycoder doctor`, and streams a reply
# from the coder model with `tinycoder chat` about a failing test in
# tests/fixtures/python-failing. (tinycoder does not yet turn this into a patch:
# the agent loop is not part of this version; see README.)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
scripts/setup.sh
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tinycoder/cargo-target}
cargo build --release 2>&1 | tail -n 2
eval "$(scripts/testbed.sh up)"
BIN=$CARGO_TARGET_DIR/release/tinycoder
# The test bed serves small real models; point every role at them.
export TINYCODER_BACKEND__URL=$TINYCODER_TEST_OLLAMA_URL
export TINYCODER_MODELS__PLANNER__NAME=smollm2 TINYCODER_MODELS__CODER__NAME=smollm2
export TINYCODER_MODELS__CRITIC__NAME=gemma3 TINYCODER_MODELS__SUMMARIZER__NAME=smollm2
for r in PLANNER CODER CRITIC SUMMARIZER; do export TINYCODER_MODELS__${r}__NUM_CTX=4096; done
echo "== tinycoder doctor"
"$BIN" doctor || true
echo "== tinycoder chat (streamed from the coder model)"
"$BIN" chat "This Python function should add two numbers but a test fails: def add(a, b): return a - b. Fix it."
echo
