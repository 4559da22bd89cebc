#!/usr/bin/env bash
# rtshield noise vs oslat (rt-tests) on the same CPU, alternated round by
# round, both at SCHED_OTHER without pause (oslat's default; a real-time
# oslat would spin unbounded): the gaps of at least 1 µs each sees (rate,
# p50, p90, p99, p99.9, max), the smallest gap each can tell, and each
# loop's own cost (clock reads compared per µs). Then rtshield alone with a
# 100 ns threshold (the gaps oslat lumps into its 1 µs bucket), and the
# spinning thread's system calls under strace by phase (between its first
# and last sleep only the sleep itself; the clock read is the vDSO).
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
CAP = 1023  # oslat -b 1024: its last bucket holds every gap from 1023 us on

def stats(per_us, seconds, maxi, iters):
    """per_us: {floor(gap in us): count} for gaps >= 1 us. Percentiles over
    the gaps both tools bin alike (1..1022 us), the share beyond, the rate."""
    inside = sorted((k, n) for k, n in per_us.items() if 1 <= k < CAP and n > 0)
    total_in = sum(n for _, n in inside)
    total = sum(n for k, n in per_us.items() if k >= 1)
    def pct(q):
        rank, seen = q / 100 * total_in, 0
        for k, n in inside:
            seen += n
            if seen >= rank:
                return k
        return 0
    return {"rate": total / seconds, "over": 100 * (total - total_in) / max(total, 1),
            **{k: pct(float(k)) for k in KEYS}, "max": maxi, "iter": iters}

def noise(path):
    """rtshield's results.json (kind noise): the CPU's noise figures and its
    thread (the noise lengths' histogram and percentiles)."""
    d = json.load(open(path))
    return d["noise"]["cpus"][0], d["threads"][0]

def rtshield(path):
    c, t = noise(path)
    h = t["histogram"]  # 1 us buckets (index = floor(gap/1 us)) up to 10 ms
    per_us = {b: n for b, n in h["counts"]}
    per_us[CAP] = per_us.get(CAP, 0) + h["overflow"]
    v = stats(per_us, c["runtime_ns"] / 1e9, c["max_single_ns"] / 1000, c["iterations_per_us"])
    v.update(min=c["min_gap_ns"], avail=c["available_pct"],
             free=c["iterations"] / ((c["runtime_ns"] - c["noise_ns"]) / 1e3),
             exact={k: t["percentiles"][k] / 1000 for k in KEYS})
    return v

def oslat(path):
    t = json.load(open(path))["thread"]["0"]
    h = {int(k): v for k, v in t["histogram"].items()}
    # Bucket label k holds iterations of [k-1, k) us: floor = k - 1.
    per_us = {k - 1: n for k, n in h.items()}
    n = sum(h.values())
    v = stats(per_us, t["duration"], t["max"], n / (t["duration"] * 1e6))
    # Time in gaps >= 1 us: bucket midpoints, plus what oslat added past its
    # last bucket (avg x count = sum of labels + that overflow, in us).
    overflow_us = t["avg"] * n - sum(k * c for k, c in h.items())
    gap_us = sum(c * (k - 0.5) for k, c in h.items() if k >= 2) + overflow_us
    dur_us = t["duration"] * 1e6
    v.update(avail=100 * (dur_us - gap_us) / dur_us, free=n / (dur_us - gap_us))
    return v

rows = {"rtshield": [], "oslat": []}
print("Gaps of at least 1 us, in whole us (floor, as oslat bins them); percentiles over")
print(f"the gaps of 1..{CAP - 1} us that both bin alike, '>={CAP}' the share of longer ones.")
print(f"{'round':>5} {'tool':<9} {'gaps/s':>7} {'>=1023':>7} {'p50':>5} {'p90':>5} {'p99':>5} {'p99.9':>6} {'max us':>9} {'iter/us':>8}")
for r in range(1, rounds + 1):
    for tool, f in (("rtshield", rtshield), ("oslat", oslat)):
        v = f(f"{out}/{tool}-{r}.json")
        rows[tool].append(v)
        print(f"{r:>5} {tool:<9} {v['rate']:>7.0f} {v['over']:>6.1f}% {v['50']:>5} {v['90']:>5} {v['99']:>5} {v['99.9']:>6} {v['max']:>9.1f} {v['iter']:>8.1f}")
print("\nMedians over the rounds (and the spread: smallest..largest round):")
for tool, vs in rows.items():
    m = lambda k: statistics.median(v[k] for v in vs)
    sp = lambda k: f"{min(v[k] for v in vs):g}..{max(v[k] for v in vs):g}"
    print(f"  {tool:<9} gaps/s {m('rate'):.0f}, >=1023 us {m('over'):.1f}%, p50 {m('50'):g} ({sp('50')}), p90 {m('90'):g} ({sp('90')}),"
          f" p99 {m('99'):g} ({sp('99')}), p99.9 {m('99.9'):g} ({sp('99.9')}), max {m('max'):.0f} ({sp('max')}) us,"
          f" {m('iter'):.1f} iterations/us")
rs = rows["rtshield"]
ex = {k: statistics.median(v["exact"][k] for v in rs) for k in KEYS}
print(f"  rtshield exact (ns, every gap > 1 us): p50 {ex['50']:.1f}, p90 {ex['90']:.1f}, p99 {ex['99']:.1f}, p99.9 {ex['99.9']:.1f} us")
print("Each loop's cost while it has the CPU (iterations / (runtime - time in gaps >= 1 us);")
print("oslat's gap time estimated from its bucket midpoints and its average):")
for tool, vs in rows.items():
    avail = ", ".join("%.2f" % v["avail"] for v in vs)
    free = statistics.median(v["free"] for v in vs)
    print(f"  {tool:<9} {free:.1f} iterations/us ({1000 / free:.1f} ns each); % CPU available per round {avail}")
print("\nSmallest gap each tells apart: oslat 1 us (every shorter gap is its \"1 us\" bucket);")
print(f"rtshield the --threshold (100 ns..1 s), its loop reading the clock every {statistics.median(v['min'] for v in rs):.0f} ns at best.")
c, t = noise(f"{out}/rtshield-100ns.json")
sub = sum(n for b, n in t["histogram"]["counts"] if b == 0)
print(f"With --threshold 100ns: {c['events']} gaps in {c['runtime_ns']/1e9:.1f} s, {sub} of them between 100 ns and 1 us "
      f"(p50 {t['percentiles']['50']} ns), which oslat cannot tell from its loop.")
EOF

# The spinning thread's system calls: 10 and 20 windows of 100 ms every
# 200 ms (SCHED_FIFO 10), split by phase: set-up (before its first sleep),
# the windows (from its first sleep to its last: the loop runs there) and
# exit (after its last sleep). Only the sleep may appear in the windows; the
# set-up and exit calls are fixed but for glibc's thread arena (its first
# malloc maps 128 MiB and unmaps the misaligned part: one munmap or two,
# depending on where the mapping lands).
count() {
    local f="$OUT/strace-$1"
    strace -f -qq -o "$f.strace" "$RTSHIELD" noise --cpus "$CPU" --duration "$1" \
        --prio 10 --runtime 100ms --period 200ms -q --json "$f.json" >/dev/null
    local tid
    tid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["noise"]["cpus"][0]["tid"])' "$f.json")
    awk -v t="$tid" '$1==t && $2 !~ /^<\.\.\./ {
            name = $2; sub(/\(.*/, "", name)
            if (name == "clock_nanosleep") { slept = 1; sleeps++; for (k in buf) win[k] += buf[k]; delete buf; next }
            if (!slept) setup[name]++; else buf[name]++
        }
        END {
            for (k in setup) printf "set-up %s %d\n", k, setup[k]
            for (k in win) printf "windows %s %d\n", k, win[k]
            for (k in buf) printf "exit %s %d\n", k, buf[k]
            printf "windows clock_nanosleep %d\n", sleeps
        }' "$f.strace" | sort
}
a=$(count 2s)
b=$(count 4s)
echo
echo "== spinning thread system calls, strace -f: 10 vs 20 windows (2 s vs 4 s), by phase"
join -a1 -a2 -e0 -o 0,1.2,2.2 <(echo "$a" | awk '{print $1 ":" $2, $3}' | sort) \
    <(echo "$b" | awk '{print $1 ":" $2, $3}' | sort) |
    awk '{ split($1, p, ":"); phase = p[1]; call = p[2]
           if (phase == "windows" && call == "clock_nanosleep") note = "<- the sleep between windows (50 ms slices)"
           else if (phase == "windows") { note = "BUG: a system call while the windows run"; bad = 1 }
           else if ($2 == $3) note = "fixed"
           else if (call == "munmap" && phase == "set-up") note = "glibc arena alignment (one or two unmaps)"
           else note = "differs: not expected"
           printf "  %-8s %-20s %6d %6d   %s\n", phase, call, $2, $3, note }
         END { print (bad ? "UNEXPECTED: system calls besides the sleep between the first and the last window" \
                           : "between the first and the last window: no system call but the sleep") }'
echo "(clock_gettime never appears: it is a vDSO call)"
