#!/usr/bin/env bash
# rtshield measure vs cyclictest, same CPU(s), period and priority,
# alternated round by round, idle and with stress-ng on the other CPUs.
# Prints, per CPU set and condition, the ratios rtshield/cyclictest of the
# median, p99 (medians over the rounds), p99.9 and max over all rounds
# pooled (histograms summed, overflows counted: a rank that falls in the
# overflow reads as the maximum), and CPU time per *period* (user+sys over
# threads x duration / period: after a stall cyclictest catches up with a
# burst of cheap samples where rtshield counts missed periods, so per
# sample would flatter cyclictest), plus CPU per sample for reference.
#
#   bench/vs-cyclictest.sh                      # SETS="one two all"
#   SETS=one bench/vs-cyclictest.sh             # one thread, on the last CPU
#   SETS="two all"                              # CPUs 0-1; every online CPU
#       (a set equal to one already run is skipped: on 2 CPUs "all" is "two")
#   CPU=1 PERIOD_US=200 PRIO=98 DURATION=10 ROUNDS=3 CONDITIONS="idle loaded" bench/vs-cyclictest.sh
#   CPUS=0-1 CONDITIONS=idle bench/vs-cyclictest.sh   # one thread per CPU:
#       rtshield --cpus 0-1 vs cyclictest -t2 -a0-1 (the measuring threads'
#       shared state is what this compares; figures are over all threads)
#   RTSHIELD=/path/to/rtshield bench/vs-cyclictest.sh
#
# Needs root (SCHED_FIFO, mlockall). Installs rt-tests and stress-ng with
# apt-get when missing. Total time ~ sets x conditions x 2 x ROUNDS x DURATION
# seconds. The load average is printed before and after each set.
set -euo pipefail
# Bench runs are not results: keep them out of the user's results store.
export RTSHIELD_NO_STORE=1
here=$(cd "$(dirname "$0")/.." && pwd)
online=$(cat /sys/devices/system/cpu/online)
online_last() { awk -F'[-,]' '{print $NF}' /sys/devices/system/cpu/online; }
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

# The CPU lists to run: CPUS or CPU if given (one set), else SETS.
if [ -n "${CPUS:-}" ] || [ -n "${CPU:-}" ]; then
    lists=("${CPUS:-$CPU}")
else
    lists=()
    first_two=$(expand "$online" | tr ',' '\n' | head -2 | paste -sd, -)
    for set in ${SETS:-one two all}; do
        case $set in
            one) l=$(online_last) ;;
            two) l=$first_two ;;
            all) l=$(expand "$online") ;;
            *) echo "unknown set $set (one, two, all)" >&2; exit 2 ;;
        esac
        l=$(expand "$l")
        case " ${lists[*]:-} " in *" $l "*) echo "set $set: CPUs $l already run, skipped" ;; *) lists+=("$l") ;; esac
    done
fi

echo "rtshield: $RTSHIELD"
echo "cyclictest: $(cyclictest --help 2>&1 | head -1)"

# cpu_seconds CMD...: run CMD, print the children's user+sys CPU seconds.
cpu_seconds() {
    ( "$@" >/dev/null 2>&1; times ) | tail -1 | awk '{
        split($1, u, "m"); split($2, s, "m");
        sub("s", "", u[2]); sub("s", "", s[2]);
        printf "%.4f\n", u[1]*60 + u[2] + s[1]*60 + s[2] }'
}

# stats FILE...: "samples median p99 p99.9 max" (us) from cyclictest -h
# files (rtshield's histogram.txt has the same format), every thread's
# column of every file together: percentiles by rank over histogram +
# overflows; a rank in the overflow reads as the maximum.
stats() {
    awk '
    FNR == 1 { inh=0 }
    /^# Histogram$/ { inh=1; next }
    inh && /^[0-9]/ { for (j=2;j<=NF;j++) { c[$1+0]+=$j; n+=$j } if ($1+0>top) top=$1+0; next }
    /^# Max Latencies:/ { for (j=4;j<=NF;j++) if ($j+0>max) max=$j+0 }
    /^# Histogram Overflows:/ { for (j=4;j<=NF;j++) ov+=$j }
    END {
        tot=n+ov; split("0.5 0.99 0.999", q, " ");
        for (k=1;k<=3;k++) { r=q[k]*tot; cum=0; v=max;
            for (i=0;i<=top;i++) { cum+=c[i]; if (cum>=r) { v=i; break } }
            p[k]=v }
        printf "%d %d %d %d %d\n", tot, p[1], p[2], p[3], max }' "$@"
}

run_rtshield() { # round cond
    local d="$OUT/$set_name/rtshield-$2-$1"
    local cpu
    cpu=$(cpu_seconds "$RTSHIELD" measure --cpus "$CPUS" --period "${PERIOD_US}us" --prio "$PRIO" \
        --duration "${DURATION}s" --histo-size "${HIST_US}us" --quiet --out "$d")
    cp "$d/histogram.txt" "$OUT/$set_name/rtshield-$2-$1.txt"
    echo "$(stats "$d/histogram.txt") $cpu"
}

run_cyclictest() { # round cond
    local f="$OUT/$set_name/cyclictest-$2-$1.txt"
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
for CPUS in "${lists[@]}"; do
    measured=$CPUS
    nthreads=$(echo "$measured" | tr ',' '\n' | wc -l)
    set_name="cpus-${CPUS//,/_}"
    mkdir -p "$OUT/$set_name"
    # The other CPUs: housekeeping for both tools' main threads and the load.
    others=$(expand "$online" | tr ',' '\n' |
        grep -vxF -f <(echo "$measured" | tr ',' '\n') | paste -sd, - || true)
    nothers=0
    [ -n "$others" ] && nothers=$(echo "$others" | tr ',' '\n' | wc -l)
    # Periods each tool was asked to measure (both run DURATION s).
    periods=$(awk -v t="$nthreads" -v d="$DURATION" -v p="$PERIOD_US" 'BEGIN { printf "%d", t * d * 1e6 / p }')
    echo "CPUs $CPUS ($nthreads thread(s)), period ${PERIOD_US}us, SCHED_FIFO $PRIO, ${DURATION}s x $ROUNDS rounds each, load CPUs ${others:-none}; load average $(cut -d' ' -f1-3 /proc/loadavg); files in $OUT/$set_name"
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
        rows="$OUT/$set_name/$cond.rows"
        : > "$rows"
        for r in $(seq 1 "$ROUNDS"); do
            # Alternate who goes first, so drift in the machine's state is shared.
            if [ $((r % 2)) = 1 ]; then order="rtshield cyclictest"; else order="cyclictest rtshield"; fi
            for tool in $order; do
                line=$(run_$tool "$r" "$cond")
                echo "$cond $r $tool $line" | tee -a "$rows"
            done
        done
        stop_load
        pooled_r=$(stats "$OUT/$set_name"/rtshield-"$cond"-*.txt)
        pooled_c=$(stats "$OUT/$set_name"/cyclictest-"$cond"-*.txt)
        # Medians over rounds per tool (median, p99, CPU), pooled p99.9 and max, then ratios.
        res=$(awk -v cond="$cond" -v set="$CPUS" -v periods="$periods" -v pr="$pooled_r" -v pc="$pooled_c" \
            -v load="$(cut -d' ' -f1 /proc/loadavg)" '
            function med(a, n,   i, j, t) { for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]<a[i]) { t=a[i]; a[i]=a[j]; a[j]=t }
                return (n%2) ? a[(n+1)/2] : (a[n/2]+a[n/2+1])/2 }
            function ratio(a, b) { return b ? a/b : 0 }
            { t=$3; k[t]++; i=k[t]; s[t,i]=$4; m[t,i]=$5; q[t,i]=$6; cs[t,i]=($4>0 ? $9/$4*1e9 : 0); cp[t,i]=$9/periods*1e9 }
            END {
                for (tt=1; tt<=2; tt++) { t=(tt==1?"rtshield":"cyclictest"); n=k[t];
                    for (i=1;i<=n;i++) { A[i]=m[t,i] } M[t]=med(A,n)
                    for (i=1;i<=n;i++) { A[i]=q[t,i] } Q[t]=med(A,n)
                    for (i=1;i<=n;i++) { A[i]=cs[t,i] } C[t]=med(A,n)
                    for (i=1;i<=n;i++) { A[i]=cp[t,i] } CP[t]=med(A,n)
                    for (i=1;i<=n;i++) { A[i]=s[t,i] } S[t]=med(A,n) }
                split(pr, R, " "); split(pc, Cc, " ");
                r = "rtshield"; c = "cyclictest";
                printf "| %s | %s | %d/%d | %.0f/%.0f = %.2f | %.0f/%.0f = %.2f | %d/%d | %d/%d | %d/%d = %.2f | %d/%d = %.2f | %s |\n",
                    set, cond, S[r], S[c], CP[r], CP[c], ratio(CP[r], CP[c]), C[r], C[c], ratio(C[r], C[c]),
                    M[r], M[c], Q[r], Q[c], R[4], Cc[4], ratio(R[4], Cc[4]), R[5], Cc[5], ratio(R[5], Cc[5]), load }' "$rows")
        summary+=("$res")
    done
done

echo
echo "rtshield/cyclictest; CPU, median, p99: medians over $ROUNDS rounds; p99.9 and max: all rounds pooled (overflows counted)"
echo "| CPUs | condition | samples/round | CPU/period ns | CPU/sample ns | median us | p99 us | p99.9 us | max us | load1 after |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${summary[@]}"
