#!/usr/bin/env bash
# Installs what tinycoder's build and tests need on a fresh Debian machine
# (idempotent, quick when everything is there): Debian packages, pytest, and the
# model test bed's servers and models (scripts/testbed.sh does the heavy part).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { printf '[setup %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

. "$ROOT/scripts/apt.sh"
# cmake and libclang-dev build the embedded backend (llama.cpp, bindgen).
apt_install curl git neovim patch python3-venv nlohmann-json3-dev libstb-dev build-essential cmake libclang-dev
# The hostile-test suite runs again as an unprivileged user, with Debian's python3 and pytest.
apt_install python3-pytest
# The sandbox's Python fixtures run pytest with the machine's python3.
python3 -c 'import pytest' 2>/dev/null || { log "installing pytest"; python3 -m pip install -q pytest; }
command -v cargo >/dev/null || { log "ERROR: cargo not found; install Rust (https://rustup.rs)"; exit 1; }
