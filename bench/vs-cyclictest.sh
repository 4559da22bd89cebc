#!/usr/bin/env bash
# rtshield measure vs cyclictest, same CPU(s), period and priority,
# alternated round by round, idle and with stress-ng on the other CPUs.
# Prints the ratios rtshield/cyclictest of the median, p99, p99.9, max
# latency and CPU time per sample (medians over the rounds).
#
#   bench/vs-cyclictest.sh                      # one thread, on the last CPU
#   CPU=1 PERIOD_US=200 PRIO=98 DURATION=10 ROUNDS=3 CONDITIONS="idle loaded" bench/vs-cyclictest.sh
#   CPUS=0-1 CONDITIONS=idle bench/vs-cyclictest.sh   # one thread per CPU:
#       rtshield --cpus 0-1 vs cyclictest -t2 -a0-1 (the measuring threads'
#       shared state is what this compares; figures are over all threads)
#   RTSHIELD=/path/to/rtshield bench/vs-cyclictest.sh
#
# Needs root (SCHED_FIFO, mlockall). Installs rt-tests and stress-ng with
# apt-get when missing. Total time ~ 2 x 2 x ROUNDS x DURATION seconds.
set -euo pipefail
# Bench runs are not results: keep them out of the user's results store.
export RTSHIELD_NO_STORE=1

here=$(cd "$(dirname "$0")/.." && pwd)
online_last() { awk -F'[-,]' '{print $NF}' /sys/devices/system/cpu/online; }
CPU=${CPU:-$(online_last)}
# CPUS (a list such as 0-1): one measuring thread per CPU instead of CPU.
CPUS=${CPUS:-$CPU}
PERIOD_US=${PERIOD_US:-200}
PRIO=${PRIO:-98}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
HIST_US=${HIST_US:-2000}
OUT=${OUT:-$(mktemp -d /tmp/rtshield-vs-cyclictest.XXXXXX)}
mkdir -p "$OUT"

[ "$(id -u)" = 0 ] || { echo "needs root (SCHED_FIFO priority $PRIO)" >&2; exit 1; }
need=()
command -v cyclictest >/dev/null || need+=(rt-tests)
case " ${CONDITIONS:-idle loaded} " in
    *" loaded "*) command -v stress-ng >/dev/null || need+=(stress-ng) ;;
esac
if [ ${#need[@]} -gt 0 ]; then
    echo "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ -z "${RTSHIELD:-}" ]; then
    (cd "$here" && cargo build --release -q -p rtshield)
    RTSHIELD="${CARGO_TARGET_DIR:-$here/target}/release/rtshield"
fi

# expand LIST: "0-2,5" -> "0,1,2,5".
expand() { echo "$1" | awk 'BEGIN{FS=","} {
    n=split($0, parts, ","); out="";
    for (i=1;i<=n;i++) { split(parts[i], r, "-"); lo=r[1]; hi=(r[2]==""?r[1]:r[2]);
        for (x=lo;x<=hi;x++) out=out (out==""?"":",") x }
    print out }'; }
measured=$(expand "$CPUS")
nthreads=$(echo "$measured" | tr ',' '\n' | wc -l)
# The other CPUs: housekeeping for both tools' main threads and the load.
others=$(expand "$(cat /sys/devices/system/cpu/online)" | tr ',' '\n' |
    grep -vxF -f <(echo "$measured" | tr ',' '\n') | paste -sd, - || true)
nothers=0
[ -n "$others" ] && nothers=$(echo "$others" | tr ',' '\n' | wc -l)
if [ -z "$others" ] && [ "$nthreads" = 1 ]; then echo "needs at least 2 CPUs" >&2; exit 1; fi

echo "rtshield: $RTSHIELD"
echo "cyclictest: $(cyclictest --help 2>&1 | head -1)"
echo "CPUs $CPUS ($nthreads thread(s)), period ${PERIOD_US}us, SCHED_FIFO $PRIO, ${DURATION}s x $ROUNDS rounds each, load CPUs ${others:-none}; files in $OUT"

# cpu_seconds CMD...: run CMD, print the children's user+sys CPU seconds.
cpu_seconds() {
    ( "$@" >/dev/null 2>&1; times ) | tail -1 | awk '{
        split($1, u, "m"); split($2, s, "m");
        sub("s", "", u[2]); sub("s", "", s[2]);
        printf "%.4f\n", u[1]*60 + u[2] + s[1]*60 + s[2] }'
}

# stats FILE: "samples median p99 p99.9 max" (us) from a cyclictest -h file
# (rtshield's histogram.txt has the same format), every thread's column
# together: percentiles by rank over histogram + overflows; a rank in the
# overflow reads as the maximum.
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

run_rtshield() { # round cond
    local d="$OUT/rtshield-$2-$1"
    local cpu
    cpu=$(cpu_seconds "$RTSHIELD" measure --cpus "$CPUS" --period "${PERIOD_US}us" --prio "$PRIO" \
        --duration "${DURATION}s" --histo-size "${HIST_US}us" --quiet --out "$d")
    echo "$(stats "$d/histogram.txt") $cpu"
}

run_cyclictest() { # round cond
    local f="$OUT/cyclictest-$2-$1.txt"
    local cpu
    local main=
    [ -n "$others" ] && main="--mainaffinity=$others"
    cpu=$(cpu_seconds sh -c "cyclictest -q -m -t $nthreads -a $CPUS -p $PRIO -i $PERIOD_US -D ${DURATION}s \
        -h $HIST_US $main > '$f'")
    echo "$(stats "$f") $cpu"
}

load_pid=
stop_load() { [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null && wait "$load_pid" 2>/dev/null; load_pid=; }
trap stop_load EXIT

summary=()
for cond in ${CONDITIONS:-idle loaded}; do
    if [ "$cond" = loaded ] && [ -z "$others" ]; then
        echo "loaded: no CPU left for the load, skipped"
        continue
    fi
    if [ "$cond" = loaded ]; then
        taskset -c "$others" stress-ng --cpu "$nothers" --vm 1 --vm-bytes 64M --io 1 --timeout 0 -q &
        load_pid=$!
        sleep 1
    fi
    : > "$OUT/$cond.rows"
    for r in $(seq 1 "$ROUNDS"); do
        # Alternate who goes first, so drift in the machine's state is shared.
        if [ $((r % 2)) = 1 ]; then order="rtshield cyclictest"; else order="cyclictest rtshield"; fi
        for tool in $order; do
            line=$(run_$tool "$r" "$cond")
            echo "$cond $r $tool $line" | tee -a "$OUT/$cond.rows"
        done
    done
    stop_load
    # Medians over rounds per tool, then ratios.
    res=$(awk -v cond="$cond" '
        function med(a, n,   i, j, t) { for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]<a[i]) { t=a[i]; a[i]=a[j]; a[j]=t }
            return (n%2) ? a[(n+1)/2] : (a[n/2]+a[n/2+1])/2 }
        { t=$3; k[t]++; i=k[t]; s[t,i]=$4; m[t,i]=$5; q[t,i]=$6; p[t,i]=$7; x[t,i]=$8; cs[t,i]=($4>0 ? $9/$4*1e9 : 0) }
        END {
            for (tt=1; tt<=2; tt++) { t=(tt==1?"rtshield":"cyclictest"); n=k[t];
                for (i=1;i<=n;i++) { A[i]=m[t,i] } M[t]=med(A,n)
                for (i=1;i<=n;i++) { A[i]=q[t,i] } Q[t]=med(A,n)
                for (i=1;i<=n;i++) { A[i]=p[t,i] } P[t]=med(A,n)
                for (i=1;i<=n;i++) { A[i]=x[t,i] } X[t]=med(A,n)
                for (i=1;i<=n;i++) { A[i]=cs[t,i] } C[t]=med(A,n)
                for (i=1;i<=n;i++) { A[i]=s[t,i] } S[t]=med(A,n) }
            r = "rtshield"; c = "cyclictest";
            printf "%-7s  median %3d/%3d us = %.2f   p99 %4d/%4d us = %.2f   p99.9 %4d/%4d us = %.2f   max %5d/%5d us = %.2f   CPU/sample %5.0f/%5.0f ns = %.2f   (samples %d/%d)\n",
                cond, M[r], M[c], (M[c]?M[r]/M[c]:0), Q[r], Q[c], (Q[c]?Q[r]/Q[c]:0), P[r], P[c], (P[c]?P[r]/P[c]:0),
                X[r], X[c], (X[c]?X[r]/X[c]:0), C[r], C[c], (C[c]?C[r]/C[c]:0), S[r], S[c] }' "$OUT/$cond.rows")
    summary+=("$res")
done

echo
echo "Ratios rtshield/cyclictest (medians over $ROUNDS rounds; values rtshield/cyclictest):"
printf '%s\n' "${summary[@]}"
