#!/usr/bin/env bash
# Runs every fuzz target (or those named) one at a time for SECONDS each (default 600) under
# `nice -n 19`, with libFuzzer's malloc and RSS limits so that an input making a decoder
# allocate far more than it justifies is a finding, then minimizes each corpus in place
# (`cargo fuzz cmin`). Needs a nightly toolchain and cargo-fuzz. Logs go to fuzz/logs/.
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
nice -n 19 cargo +nightly fuzz build -O || exit 1
status=0
for t in "${targets[@]}"; do
  echo "== $t: ${secs}s (malloc limit ${FUZZ_MALLOC_MB:-512} MB, RSS ${FUZZ_RSS_MB:-2048} MB)"
  nice -n 19 cargo +nightly fuzz run -O "$t" -- -max_total_time="$secs" \
    -malloc_limit_mb="${FUZZ_MALLOC_MB:-512}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
    -print_final_stats=1 >"logs/$t.log" 2>&1
  rc=$?
  grep -E "^#[0-9]+ *DONE|stat::number_of_executed_units|SUMMARY|ERROR" "logs/$t.log" | tail -n 3
  if [ $rc -ne 0 ]; then
    echo "$t: FINDING (exit $rc), see fuzz/logs/$t.log and fuzz/artifacts/$t/"
    status=1
  fi
  before=$(ls "corpus/$t" | wc -l)
  nice -n 19 cargo +nightly fuzz cmin -O "$t" >"logs/$t.cmin.log" 2>&1
  echo "$t: corpus $before -> $(ls "corpus/$t" | wc -l) inputs after cmin"
done
exit $status
