#!/usr/bin/env bash
# Which system calls does a measuring thread make? strace -f over a whole
# `rtshield measure` run; the measuring thread's calls are picked out by its
# TID (from results.json) and counted by name. Run twice with different
# sample counts: only the wait grows with the samples (clock_nanosleep, or
# rt_sigtimedwait in posix-timer mode); the clock read is the vDSO (never a
# syscall) and everything else is fixed set-up/tear-down.
#
#   bench/hotpath-syscalls.sh            # needs strace; root for SCHED_FIFO
#   RTSHIELD=/path/to/rtshield CPU=1 bench/hotpath-syscalls.sh
set -euo pipefail
# Bench runs are not results: keep them out of the user's results store.
export RTSHIELD_NO_STORE=1

here=$(cd "$(dirname "$0")/.." && pwd)
CPU=${CPU:-$(awk -F'[-,]' '{print $NF}' /sys/devices/system/cpu/online)}
command -v strace >/dev/null || {
    echo "installing strace"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null
}
if [ -z "${RTSHIELD:-}" ]; then
    (cd "$here" && cargo build --release -q -p rtshield)
    RTSHIELD="${CARGO_TARGET_DIR:-$here/target}/release/rtshield"
fi
work=$(mktemp -d /tmp/rtshield-syscalls.XXXXXX)
# Non-empty (the reason) when tracing cannot run here: the traced section is skipped.
rtshield_trace_off() {
    [ "$(id -u)" = 0 ] || { echo "not root"; return; }
    grep -qw tracefs /proc/filesystems || echo "no tracefs"
}

# count MODE SAMPLES [EXTRA...]: "name count" lines for the measuring thread.
count() {
    local dir="$work/$1-$2${3:+-traced}"
    strace -f -qq -o "$dir.strace" "$RTSHIELD" measure --cpus "$CPU" --period 1ms \
        --samples "$2" --mode "$1" --quiet --out "$dir" "${@:3}" >/dev/null
    local tid
    tid=$(sed -n 's/^ *"tid": \([0-9]*\),/\1/p' "$dir/results.json" | head -1)
    # strace -f lines start with the TID; a call interrupted by another
    # thread's output is split into "<unfinished ...>" and "resumed>" parts:
    # count the first part only.
    awk -v t="$tid" '$1==t && $2 !~ /^<\.\.\./ { sub(/\(.*/, "", $2); n[$2]++ }
        END { for (s in n) printf "%s %d\n", s, n[s] }' "$dir.strace" | sort
}

for mode in nanosleep posix-timer interval-posix; do
    a=$(count "$mode" 1000)
    b=$(count "$mode" 3000)
    echo "== $mode: measuring thread system calls, 1000 vs 3000 samples"
    join -a1 -a2 -e0 -o 0,1.2,2.2 <(echo "$a") <(echo "$b") |
        awk '{ d = $3 - $2; printf "  %-20s %6d %6d   %s\n", $1, $2, $3,
               (d == 2000 ? "<- one per sample (the wait)" : (d == 0 ? "fixed (set-up/exit)" : "GROWS: not expected")) }'
done
echo "(clock_gettime never appears: it is a vDSO call)"

# --trace-on 1us makes every wake-up a spike: the measuring thread's one
# extra call per spike is the trace_marker write (docs/proofs.md).
if [ -z "$(rtshield_trace_off)" ]; then
    a=$(count nanosleep 1000 --trace-on 1us)
    b=$(count nanosleep 3000 --trace-on 1us)
    echo "== nanosleep --trace-on 1us (every wake-up a spike): measuring thread, 1000 vs 3000 samples"
    join -a1 -a2 -e0 -o 0,1.2,2.2 <(echo "$a") <(echo "$b") |
        awk '{ d = $3 - $2
               # (POSIX awk allows no line break after ?: hence if/else)
               if ($1 == "write" && $2 <= 1000 && $3 <= 3000) w = "<- the marker: at most one per spike (none while the 1024-mark ring is full)"
               else if (d == 2000) w = "<- one per sample (the wait)"
               else if (d == 0) w = "fixed (set-up/exit)"
               else w = "GROWS: not expected"
               printf "  %-20s %6d %6d   %s\n", $1, $2, $3, w }'
fi

# The whole process, strace -c style, for scale: the main thread's calls
# (drain sleeps every 20 ms, set-up, file writes) do not depend on the
# sample rate.
echo "== whole process, strace -c -f, nanosleep mode, 2000 samples (top 8 by calls)"
strace -c -f -S calls -o "$work/summary" "$RTSHIELD" measure --cpus "$CPU" --period 1ms \
    --samples 2000 --quiet --out "$work/summary-run" >/dev/null
awk '/^% time/ { print "  " $0 } /^ *[0-9]/ && n < 8 { print "  " $0; n++ }' "$work/summary"
rm -rf "$work"
