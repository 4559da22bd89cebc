#!/usr/bin/env bash
# rtshield noise vs oslat (rt-tests) on the same CPU, alternated round by
# round, both at SCHED_OTHER without pause (oslat's default; a real-time
# oslat would spin unbounded): the gaps of at least 1 µs each sees (rate,
# p50, p90, p99, p99.9, max), the smallest gap each can tell, and each
# loop's own cost (clock reads compared per µs). Then rtshield alone with a
# 100 ns threshold (the gaps oslat lumps into its 1 µs bucket), and the
# spinning thread's system calls under strace (only the sleep between
# windows grows; the clock read is the vDSO).
#
#   bench/noise-vs-oslat.sh                       # last CPU, 10 s x 3 rounds
#   CPU=1 DURATION=10 ROUNDS=3 bench/noise-vs-oslat.sh
#   RTSHIELD=/path/to/rtshield bench/noise-vs-oslat.sh
#
# Needs root (oslat, mlockall); installs rt-tests and strace with apt-get
# when missing. Total time ~ 2 x ROUNDS x DURATION + 15 seconds.
set -euo pipefail
# Bench runs are not results: keep them out of the user's results store.
export RTSHIELD_NO_STORE=1

here=$(cd "$(dirname "$0")/.." && pwd)
CPU=${CPU:-$(awk -F'[-,]' '{print $NF}' /sys/devices/system/cpu/online)}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-$(mktemp -d /tmp/rtshield-vs-oslat.XXXXXX)}
mkdir -p "$OUT"
# oslat's main thread goes elsewhere (rtshield moves its own off the
# measured CPU by itself).
MAIN=$(awk -F'[-,]' '{print $1}' /sys/devices/system/cpu/online)
[ "$MAIN" = "$CPU" ] && MAIN=$(awk -F'[-,]' '{print $NF}' /sys/devices/system/cpu/online)

[ "$(id -u)" = 0 ] || { echo "needs root (oslat, mlockall)" >&2; exit 1; }
need=()
command -v oslat >/dev/null || need+=(rt-tests)
command -v strace >/dev/null || need+=(strace)
if [ ${#need[@]} -gt 0 ]; then
    echo "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ -z "${RTSHIELD:-}" ]; then
    (cd "$here" && cargo build --release -q -p rtshield)
    RTSHIELD="${CARGO_TARGET_DIR:-$here/target}/release/rtshield"
fi

echo "CPU $CPU, ${DURATION} s x $ROUNDS rounds, SCHED_OTHER, gaps >= 1 us; files in $OUT"
for r in $(seq 1 "$ROUNDS"); do
    "$RTSHIELD" noise --cpus "$CPU" --duration "${DURATION}s" --threshold 1us -q \
        --json "$OUT/rtshield-$r.json" >"$OUT/rtshield-$r.txt"
    # -b 1024: 1 µs buckets up to 1023 µs (the last one holds the overflow).
    oslat -c "$CPU" -C "$MAIN" -D "$DURATION" -b 1024 -q \
        --json="$OUT/oslat-$r.json" >"$OUT/oslat-$r.txt"
done
# Gaps below 1 µs: rtshield alone (oslat counts them all as "1 us").
"$RTSHIELD" noise --cpus "$CPU" --duration "${DURATION}s" --threshold 100ns -q \
    --json "$OUT/rtshield-100ns.json" >"$OUT/rtshield-100ns.txt"

python3 - "$OUT" "$ROUNDS" <<'EOF'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
KEYS = ["50", "90", "99", "99.9"]

def rtshield(path):
    c = json.load(open(path))["cpus"][0]
    us = lambda ns: ns / 1000
    return {
        "rate": c["events"] / (c["runtime_ns"] / 1e9),
        **{k: us(c["percentiles"].get(k, 0)) for k in KEYS},
        "max": us(c["max_single_ns"]),
        "iter": c["iterations_per_us"],
        "min": c["min_gap_ns"],
        "avail": c["available_pct"],
        "free": c["iterations"] / ((c["runtime_ns"] - c["noise_ns"]) / 1e3),
    }

def oslat(path):
    t = json.load(open(path))["thread"]["0"]
    h = {int(k): v for k, v in t["histogram"].items()}
    # Bucket k holds gaps in [k-1, k) µs (k = 1024 also the overflow):
    # gaps of at least 1 µs are k >= 2, shown by their lower edge.
    gaps = sorted((k, n) for k, n in h.items() if k >= 2 and n > 0)
    total = sum(n for _, n in gaps)
    def pct(q):
        if total == 0:
            return 0
        rank, seen = q / 100 * total, 0
        for k, n in gaps:
            seen += n
            if seen >= rank:
                return k - 1
        return gaps[-1][0] - 1
    return {
        "cap": 1023,
        "rate": total / t["duration"],
        **{k: pct(float(k)) for k in KEYS},
        "max": t["max"],
        "iter": sum(h.values()) / (t["duration"] * 1e6),
        "min": None,
        "avail": None,
    }

rows = {"rtshield": [], "oslat": []}
print(f"{'round':>5} {'tool':<9} {'gaps/s':>8} {'p50':>7} {'p90':>7} {'p99':>7} {'p99.9':>7} {'max':>8}  (us)  {'iter/us':>7}")
for r in range(1, rounds + 1):
    for tool, f in (("rtshield", rtshield), ("oslat", oslat)):
        v = f(f"{out}/{tool}-{r}.json")
        rows[tool].append(v)
        p = lambda k: f"{v[k]:>7.1f}" if v.get("cap") is None or v[k] < v["cap"] else f"{'>=1023':>7}"
        print(f"{r:>5} {tool:<9} {v['rate']:>8.0f} {p('50')} {p('90')} {p('99')} {p('99.9')} {v['max']:>8.1f}        {v['iter']:>7.1f}")
print("\nMedians over the rounds (rtshield: ns-exact gaps > 1 us; oslat: 1 us buckets,")
print("lower edge shown, so up to 1 us below; oslat buckets stop at 1023 us):")
for tool, vs in rows.items():
    m = lambda k: statistics.median(v[k] for v in vs)
    spread = lambda k: max(v[k] for v in vs) - min(v[k] for v in vs)
    cap = vs[0].get("cap")
    show = lambda x: f"{x:.1f}" if cap is None or x < cap else ">=1023"
    print(f"  {tool:<9} gaps/s {m('rate'):.0f}, p50 {show(m('50'))}, p90 {show(m('90'))}, p99 {show(m('99'))}, p99.9 {show(m('99.9'))},"
          f" max {m('max'):.1f} (rounds {min(v['max'] for v in vs):.1f}..{max(v['max'] for v in vs):.1f}), iterations/us {m('iter'):.1f}")
rs = rows["rtshield"]
avail = ", ".join("%.4f" % v["avail"] for v in rs)
print(f"  rtshield % CPU available: {avail}; its loop while it has the CPU: "
      f"{statistics.median(v['free'] for v in rs):.1f} iterations/us (of runtime - noise)")
print(f"\nSmallest gap each tells apart: oslat 1 us (every shorter gap is its \"1 us\" bucket);")
print(f"rtshield the --threshold (100 ns..1 s), its loop reading the clock every {statistics.median(v['min'] for v in rs):.0f} ns at best.")
c = json.load(open(f"{out}/rtshield-100ns.json"))["cpus"][0]
sub = sum(n for b, n in c["histogram"]["counts"] if b == 0)
print(f"With --threshold 100ns: {c['events']} gaps in {c['runtime_ns']/1e9:.1f} s, {sub} of them between 100 ns and 1 us "
      f"(p50 {c['percentiles']['50']} ns), which oslat cannot tell from its loop.")
EOF

# The spinning thread's system calls: 10 and 20 windows of 100 ms every
# 200 ms (SCHED_FIFO 10): only the sleep between windows grows.
count() {
    local f="$OUT/strace-$1"
    strace -f -qq -o "$f.strace" "$RTSHIELD" noise --cpus "$CPU" --duration "$1" \
        --prio 10 --runtime 100ms --period 200ms -q --json "$f.json" >/dev/null
    local tid
    tid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cpus"][0]["tid"])' "$f.json")
    awk -v t="$tid" '$1==t && $2 !~ /^<\.\.\./ { sub(/\(.*/, "", $2); n[$2]++ }
        END { for (s in n) printf "%s %d\n", s, n[s] }' "$f.strace" | sort
}
a=$(count 2s)
b=$(count 4s)
echo
echo "== spinning thread system calls, strace -f: 10 vs 20 windows (2 s vs 4 s)"
join -a1 -a2 -e0 -o 0,1.2,2.2 <(echo "$a") <(echo "$b") |
    awk '{ note = ($3 == $2 ? "fixed (set-up/exit)" : "GROWS: not expected")
           if ($1 == "clock_nanosleep") note = "<- the sleep between windows (50 ms slices)"
           printf "  %-20s %6d %6d   %s\n", $1, $2, $3, note }'
echo "(clock_gettime never appears: it is a vDSO call)"
