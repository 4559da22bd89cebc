#!/usr/bin/env bash
# The collecting side of `rtshield measure` at scale (issue 26): the main
# thread's drain, statistics, histograms, timeline.csv and result files fed
# by N emulated measuring threads at N/period samples per second, through
# the real per-thread rings (crates/run/benches/collect_scale.rs). No root,
# no farm-bench: emulated threads do not sleep per period, so a 2-CPU
# machine can stand in for 128 measuring CPUs.
#
#   bench/collect-scale.sh                       # N = 1 8 32 128, 1 ms / 100 us / 50 us
#   THREADS="128" PERIODS_US="100" DURATION=20 bench/collect-scale.sh
#   EMULATORS=1                                  # OS threads driving the rings
#
# One line per case: lost samples, main-thread CPU (steady state, between
# the first and the last stats period) per sample drained and as % of one
# CPU, the largest backlog at a stats period (as ms of samples; a stats
# period follows a drain, so about 0 when the main thread keeps up, up to
# 10 000 before the rings lose), and
# the emulating threads' CPU. Ring memory: 16 B x 10 s of samples per
# thread (1-16 MiB each), i.e. 205 MB at 128 x 100 us, 410 MB at 50 us.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
THREADS=${THREADS:-1 8 32 128}
PERIODS_US=${PERIODS_US:-1000 100 50}
DURATION=${DURATION:-10}
EMULATORS=${EMULATORS:-1}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/rtshield-collect-scale.XXXXXX")}
trap 'rm -rf "$OUT"' EXIT

cd "$here"
cargo bench -q -p rtshield-run --bench collect_scale --no-run 2>/dev/null ||
    cargo bench -p rtshield-run --bench collect_scale --no-run
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; ${DURATION}s per case; $EMULATORS emulating thread(s)"
printf '%7s %9s %11s %11s %6s %10s %13s %11s %10s %6s\n' \
    threads period_us samples/s samples lost main_cpu% main_ns/sample backlog_ms emul_cpu% load1
for p in $PERIODS_US; do
    for n in $THREADS; do
        line=$(cargo bench -q -p rtshield-run --bench collect_scale -- \
            --threads "$n" --period-us "$p" --seconds "$DURATION" --emulators "$EMULATORS" \
            --out "$OUT/n$n-p$p")
        load=$(cut -d' ' -f1 /proc/loadavg)
        # key=value -> fields
        echo "$line" | tr ' ' '\n' | awk -F= -v load="$load" '{ v[$1] = $2 } END {
            printf "%7s %9s %11s %11s %6s %10s %13s %11s %10s %6s\n", v["threads"], v["period_us"],
                v["rate_per_s"], v["samples"], v["lost"], v["main_cpu_pct"], v["main_ns_per_sample"],
                v["max_backlog_ms"], v["emulators_cpu_pct"], load }'
        echo "$line" >> "$OUT/raw.txt"
        rm -rf "$OUT/n$n-p$p"
    done
done
echo "raw lines:"; cat "$OUT/raw.txt"
