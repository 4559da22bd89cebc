#!/bin/sh
# Large-input timing of `rtshield report` (issue 5): 10 runs of 2 threads,
# each with a day-long timeline of 86 400 intervals per thread
# (1.7 million timeline rows in all), every output format.
# Usage: bench/report-large.sh [RUNS] [INTERVALS]
set -eu
cd "$(dirname "$0")/.."
runs=${1:-10}
intervals=${2:-86400}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build -q --release -p rtshield
cargo build -q --release -p rtshield-report --example synth
bin=$CARGO_TARGET_DIR/release/rtshield
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$CARGO_TARGET_DIR/release/examples/synth" "$work/in" "$runs" "$intervals" "$runs"
echo "input: $runs runs, $intervals intervals x 2 threads each: $(du -sh "$work/in" | cut -f1)"
set --
for d in "$work"/in/run*; do set -- "$@" "$d"; done
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "elapsed %e s, cpu %U s user + %S s sys, max RSS %M KB" \
        "$bin" report "$@" -o "$work/report" >/dev/null
else
    start=$(date +%s.%N)
    "$bin" report "$@" -o "$work/report" >/dev/null
    end=$(date +%s.%N)
    echo "elapsed: $(echo "$end - $start" | bc) s"
fi
echo "report: $(ls "$work/report" | wc -l) files, $(du -sh "$work/report" | cut -f1)"
echo "load average while measuring: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
