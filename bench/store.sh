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
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
db="$tmp/runs.db"
echo "rtshield runs list --where isolation=none: $(ms target/release/rtshield runs --store "$db" list --where isolation=none) ms"
echo "rtshield runs compare (one campaign's cells): $(ms target/release/rtshield runs --store "$db" compare 'campaign=c7 isolation=none' 'campaign=c7 isolation=partition') ms"
