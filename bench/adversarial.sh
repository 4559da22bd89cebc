#!/usr/bin/env bash
# Replay, as an unprivileged user against root's rtshield, the attacks of
# the security review (symlinks, state files, races, full disk, huge
# inputs). Each prints `held` or `BROKEN` with what was seen.
#
#   sudo bench/adversarial.sh            # uses target/release or target/debug
#   sudo RTSHIELD=/path/to/rtshield bench/adversarial.sh
#   ADV_USER=someone (default nobody), ADV_RACE_SECONDS (default 20)
#
# It changes nothing machine-wide: everything happens in a private temp
# dir (removed on exit); the one mount (a small tmpfs for the full-disk
# case) is unmounted by the exit trap. fs.protected_symlinks is NOT
# changed: the attacks use directories the attacker owns (not sticky), where
# that protection does not apply anyway.
#
# Which component each attack depends on (on a branch without that
# component the attack is expected to print BROKEN):
#   a, b1      measure/run result writes through sys::safefs (output_dir, SafeDir)
#   b2, d      report -o through SafeDir (this branch)
#   c          partition state checks and path validation (this branch)
#   e          full-disk handling: retries + named fallback (data-loss work)
#   f          bounded input reads (input-limits work: safefs::read_input in report)
set -u
# Bench runs are not results: keep them out of the user's results store.
export RTSHIELD_NO_STORE=1

[ "$(id -u)" = 0 ] || { echo "run as root (the attacks target root's rtshield)" >&2; exit 1; }

HERE=$(cd "$(dirname "$0")/.." && pwd)
BIN=${RTSHIELD:-}
if [ -z "$BIN" ]; then
    for b in target/release/rtshield target/debug/rtshield; do
        if [ -x "$HERE/$b" ]; then BIN=$HERE/$b; break; fi
    done
fi
if [ -z "$BIN" ]; then
    (cd "$HERE" && cargo build -q) || exit 1
    BIN=$HERE/target/debug/rtshield
fi
ADV_USER=${ADV_USER:-nobody}
AUID=$(id -u "$ADV_USER") || exit 1
AGID=$(id -g "$ADV_USER") || exit 1
RACE_SECONDS=${ADV_RACE_SECONDS:-20}
FIX=$HERE/tests/fixtures/report/real

as_user() { setpriv --reuid="$AUID" --regid="$AGID" --clear-groups -- "$@"; }

WORK=$(mktemp -d /tmp/rtshield-adv.XXXXXX)
chmod 755 "$WORK"
FULL=$WORK/full
BG_PIDS=()
cleanup() {
    for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    if mountpoint -q "$FULL" 2>/dev/null; then umount "$FULL"; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The attacker's own directory (like a home directory): not sticky, so
# fs.protected_symlinks never stops root following links planted here.
ATT=$WORK/attacker
mkdir "$ATT" && chown "$AUID:$AGID" "$ATT" && chmod 755 "$ATT"

HELD=0
BROKEN=0
verdict() { # id ok(1/0) text
    if [ "$2" = 1 ]; then
        printf '%-4s held    %s\n' "$1" "$3"
        HELD=$((HELD + 1))
    else
        printf '%-4s BROKEN  %s\n' "$1" "$3"
        BROKEN=$((BROKEN + 1))
    fi
}
first_err() { head -c 300 "$1" | tr '\n' ' ' | sed 's/  */ /g'; }

MEASURE=(measure --duration 1s --period 1ms --policy other -q --no-memlock --no-dma-latency --cpus 0)
NAMES="results.json results.csv histogram.txt timer_thread00.txt timeline.csv"

# Plant symlinks to VICTIM in each DIR (as the attacker) for every name
# rtshield writes and for the old predictable temporary names
# (.NAME.tmp<PID>) of the next NPIDS PIDs (a busy machine uses PIDs fast,
# so this part is best effort; symlinks are slow to create by the thousand). One python process, so that
# planting does not itself use up the PIDs it predicts.
plant() { # npids victim dir...
    as_user /usr/bin/python3 - "$@" <<'EOF'
import os, sys
npids, victim, dirs = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
names = "results.json results.csv histogram.txt timer_thread00.txt timeline.csv".split()
last = int(open("/proc/sys/kernel/ns_last_pid").read())
for d in dirs:
    os.makedirs(d, mode=0o777, exist_ok=True)
    os.chmod(d, 0o777)
    for n in names:
        os.symlink(victim, os.path.join(d, n))
    for pid in range(last + 1, last + 1 + npids):
        for n in names[:4]:
            os.symlink(victim, os.path.join(d, ".%s.tmp%d" % (n, pid)))
EOF
}

echo "rtshield adversarial replay: $BIN as root, attacker $ADV_USER (uid $AUID)"
echo "fs.protected_symlinks=$(cat /proc/sys/fs/protected_symlinks) (not changed)"
echo

# --- (a) symlinks planted in a pre-created output directory -------------
# a1: measure --out DIR, DIR made by the attacker with links inside.
V=$WORK/victim-a1; echo precious > "$V"
plant 300 "$V" "$ATT/out-a1"
(cd "$WORK" && timeout 60 "$BIN" "${MEASURE[@]}" --out "$ATT/out-a1" >"$WORK/a1.out" 2>"$WORK/a1.err"); rc=$?
if [ "$(cat "$V")" = precious ]; then
    verdict a1 1 "measure --out <attacker's dir with links>: victim intact (exit $rc: $(first_err "$WORK/a1.err"))"
else
    verdict a1 0 "measure --out <attacker's dir with links>: victim overwritten (exit $rc)"
fi

# a2: run CFG --out DIR (timeline.csv was written in place).
cat >"$WORK/a2.cfg" <<'EOF'
main
{
  stats.period 100 ms
}
timer_thread[0]
{
  cpu_affinity 0
  sched.policy OTHER
  period 1 ms
  lifetime.duration 1 s
}
EOF
V=$WORK/victim-a2; echo precious > "$V"
plant 300 "$V" "$ATT/out-a2"
(cd "$WORK" && timeout 60 "$BIN" run -q "$WORK/a2.cfg" --out "$ATT/out-a2" >"$WORK/a2.out" 2>"$WORK/a2.err"); rc=$?
if [ "$(cat "$V")" = precious ]; then
    verdict a2 1 "run --out <attacker's dir with links>: victim intact (exit $rc: $(first_err "$WORK/a2.err"))"
else
    verdict a2 0 "run --out <attacker's dir with links>: victim overwritten (exit $rc)"
fi

# a3: the default ./rtshield-results/STAMP, predicted by the attacker: the
# parent and the next 4 seconds' stamps made in advance, links inside.
V=$WORK/victim-a3; echo precious > "$V"
CWD3=$WORK/cwd-a3; mkdir "$CWD3"; chmod 1777 "$CWD3"
as_user mkdir -m 777 "$CWD3/rtshield-results"
now=$(date -u +%s)
stamps=()
for i in $(seq 0 3); do
    stamps+=("$CWD3/rtshield-results/$(date -u -d "@$((now + i))" +%Y%m%d-%H%M%S)")
done
plant 50 "$V" "${stamps[@]}"
(cd "$CWD3" && timeout 60 "$BIN" "${MEASURE[@]}" >"$WORK/a3.out" 2>"$WORK/a3.err"); rc=$?
if [ "$(cat "$V")" = precious ]; then
    verdict a3 1 "measure (default rtshield-results/STAMP, predicted): victim intact (exit $rc: $(first_err "$WORK/a3.err"))"
else
    verdict a3 0 "measure (default rtshield-results/STAMP, predicted): victim overwritten (exit $rc)"
fi

# --- (b) a world-writable --out directory (no sticky bit) ---------------
# Anyone could swap files in it while root writes: refused (exit 2) unless
# --force-unsafe-dir.
mkdir -m 777 "$WORK/ww-b1"; chmod 777 "$WORK/ww-b1"
(cd "$WORK" && timeout 60 "$BIN" "${MEASURE[@]}" --out "$WORK/ww-b1" >"$WORK/b1.out" 2>"$WORK/b1.err"); rc=$?
if [ $rc = 2 ] && grep -q -- --force-unsafe-dir "$WORK/b1.err" && [ -z "$(ls -A "$WORK/ww-b1")" ]; then
    verdict b1 1 "measure --out <mode 777 dir>: refused, exit 2"
else
    verdict b1 0 "measure --out <mode 777 dir>: exit $rc, $(ls -A "$WORK/ww-b1" | wc -l) files written"
fi
mkdir -m 777 "$WORK/ww-b2"; chmod 777 "$WORK/ww-b2"
timeout 60 "$BIN" report "$FIX/idle" -o "$WORK/ww-b2" --format md >"$WORK/b2.out" 2>"$WORK/b2.err"; rc=$?
if [ $rc = 2 ] && grep -q -- --force-unsafe-dir "$WORK/b2.err" && [ -z "$(ls -A "$WORK/ww-b2")" ]; then
    verdict b2 1 "report -o <mode 777 dir>: refused, exit 2"
else
    verdict b2 0 "report -o <mode 777 dir>: exit $rc, $(ls -A "$WORK/ww-b2" | wc -l) files written"
fi

# --- (c) planted partition state on a fake --sysroot tree ---------------
# A minimal cgroup v2 tree: enough for `partition undo` to find its hierarchy.
mktree() { # dir
    mkdir -p "$1/proc/self" "$1/sys/fs/cgroup" "$1/proc/irq" "$1/run/rtshield"
    echo "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec - cgroup2 cgroup2 rw" >"$1/proc/self/mountinfo"
    echo "cpuset cpu io memory" >"$1/sys/fs/cgroup/cgroup.controllers"
}
# The state undo would act on: writes `pwned` to a file outside the tree
# through `..`, removes a directory outside it, writes /etc/... in the tree.
state_json() { # victim-relative-escape victimdir-escape
    cat <<EOF
{ "version": 1, "phase": "complete", "created_unix": 0,
  "hierarchy": { "kind": "v2", "mount": "/sys/fs/cgroup" },
  "parent": "/sys/fs/cgroup", "rt_dir": "/sys/fs/cgroup/rt", "nrt_dir": "/sys/fs/cgroup/nrt",
  "rt_cpus": "1", "nrt_cpus": "0",
  "dirs": [ "/sys/fs/cgroup/../../../../$2" ],
  "files": [ { "knob": "sysctl", "path": "/etc/hostname", "old": "pwned\n", "new": "x\n" },
             { "knob": "irq", "path": "/proc/irq/../../../$1", "old": "pwned\n", "new": "x\n" } ],
  "tasks": [] }
EOF
}
check_c() { # id what tree victim victimdir err rc
    local intact=1
    [ "$(cat "$4")" = precious ] || intact=0
    [ -d "$5" ] || intact=0
    [ "$(cat "$3/etc/hostname" 2>/dev/null)" = precious ] || intact=0
    if [ "$7" = 2 ] && [ $intact = 1 ]; then
        verdict "$1" 1 "$2: refused, exit 2, nothing changed ($(first_err "$6"))"
    else
        verdict "$1" 0 "$2: exit $7, victim/victimdir/etc intact=$intact"
    fi
}
# c1: the tree and its state file belong to the attacker.
T=$WORK/attacker/tree-c1
as_user bash -c "$(declare -f mktree); mktree '$T'; mkdir -p '$T/etc'; echo precious > '$T/etc/hostname'"
echo precious >"$WORK/victim-c1"; mkdir "$WORK/victimdir-c1"
# The tree is two levels below WORK: `../../../` from /proc/irq reaches $WORK/attacker.
state_json ../victim-c1 ../victimdir-c1 | as_user tee "$T/run/rtshield/partition.json" >/dev/null
as_user chmod 600 "$T/run/rtshield/partition.json"; as_user chmod 700 "$T/run/rtshield"
timeout 30 "$BIN" --sysroot "$T" partition undo >"$WORK/c1.out" 2>"$WORK/c1.err"; rc=$?
check_c c1 "undo with the attacker's state file (owned by uid $AUID, 0600)" "$T" "$WORK/victim-c1" "$WORK/victimdir-c1" "$WORK/c1.err" $rc
# c2: a root-owned, private (0600 in 0700) state file whose paths escape
# with `..` and leave the knob roots: path validation alone must stop it.
T=$WORK/tree-c2
mktree "$T"; mkdir -p "$T/etc"; echo precious >"$T/etc/hostname"
echo precious >"$WORK/victim-c2"; mkdir "$WORK/victimdir-c2"
chmod 700 "$T/run/rtshield"
(umask 077; state_json victim-c2 victimdir-c2 >"$T/run/rtshield/partition.json")
timeout 30 "$BIN" --sysroot "$T" partition undo >"$WORK/c2.out" 2>"$WORK/c2.err"; rc=$?
check_c c2 "undo with a root-owned state holding '..' and /etc paths" "$T" "$WORK/victim-c2" "$WORK/victimdir-c2" "$WORK/c2.err" $rc
# c3: state file names: a state saved for --parent a-b must not be taken
# by `undo --parent a_b` (it was: both named partition-a_b.json).
T=$WORK/tree-c3
mktree "$T"; mkdir -p "$T/sys/fs/cgroup/a-b/rt" "$T/sys/fs/cgroup/a_b"
chmod 700 "$T/run/rtshield"
(umask 077; cat >"$T/run/rtshield/partition-a_b.json" <<'EOF'
{ "version": 1, "phase": "complete", "created_unix": 0,
  "hierarchy": { "kind": "v2", "mount": "/sys/fs/cgroup" },
  "parent": "/sys/fs/cgroup/a-b", "rt_dir": "/sys/fs/cgroup/a-b/rt", "nrt_dir": "/sys/fs/cgroup/a-b/nrt",
  "rt_cpus": "1", "nrt_cpus": "0",
  "dirs": [ "/sys/fs/cgroup/a-b/rt" ], "files": [], "tasks": [] }
EOF
)
timeout 30 "$BIN" --sysroot "$T" partition undo --parent a_b >"$WORK/c3.out" 2>"$WORK/c3.err"; rc=$?
if [ -d "$T/sys/fs/cgroup/a-b/rt" ]; then
    verdict c3 1 "undo --parent a_b beside a-b's (old-style) state: a-b/rt kept (exit $rc: $(first_err "$WORK/c3.out"))"
else
    verdict c3 0 "undo --parent a_b removed the partition of a-b (exit $rc)"
fi

# --- (d) report -o: race and manifest deletion ---------------------------
# d1: DIR is the attacker's: it passes the checks with a manifest naming
# `latency-precious.dat` (a name a report writes), then is swapped for a
# link to root's directory holding a `latency-precious.dat`, over and over,
# while root writes reports into it (with --force-unsafe-dir when the
# build has it, so the directory-fd logic itself is what is tested).
ROOTDIR=$WORK/rootdir-d1; mkdir "$ROOTDIR"; echo precious >"$ROOTDIR/latency-precious.dat"
as_user bash -c "mkdir '$ATT/out-d1' && ln -s '$ROOTDIR' '$ATT/link-d1'"
# The swap is renameat2(RENAME_EXCHANGE) in a tight loop: DIR is always
# either the real directory or the link, flipping every few microseconds;
# the manifest and the bait file are planted again and again through a
# descriptor of the real directory.
# (setpriv directly, not the as_user function: $! must be the swapper itself.)
setpriv --reuid="$AUID" --regid="$AGID" --clear-groups -- /usr/bin/python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(sys.argv[1])
fd = os.open("out-d1", os.O_RDONLY | os.O_DIRECTORY)
def put(name, text):
    try:  # root may rename its own file in at any moment: just try again later
        os.unlink(name, dir_fd=fd)
    except OSError:
        pass
    try:
        f = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=fd)
        os.write(f, text.encode())
        os.close(f)
    except OSError:
        pass
i = 0
while True:
    if i % 64 == 0:
        put(".rtshield-report", "latency-precious.dat\nsummary.md\nsummary.csv\n")
        put("latency-precious.dat", "mine\n")
    libc.renameat2(-100, b"out-d1", -100, b"link-d1", 2)  # RENAME_EXCHANGE
    i += 1
' "$ATT" &
BG_PIDS+=($!)
FORCE=()
"$BIN" report --help | grep -q -- --force-unsafe-dir && FORCE=(--force-unsafe-dir)
end=$((SECONDS + RACE_SECONDS)); tries=0; ok=0
while [ $SECONDS -lt $end ]; do
    "$BIN" report "$FIX/idle" -o "$ATT/out-d1" --format md,csv "${FORCE[@]}" >/dev/null 2>&1 && ok=$((ok + 1))
    tries=$((tries + 1))
    [ -f "$ROOTDIR/latency-precious.dat" ] || break
done
kill "${BG_PIDS[-1]}" 2>/dev/null; wait "${BG_PIDS[-1]}" 2>/dev/null; unset 'BG_PIDS[-1]'
extra=$(ls -A "$ROOTDIR" | grep -vx latency-precious.dat | tr '\n' ' ')
if [ "$(cat "$ROOTDIR/latency-precious.dat" 2>/dev/null)" = precious ] && [ -z "$extra" ]; then
    verdict d1 1 "report -o <dir swapped with a link> ${FORCE[*]}: $tries tries ($ok wrote a report), root's dir untouched"
else
    verdict d1 0 "report -o <dir swapped with a link> ${FORCE[*]}: after $tries tries root's dir lost latency-precious.dat or got: ${extra:-nothing}"
fi
# d2: DIR is a link to root's own earlier report (more curves): writing
# through it rewrote root's report and removed its files.
"$BIN" report "$FIX/idle" "$FIX/hell" -o "$WORK/rootrep-d2" >/dev/null 2>&1
before=$(cd "$WORK/rootrep-d2" && ls -A | sort | md5sum)
as_user ln -s "$WORK/rootrep-d2" "$ATT/out-d2"
timeout 60 "$BIN" report "$FIX/idle" -o "$ATT/out-d2" "${FORCE[@]}" >"$WORK/d2.out" 2>"$WORK/d2.err"; rc=$?
after=$(cd "$WORK/rootrep-d2" && ls -A | sort | md5sum)
if [ "$before" = "$after" ]; then
    verdict d2 1 "report -o <link to root's report>: root's report untouched (exit $rc: $(first_err "$WORK/d2.err"))"
else
    verdict d2 0 "report -o <link to root's report>: root's report rewritten/files removed (exit $rc)"
fi

# --- (e) full disk --------------------------------------------------------
mkdir "$FULL"
if mount -t tmpfs -o size=256k,mode=755 rtshield-adv "$FULL"; then
    mkdir "$FULL/out"
    dd if=/dev/zero of="$FULL/filler" bs=4k >/dev/null 2>&1 # until ENOSPC
    (cd "$WORK" && timeout 60 "$BIN" measure --duration 2s --period 1ms --policy other -q --no-memlock --no-dma-latency --cpus 0 --out "$FULL/out" >"$WORK/e.out" 2>"$WORK/e.err"); rc=$?
    found=""
    [ -s "$FULL/out/results.json" ] && found="$FULL/out"
    if [ -z "$found" ]; then
        for p in $(grep -o '/[^ :,;"'"'"')]*' "$WORK/e.err" | sort -u); do
            for q in "$p" "$(dirname "$p")"; do
                if [ -s "$q/results.json" ]; then found=$q; break 2; fi
                if [ "$(basename "$q")" = results.json ] && [ -s "$q" ]; then found=$q; break 2; fi
            done
        done
    fi
    summary=0; grep -qi 'max' "$WORK/e.out" && summary=1
    if [ -n "$found" ] && [ $summary = 1 ]; then
        verdict e 1 "measure --out <full tmpfs>: exit $rc, summary printed, results at $found"
    else
        verdict e 0 "measure --out <full tmpfs>: exit $rc, summary printed=$summary, no results and no named fallback ($(first_err "$WORK/e.err"))"
    fi
    # Fallback files the run may have left outside $WORK are the run's own
    # results: named in the output above, left for inspection.
    umount "$FULL"
else
    verdict e 0 "could not mount a tmpfs to fill (not run)"
fi

# --- (f) huge and endless inputs -----------------------------------------
# Each under timeout and an address-space cap (so a broken build cannot
# take the machine down); held = exit 2 within 10 s with max RSS < 300 MB.
huge() { # id what input
    local t0=$SECONDS rc rss
    /usr/bin/time -f '%M' -o "$WORK/$1.rss" timeout 10 prlimit --as=$((1 << 30)) \
        "$BIN" report "$3" -o "$WORK/out-$1" >"$WORK/$1.out" 2>"$WORK/$1.err"
    rc=$?
    rss=$(tail -1 "$WORK/$1.rss" 2>/dev/null | tr -dc 0-9); rss=$(( ${rss:-0} / 1024 ))
    if [ $rc = 2 ] && [ $rss -lt 300 ] && [ $((SECONDS - t0)) -lt 10 ]; then
        verdict "$1" 1 "report $2: exit 2 in $((SECONDS - t0)) s, max RSS $rss MB ($(first_err "$WORK/$1.err"))"
    else
        verdict "$1" 0 "report $2: exit $rc after $((SECONDS - t0)) s, max RSS $rss MB"
    fi
}
huge f1 /dev/zero /dev/zero
mkfifo "$WORK/fifo"; huge f2 "a FIFO nobody writes" "$WORK/fifo"
{ printf '{"schema": "rtshield.results/1", "threads": [ '; head -c $((200 << 20)) /dev/zero | tr '\0' ' '; } >"$WORK/big.json"
huge f3 "a 200 MB results.json" "$WORK/big.json"
rm -f "$WORK/big.json"

echo
echo "$HELD held, $BROKEN BROKEN"
[ $BROKEN = 0 ]
