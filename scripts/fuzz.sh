#!/usr/bin/env bash
# Runs every fuzz target (or those named) one at a time for SECONDS each (default 600) under
# `nice -n 19` (FUZZ_NICE sets another level), with libFuzzer's malloc and RSS limits so that
# an input making a decoder allocate far more than it justifies is a finding. Builds once
# (`cargo fuzz build -O`, skipped with FUZZ_NO_BUILD=1) and runs the built binaries, so that
# nothing is rebuilt between targets.
# Needs a nightly toolchain and cargo-fuzz. Logs go to fuzz/logs/.
#
# Two folders per target:
# - fuzz/seeds/<target>/ is in git: a small minimised seed set (at most FUZZ_SEEDS_MAX files,
#   default 256) plus the reproducers of past findings (crash-*, oom-*, timeout-*, leak-*,
#   slow-unit-*). crates/testkit/tests/fuzz_corpus.rs replays it as an ordinary test.
# - fuzz/corpus/<target>/ is the full working corpus, git-ignored: libFuzzer reads the seeds and
#   writes what it finds here; after each run it is minimised in place (-merge=1). A fresh clone
#   has none: the first run starts from the seeds and regrows it.
# A finding's input (fuzz/artifacts/<target>/) is copied into the seeds, so that it is replayed
# from then on. FUZZ_UPDATE_SEEDS=1 also rebuilds each target's seed set from the corpus with
# libFuzzer's -set_cover_merge=1 (the fewest inputs that keep every feature), keeping the
# smallest FUZZ_SEEDS_MAX of them and every reproducer.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
mkdir -p logs
if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
  cargo +nightly fuzz build -O || exit 1
fi
# cargo fuzz builds into $CARGO_TARGET_DIR when it is set (the shared /work/fuzz-target): run
# the binaries from there, not from a stale or missing fuzz/target.
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
bin_dir="$target_dir/x86_64-unknown-linux-gnu/release"

# Rebuilds seeds/<target> from the corpus and the current seeds: libFuzzer's set cover, the
# smallest FUZZ_SEEDS_MAX of its inputs, and every reproducer of a finding.
update_seeds() {
  local t="$1" max="${FUZZ_SEEDS_MAX:-256}"
  rm -rf "seeds/$t.new" && mkdir "seeds/$t.new"
  if ! nice -n "${FUZZ_NICE:-19}" "$bin_dir/$t" -set_cover_merge=1 -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
      "seeds/$t.new" "corpus/$t" "seeds/$t" >"logs/$t.seeds.log" 2>&1; then
    echo "$t: set cover failed, seeds kept (see fuzz/logs/$t.seeds.log)"
    rm -rf "seeds/$t.new"
    return
  fi
  rm -f "seeds/$t.new"/crash-* "seeds/$t.new"/oom-* "seeds/$t.new"/timeout-* \
    "seeds/$t.new"/leak-* "seeds/$t.new"/slow-unit-*
  # ls -S sorts largest first: keep the last $max (the smallest).
  ls -S "seeds/$t.new" | head -n -"$max" | while read -r f; do rm -f "seeds/$t.new/$f"; done
  find "seeds/$t" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' \
    -o -name 'leak-*' -o -name 'slow-unit-*' \) -exec cp {} "seeds/$t.new/" \;
  local before
  before=$(ls "seeds/$t" | wc -l)
  rm -rf "seeds/$t" && mv "seeds/$t.new" "seeds/$t"
  echo "$t: seeds $before -> $(ls "seeds/$t" | wc -l)"
}
status=0
for t in "${targets[@]}"; do
  echo "== $t: ${secs}s (malloc limit ${FUZZ_MALLOC_MB:-512} MB, RSS ${FUZZ_RSS_MB:-2048} MB) $(date -u +%H:%M:%S)"
  mkdir -p "artifacts/$t" "corpus/$t" "seeds/$t"
  if [ ! -x "$bin_dir/$t" ]; then
    echo "$t: no binary at $bin_dir/$t (build it: cargo +nightly fuzz build -O $t)"
    status=1
    continue
  fi
  nice -n "${FUZZ_NICE:-19}" "$bin_dir/$t" "corpus/$t" "seeds/$t" -max_total_time="$secs" \
    -malloc_limit_mb="${FUZZ_MALLOC_MB:-512}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
    -artifact_prefix="artifacts/$t/" -print_final_stats=1 >"logs/$t.log" 2>&1
  rc=$?
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY|ERROR" "logs/$t.log" | tail -n 4
  # A run that executed only a handful of inputs did not fuzz (a missing or stale binary, a
  # target that exits early): say so instead of reporting "no finding".
  units=$(sed -n 's/^stat::number_of_executed_units: *//p' "logs/$t.log" | tail -n 1)
  if [ "${units:-0}" -lt 1000 ] && [ "$secs" -ge 60 ]; then
    echo "$t: only ${units:-0} inputs executed in ${secs}s: not a fuzzing run, see fuzz/logs/$t.log"
    status=1
  fi
  if [ $rc -ne 0 ]; then
    echo "$t: FINDING (exit $rc), see fuzz/logs/$t.log and fuzz/artifacts/$t/"
    status=1
  fi
  # Keep every finding as a seed (replayed by the tests from now on).
  find "artifacts/$t" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' \
    -o -name 'leak-*' -o -name 'slow-unit-*' \) -exec cp -n {} "seeds/$t/" \;
  before=$(ls "corpus/$t" | wc -l)
  rm -rf "corpus/$t.min" && mkdir "corpus/$t.min"
  if nice -n "${FUZZ_NICE:-19}" "$bin_dir/$t" -merge=1 -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
      "corpus/$t.min" "corpus/$t" >"logs/$t.cmin.log" 2>&1; then
    rm -rf "corpus/$t" && mv "corpus/$t.min" "corpus/$t"
  else
    rm -rf "corpus/$t.min"
  fi
  echo "$t: corpus $before -> $(ls "corpus/$t" | wc -l) inputs after minimizing"
  if [ "${FUZZ_UPDATE_SEEDS:-0}" = 1 ]; then
    update_seeds "$t"
  fi
done
exit $status
