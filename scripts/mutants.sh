#!/usr/bin/env bash
# Mutation testing of the core modules with cargo-mutants, one module group at a
# time, each with the tests that cover it (lib unit tests by module path, plus the
# integration tests named). Slow on a laptop (about 18 s a mutant on two cores), so
# it samples: SHARDS=N runs every Nth mutant of the larger groups (round-robin).
# Results: $OUT/<group>/mutants.out/{caught,missed,unviable}.txt.
#
#   scripts/mutants.sh            # the sample (about 200 mutants, 1 hour on 2 cores)
#   ITERATE=1 scripts/mutants.sh  # again, only the mutants the last run missed
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked
OUT=${OUT:-${HOME}/.cache/tinycoder/mutants}
# A target dir of its own: the mutated trees never touch the main build.
export CARGO_TARGET_DIR=${MUTANTS_TARGET_DIR:-${HOME}/.cache/tinycoder/mutants-target}
export CARGO_PROFILE_DEV_DEBUG=0
extra=()
[ "${ITERATE:-0}" = 1 ] && extra+=(--iterate)
run() {
  local name=$1; shift
  mkdir -p "$OUT"
  cargo mutants --no-default-features "${extra[@]}" -o "$OUT/$name" "$@" || true
  echo "$name: $(wc -l < "$OUT/$name/mutants.out/caught.txt") caught, $(wc -l < "$OUT/$name/mutants.out/missed.txt") missed" >&2
}
run replay -f server/src/store/replay.rs -- --lib --test store_bus -- store:: concurrent a_second a_full subscribers unfinished periodic replay
run permission -f 'server/src/sandbox/permission*.rs' --shard 0/3 -- --lib --test permissions_corpus -- sandbox::permission every listed the_corpus verdicts an_effect
run text -f 'server/src/text/*.rs' --shard 0/3 -- --lib -- text::
run edits -f 'server/src/edits/**/*.rs' --shard 0/5 -- --lib -- edits:: lsp::patch_edit
# context_budget counts with the test bed's tokenizers: start it first (scripts/testbed.sh up).
run context -f 'server/src/context/*.rs' --shard 0/5 -- --lib --test context_budget -- context estimate
