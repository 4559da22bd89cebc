#!/usr/bin/env bash
# What does kernel tracing cost the measurement? `rtshield measure` without
# tracing, with --trace-on LAT (spikes rare: only the trace instance's
# events, no read) and with --split (every wake-up read from trace_pipe and
# split), alternated round by round on the same CPU. Prints per round the
# samples, p50/p99/p99.9/max (us) and the process CPU time; then the
# medians over the rounds and the ratios against no tracing: CPU time per
# sample (user+system of the whole process / samples) and p99.
# Last, a run with a threshold low enough to make spikes gives the longest
# analysis of one spike (results.json trace.analysis_max_ms).
#
#   bench/trace-overhead.sh
#   CPU=1 PERIOD_US=200 DURATION=10 ROUNDS=3 LAT_US=1000 bench/trace-overhead.sh
#   RTSHIELD=/path/to/rtshield bench/trace-overhead.sh
#
# Needs root (tracefs, SCHED_FIFO). Standard tools only (bash, awk, grep).
# Targets (docs/trace.md): --trace-on <= 1.3x CPU/sample, --split <= 2x,
# one spike analysed in < 100 ms.
set -euo pipefail
# Bench runs are not results: keep them out of the user's results store.
export RTSHIELD_NO_STORE=1

here=$(cd "$(dirname "$0")/.." && pwd)
CPU=${CPU:-$(awk -F'[-,]' '{print $NF}' /sys/devices/system/cpu/online)}
PERIOD_US=${PERIOD_US:-200}
PRIO=${PRIO:-98}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
LAT_US=${LAT_US:-1000}
OUT=${OUT:-$(mktemp -d /tmp/rtshield-trace-overhead.XXXXXX)}
mkdir -p "$OUT"
[ "$(id -u)" = 0 ] || { echo "needs root (tracefs, SCHED_FIFO)" >&2; exit 1; }
if [ -z "${RTSHIELD:-}" ]; then
    (cd "$here" && cargo build --release -q -p rtshield)
    RTSHIELD="${CARGO_TARGET_DIR:-$here/target}/release/rtshield"
fi
echo "rtshield: $RTSHIELD"
echo "CPU $CPU, period ${PERIOD_US}us, SCHED_FIFO $PRIO, ${DURATION}s x $ROUNDS rounds each, --trace-on ${LAT_US}us; files in $OUT"

# cpu_seconds CMD...: run CMD, print the children's user+sys CPU seconds.
cpu_seconds() {
    ( "$@" >/dev/null 2>"$OUT/last.err"; times ) | tail -1 | awk '{
        split($1, u, "m"); split($2, s, "m");
        sub("s", "", u[2]); sub("s", "", s[2]);
        printf "%.4f\n", u[1]*60 + u[2] + s[1]*60 + s[2] }'
}

# stats FILE: "samples median p99 p99.9 max" (us) from histogram.txt.
stats() {
    awk '
    /^# Histogram$/ { inh=1; next }
    inh && /^[0-9]/ { for (j=2;j<=NF;j++) { c[$1+0]+=$j; n+=$j } if ($1+0>top) top=$1+0; next }
    /^# Max Latencies:/ { for (j=4;j<=NF;j++) if ($j+0>max) max=$j+0 }
    /^# Histogram Overflows:/ { for (j=4;j<=NF;j++) ov+=$j }
    END {
        tot=n+ov; split("0.5 0.99 0.999", q, " ");
        for (k=1;k<=3;k++) { r=q[k]*tot; cum=0; v=max;
            for (i=0;i<=top;i++) { cum+=c[i]; if (cum>=r) { v=i; break } }
            p[k]=v }
        printf "%d %d %d %d %d\n", tot, p[1], p[2], p[3], max }' "$1"
}

run() { # mode round
    local d="$OUT/$1-$2" extra=()
    case $1 in
        trace-on) extra=(--trace-on "${LAT_US}us") ;;
        split) extra=(--split) ;;
    esac
    local cpu
    cpu=$(cpu_seconds "$RTSHIELD" measure --cpus "$CPU" --period "${PERIOD_US}us" --prio "$PRIO" \
        --duration "${DURATION}s" --histo-size 2000us --quiet --out "$d" "${extra[@]}")
    if grep -q "tracing off" "$OUT/last.err"; then
        echo "tracing is not possible here: $(cat "$OUT/last.err")" >&2
        exit 1
    fi
    echo "$(stats "$d/histogram.txt") $cpu"
}

: > "$OUT/rows"
modes=(none trace-on split)
for r in $(seq 1 "$ROUNDS"); do
    # Rotate who goes first, so drift in the machine's state is shared.
    for k in 0 1 2; do
        m=${modes[$(( (k + r - 1) % 3 ))]}
        line=$(run "$m" "$r")
        echo "$m $r $line" | tee -a "$OUT/rows"
    done
done

echo
echo "Medians over $ROUNDS rounds (row: samples p50 p99 p99.9 max in us, CPU ns/sample) and ratios against no tracing:"
awk '
    function med(a, n,   i, j, t) { for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]<a[i]) { t=a[i]; a[i]=a[j]; a[j]=t }
        return (n%2) ? a[(n+1)/2] : (a[n/2]+a[n/2+1])/2 }
    { t=$1; k[t]++; i=k[t]; S[t,i]=$3; P50[t,i]=$4; P99[t,i]=$5; P999[t,i]=$6; X[t,i]=$7; C[t,i]=($3>0 ? $8/$3*1e9 : 0) }
    END {
        split("none trace-on split", ms, " ");
        for (mm=1; mm<=3; mm++) { t=ms[mm]; n=k[t];
            for (i=1;i<=n;i++) A[i]=S[t,i];    s[t]=med(A,n)
            for (i=1;i<=n;i++) A[i]=P50[t,i];  p50[t]=med(A,n)
            for (i=1;i<=n;i++) A[i]=P99[t,i];  p99[t]=med(A,n)
            for (i=1;i<=n;i++) A[i]=P999[t,i]; p999[t]=med(A,n)
            for (i=1;i<=n;i++) A[i]=X[t,i];    x[t]=med(A,n)
            for (i=1;i<=n;i++) A[i]=C[t,i];    c[t]=med(A,n) }
        for (mm=1; mm<=3; mm++) { t=ms[mm];
            printf "%-9s samples %6d  p50 %4d  p99 %5d  p99.9 %5d  max %6d us  CPU/sample %6.0f ns",
                t, s[t], p50[t], p99[t], p999[t], x[t], c[t];
            if (t != "none") printf "   CPU/sample x%.2f  p99 x%.2f", (c["none"]?c[t]/c["none"]:0), (p99["none"]?p99[t]/p99["none"]:0);
            printf "\n" } }' "$OUT/rows"

# Analysis cost: a threshold at a quarter of the period makes spikes.
spike_lat=$(( PERIOD_US / 4 ))
d="$OUT/analysis"
"$RTSHIELD" measure --cpus "$CPU" --period "${PERIOD_US}us" --prio "$PRIO" --duration 5s \
    --trace-on "${spike_lat}us" --quiet --out "$d" >/dev/null 2>&1
ms=$(grep -o '"analysis_max_ms": *[0-9.e+-]*' "$d/results.json" | awk -F: '{print $2+0}')
n=$(grep -c '"verdict"' "$d/spikes.json" || true)
echo
echo "analysis: --trace-on ${spike_lat}us for 5s: $n spikes explained, longest analysis of one spike ${ms} ms (target < 100 ms)"
