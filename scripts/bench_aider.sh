#!/usr/bin/env bash
# Runs the Aider coding agent on the single-file tasks of tests/bench/fix for a
# side-by-side comparison with `tinycoder bench fix`. Aider lives in its own
# venv (created once, reused) so it never touches the project's Python.
#
#   scripts/bench_aider.sh [--model qwen2.5-coder:0.5b] [--tasks id,id] [--out FILE] ...
#   scripts/bench_aider.sh --install-only
#
# Every argument except --install-only goes to scripts/bench_aider.py.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${TINYCODER_AIDER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/tinycoder/aider-venv}
# Pinned so that figures from different days compare.
AIDER_VERSION=${TINYCODER_AIDER_VERSION:-0.86.2}
log() { printf '[bench_aider %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [ ! -x "$VENV/bin/aider" ] || ! "$VENV/bin/aider" --version 2>/dev/null | grep -q "$AIDER_VERSION"; then
  log "installing aider-chat $AIDER_VERSION into $VENV (once)"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q "aider-chat==$AIDER_VERSION"
  # pytest for the projects' test command, inside the same venv as aider's --test-cmd.
  "$VENV/bin/python" -m pip install -q pytest
fi
if [ "${1:-}" = --install-only ]; then
  "$VENV/bin/aider" --version
  exit 0
fi
exec python3 "$ROOT/scripts/bench_aider.py" --aider "$VENV/bin/aider" "$@"
