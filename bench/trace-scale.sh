#!/usr/bin/env bash
# Tracing at scale (issue 26): what `measure --split` and `--trace-on` do
# with a trace of CPUS CPUs, each with one measuring thread waking every
# PERIOD_US (6 events per wake-up), synthesized in memory
# (crates/trace/benches/trace_scale.rs): parse every line, pair the
# engine's samples with their wake-ups as the --split drain does (every
# 20 ms; each record to the pairers of its CPU: `split`; every record to
# every pairer, as before the per-CPU dispatch: `split_all`), analyse a
# few spikes; CPU time per event and per second of traced time, memory
# of the parsed records.
# No root, no tracefs.
#
#   bench/trace-scale.sh                           # CPUS="2 8 32 128", 100 us
#   CPUS=128 PERIODS_US="100 1000" MS=200 bench/trace-scale.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CPUS_=${CPUS:-2 8 32 128}
PERIODS_US=${PERIODS_US:-100}
MS=${MS:-200}
cd "$here"
cargo bench -q -p rtshield-trace --bench trace_scale --no-run 2>/dev/null ||
    cargo bench -p rtshield-trace --bench trace_scale --no-run
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; ${MS} ms of trace per case"
printf '%5s %9s %10s %12s %10s %14s %10s %14s %13s %12s %11s %13s %6s\n' \
    cpus period_us events events/s parse_ns parse_cpu/s split_ns split_cpu/s split_all_ns rec_bytes/ev analyse_ms splits/wakeups load1
for p in $PERIODS_US; do
    for n in $CPUS_; do
        line=$(cargo bench -q -p rtshield-trace --bench trace_scale -- --cpus "$n" --period-us "$p" --ms "$MS")
        load=$(cut -d' ' -f1 /proc/loadavg)
        echo "$line" | tr ' ' '\n' | awk -F= -v load="$load" '{ v[$1] = $2 } END {
            printf "%5s %9s %10s %12s %10s %14s %10s %14s %13s %12s %11s %13s %6s\n", v["cpus"], v["period_us"],
                v["events"], v["events_per_s"], v["parse_ns_per_event"], v["parse_cpu_per_traced_s"],
                v["split_ns_per_event"], v["split_cpu_per_traced_s"], v["split_all_ns_per_event"],
                v["records_bytes_per_event"],
                v["analyse_ms_per_spike"], v["splits"] "/" v["wakeups"], load }'
        echo "$line" >> "${TMPDIR:-/tmp}/trace-scale.raw.$$"
    done
done
echo "raw lines:"; cat "${TMPDIR:-/tmp}/trace-scale.raw.$$"; rm -f "${TMPDIR:-/tmp}/trace-scale.raw.$$"
