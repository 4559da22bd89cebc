#!/usr/bin/env bash
# Results-store figures (issue: campaigns and a results store): ingest
# rate, `runs list` and `runs compare` over a store of N runs, size per run.
# Targets: >= 500 runs/s ingest, list and compare < 200 ms at 10 000 runs.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo build --release -q -p rtshield-store --example store_bench
cargo build --release -q --bin rtshield
target/release/examples/store_bench "$tmp/runs.db" "$n"
# The CLI as a user runs it (process start included).
for cmd in "list --where isolation=none" "compare isolation=none isolation=partition --stat p99.9,max"; do
  s=$(date +%s%N)
  # shellcheck disable=SC2086
  target/release/rtshield runs --store "$tmp/runs.db" $cmd >/dev/null
  e=$(date +%s%N)
  echo "rtshield runs ${cmd%% *}: $(( (e - s) / 1000000 )) ms"
done
