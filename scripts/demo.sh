#!/usr/bin/env bash
# The main job: sets everything up, then fixes the failing test of the example
# project `examples/cart` (a copy of it) through the language server, as an
# editor would: run the tests, take the quick-fix on the failing test's
# diagnostic, preview the patch the coder model wrote (a diff), accept it, run
# the tests again. The model is the shipped default coder, Qwen2.5-Coder 1.5B,
# served by the test bed's Ollama. When the model does not manage, the
# attempts and why each failed are shown instead.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
scripts/setup.sh
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tinycoder/cargo-target}
cargo build --release 2>&1 | tail -n 2 &
build=$!
eval "$(TINYCODER_TESTBED_SERVERS=ollama TINYCODER_TESTBED_QWEN=${TINYCODER_TESTBED_QWEN:-1.5b} scripts/testbed.sh up)"
wait "$build"
BIN=$CARGO_TARGET_DIR/release/tinycoder
export TINYCODER_BACKEND__URL=$TINYCODER_TEST_OLLAMA_URL
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r examples/cart "$work/cart"
echo "== tinycoder doctor"
(cd "$work/cart" && "$BIN" doctor) || true
echo "== fixing examples/cart (a copy in $work/cart) through the language server"
python3 scripts/lsp_demo.py "$BIN" "$work/cart"
