#!/usr/bin/env bash
# What shielding a CPU buys: wake-up latency of a SCHED_FIFO thread on CPU
# $CPU (rtshield measure, 200 us period) while an I/O load pinned to CPU
# $LOAD_CPU runs, before and after
#     rtshield partition create $CPU --parent <private cgroup> --with irq
# then undo, and check that every IRQ affinity is back as it was. A first
# run without load (BASELINE=0 to skip) shows what the load itself costs.
#
# The I/O load is confined to CPU $LOAD_CPU, but the block device's IRQ is
# routed to CPU $CPU: the "isolated" CPU still takes every completion
# interrupt (the torture article's situation). Moving the IRQs is what the partition adds.
#
# Needs root, a cgroup v1 cpuset hierarchy, stress-ng, python3.
# Safety: every IRQ affinity is saved first and restored on exit, even on
# failure or Ctrl-C (trap), then compared with the saved values and printed.
#
# Environment: RTSHIELD (binary), CPU (1), LOAD_CPU (0), DURATION (60s),
# PERIOD (200us), WATCH (5s, audit window), OUT (results directory).
set -euo pipefail
# Bench runs are not results: keep them out of the user's results store.
export RTSHIELD_NO_STORE=1

here=$(cd "$(dirname "$0")/.." && pwd)
RTSHIELD=${RTSHIELD:-$here/target/release/rtshield}
CPU=${CPU:-1}
LOAD_CPU=${LOAD_CPU:-0}
DURATION=${DURATION:-60s}
PERIOD=${PERIOD:-200us}
WATCH=${WATCH:-5s}
OUT=${OUT:-$(mktemp -d /tmp/rtshield-isolation.XXXXXX)}

die() { echo "isolation-effect: $*" >&2; exit 1; }
[ -x "$RTSHIELD" ] || die "no binary at $RTSHIELD: cargo build --release, or set RTSHIELD"
[ "$(id -u)" = 0 ] || die "needs root (it moves IRQs and creates cgroups)"
command -v stress-ng >/dev/null || die "needs stress-ng (apt-get install stress-ng)"
command -v python3 >/dev/null || die "needs python3"
MOUNT=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "-") break;
               if ($(i+1) == "cgroup" && $(i+3) ~ /(^|,)cpuset(,|$)/) { print $5; exit } }' /proc/self/mountinfo)
[ -n "$MOUNT" ] && [ -e "$MOUNT/cpuset.cpus" ] || die "needs a cgroup v1 cpuset hierarchy (cpuset.* files)"
mkdir -p "$OUT"

CG=rtshield-bench-$$
IRQ_SAVE=$OUT/irq-affinity-before.txt
LOAD_PID=

# Every IRQ affinity (and the default) before anything changes.
snapshot() { grep -H . /proc/irq/*/smp_affinity_list /proc/irq/default_smp_affinity 2>/dev/null || true; }
effective() { grep -H . /proc/irq/*/effective_affinity_list 2>/dev/null || true; }
snapshot >"$IRQ_SAVE"
effective >"$OUT/irq-effective-before.txt"

cleanup() {
    local rc=$?
    set +e
    if [ -n "$LOAD_PID" ]; then
        kill -TERM -- "-$LOAD_PID" 2>/dev/null
        # Anything left in the private cgroup was started by this script.
        local t
        for t in $(cat "$MOUNT/$CG/tasks" "$MOUNT/$CG"/*/tasks 2>/dev/null); do
            kill -KILL "$t" 2>/dev/null
        done
        wait "$LOAD_PID" 2>/dev/null
    fi
    if "$RTSHIELD" partition status --parent "$CG" 2>/dev/null | grep -q "^state: \(complete\|incomplete\)"; then
        echo "== cleanup: partition undo"
        "$RTSHIELD" partition undo --parent "$CG"
    fi
    # Belt and braces: whatever undo did, put back every affinity that differs.
    local f v fixed=0
    while IFS= read -r line; do
        f=${line%%:*}; v=${line#*:}
        if [ -e "$f" ] && [ "$(cat "$f")" != "$v" ]; then
            echo "$v" >"$f" 2>/dev/null && fixed=$((fixed + 1)) || echo "could not restore $f to $v"
        fi
    done <"$IRQ_SAVE"
    [ "$fixed" -gt 0 ] && echo "cleanup restored $fixed IRQ affinities by hand"
    snapshot >"$OUT/irq-affinity-after.txt"
    effective >"$OUT/irq-effective-after.txt"
    echo
    echo "== IRQ affinities: before vs after undo"
    if diff -u "$IRQ_SAVE" "$OUT/irq-affinity-after.txt"; then
        echo "all $(wc -l <"$IRQ_SAVE") smp_affinity_list/default_smp_affinity values identical to before"
    else
        echo "DIFFERENCES above"; rc=1
    fi
    if ! diff -q "$OUT/irq-effective-before.txt" "$OUT/irq-effective-after.txt" >/dev/null; then
        echo "(effective affinities differ: the kernel picked new targets within the restored masks)"
        diff "$OUT/irq-effective-before.txt" "$OUT/irq-effective-after.txt" | grep '^[<>]' | head -20
    fi
    for sub in rt nrt ""; do [ -d "$MOUNT/$CG/$sub" ] && rmdir "$MOUNT/$CG/$sub" 2>/dev/null; done
    echo "results in $OUT"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Device IRQs (numbered lines) on CPU $CPU, and the busiest one there.
col=$((CPU + 2))
# Both from one read of /proc/interrupts: "<all device IRQs> <irq $1>".
irq_counts() {
    awk -v c="$col" -v id="$1:" '$1 ~ /^[0-9]+:$/ { s += $c } $1 == id { t = $c } END { print s + 0, t + 0 }' /proc/interrupts
}
TOP_IRQ=$(awk -v c="$col" '$1 ~ /^[0-9]+:$/ && $c > m { m = $c; id = $1; n = $NF } END { sub(":", "", id); print id }' /proc/interrupts)
TOP_NAME=$(awk -v id="$TOP_IRQ:" '$1 == id { print $NF }' /proc/interrupts)

# A private cgroup holding only what this script starts.
mkdir "$MOUNT/$CG"
cat "$MOUNT/cpuset.cpus" >"$MOUNT/$CG/cpuset.cpus"
cat "$MOUNT/cpuset.mems" >"$MOUNT/$CG/cpuset.mems"

measure() { # $1 = label, then an optional wrapper command
    local label=$1; shift
    local d0 i0 d1 i1
    read -r d0 i0 < <(irq_counts "$TOP_IRQ")
    "$@" "$RTSHIELD" measure --cpus "$CPU" --period "$PERIOD" --duration "$DURATION" --prio 98 \
        -q --out "$OUT/$label" --json "$OUT/$label.json" --label "$label" >"$OUT/$label.log" 2>&1 \
        || { cat "$OUT/$label.log"; die "measure ($label) failed"; }
    read -r d1 i1 < <(irq_counts "$TOP_IRQ")
    echo "$((d1 - d0)) $((i1 - i0))" >"$OUT/$label.irqs"
    sed -n '/^Percentiles/,/^$/p' "$OUT/$label.log"
}

RUNS="before after"
if [ "${BASELINE:-1}" = 1 ]; then
    echo "== 0. baseline: measure CPU $CPU for $DURATION, no load"
    measure baseline
    RUNS="baseline $RUNS"
    echo
fi

echo "== I/O load: stress-ng --hdd 2 (O_DIRECT) pinned to CPU $LOAD_CPU, in $MOUNT/$CG"
setsid bash -c "echo \$\$ > '$MOUNT/$CG/tasks'; exec taskset -c $LOAD_CPU stress-ng --hdd 2 --hdd-opts direct --hdd-bytes 32M --temp-path '$OUT' -q --timeout 0" &
LOAD_PID=$!
sleep 2


echo
echo "== 1. before: audit CPU $CPU"
"$RTSHIELD" audit "$CPU" --watch "$WATCH" | tee "$OUT/audit-before.txt"
echo "== 1. before: measure CPU $CPU for $DURATION"
measure before

echo
echo "== 2. shield: partition create $CPU --parent $CG --with irq"
"$RTSHIELD" partition create "$CPU" --parent "$CG" --with irq | tee "$OUT/create.txt"
echo "== 2. after: audit CPU $CPU"
"$RTSHIELD" audit "$CPU" --watch "$WATCH" | tee "$OUT/audit-after.txt"
echo "== 2. after: measure CPU $CPU inside rt for $DURATION"
measure after "$RTSHIELD" partition run rt --parent "$CG" --

echo
echo "== 3. undo"
"$RTSHIELD" partition undo --parent "$CG"

python3 - "$OUT" "$CPU" "$TOP_IRQ" "$TOP_NAME" "$DURATION" $RUNS <<'EOF'
import json, sys
out, cpu, irq, name, dur, *runs = sys.argv[1:]
print(f"\n== Summary: CPU {cpu}, SCHED_FIFO 98, {dur} per run (baseline: no load; before/after: I/O load pinned to another CPU)")
print(f"{'run':<8} {'dev IRQs on CPU':>16} {'irq ' + irq + ' (' + name + ')':>26} {'p50':>7} {'p99':>7} {'p99.9':>7} {'p99.99':>7} {'max':>7}  (us)")
for run in runs:
    r = json.load(open(f"{out}/{run}.json"))
    t = r["threads"][0]
    p = t["percentiles"]
    dev, top = open(f"{out}/{run}.irqs").read().split()
    us = lambda ns: f"{ns / 1000:.0f}"
    print(f"{run:<8} {dev:>16} {top:>26} {us(p['50']):>7} {us(p['99']):>7} {us(p['99.9']):>7} {us(p['99.99']):>7} {us(t['max_ns']):>7}")
EOF
