#!/usr/bin/env bash
# PostgreSQL store figures (issue: a shared store for a lab of boards), on a
# private server this script starts (initdb in a temporary directory, a Unix
# socket only, stopped on exit) with PostgreSQL's default durability:
#  1. push throughput: `rtshield runs push` of N runs (1 000-bucket
#     histograms, as bench/store.sh makes them) from a local SQLite store,
#     one transaction per run;
#  2. `rtshield runs list --group-by host,kernel` over BIG runs (target < 1 s).
#     The BIG runs are made on the server from the pushed ones (INSERT …
#     SELECT, 40 hosts × 12 kernels, their threads copied, their lossless
#     result left out): pushing 100 000 runs would only measure step 1 again.
# Usage: bench/store-pg.sh [N=2000] [BIG=100000]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
big=${2:-100000}
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bindir/initdb" ] || { echo "PostgreSQL server not installed (apt-get install postgresql)" >&2; exit 1; }
tmp=$(mktemp -d)     # the server's (owned by postgres when run as root)
mine=$(mktemp -d)    # the local store's
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# initdb refuses to run as root: the server runs as the postgres user.
[ "$(id -u)" = 0 ] && chown postgres: "$tmp"
started=
cleanup() {
  [ -n "$started" ] && as_pg "$bindir/pg_ctl" -D "$tmp/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$tmp" "$mine"
}
trap cleanup EXIT
as_pg "$bindir/initdb" -D "$tmp/data" -U rtshield --auth=trust --no-sync >/dev/null
as_pg "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/log" -w -o "-k $tmp -c listen_addresses=''" start >/dev/null
started=1
url="postgresql://rtshield@${tmp//\//%2F}/postgres"
psql() { "$bindir/psql" -q -X -v ON_ERROR_STOP=1 -h "$tmp" -U rtshield -d postgres "$@"; }

cargo build --release -q -p rtshield-store --example store_bench
cargo build --release -q --bin rtshield
local_db="$mine/local.db"
target/release/examples/store_bench "$local_db" "$n" >/dev/null
ns() { date +%s%N; }
s=$(ns)
target/release/rtshield runs --store "$local_db" push --to "$url" >/dev/null
e=$(ns)
echo "push of $n runs: $(( (e - s) / 1000000 )) ms, $(( n * 1000000000 / (e - s) )) runs/s"
s=$(ns)
out=$(target/release/rtshield runs --store "$local_db" push --to "$url")
e=$(ns)
echo "push again (all already there): $(( (e - s) / 1000000 )) ms ($out)"

# BIG runs: copies of the pushed ones spread over 40 hosts x 12 kernels.
copies=$(( (big + n - 1) / n - 1 ))
psql <<SQL
INSERT INTO runs (uuid, host, kernel, kernel_version, preempt, arch, cpu_model, tool, label,
                  started, duration_s, end_reason, mode, source, stored_at, summary, result)
SELECT r.uuid || '-' || g, 'board-' || ((r.id + g) % 40), '6.' || ((r.id * 7 + g) % 12) || '.0',
       r.kernel_version, r.preempt, r.arch, r.cpu_model, r.tool, r.label, r.started,
       r.duration_s, r.end_reason, r.mode, 'bench:' || r.id, r.stored_at, r.summary, '{}'
FROM runs r, generate_series(1, $copies) g;
INSERT INTO threads
SELECT c.id, t.idx, t.cpu, t.samples, t.min_ns, t.avg_ns, t.max_ns + (c.id % 997) * 1000,
       t.p50_ns, t.p99_ns, t.p999_ns + (c.id % 89) * 100, t.p9999_ns, t.overruns,
       t.missed_periods, t.lost
FROM runs c JOIN threads t ON t.run_id = substr(c.source, 7)::bigint
WHERE c.source LIKE 'bench:%';
ANALYZE;
SQL
total=$(psql -t -A -c "SELECT count(*) FROM runs")
ms() { local s e; s=$(ns); "$@" >/dev/null; e=$(ns); echo $(( (e - s) / 1000000 )); }
groups=$(target/release/rtshield runs --store "$url" list --group-by host,kernel | tail -1)
echo "runs list --group-by host,kernel over $total runs: $(ms target/release/rtshield runs --store "$url" list --group-by host,kernel) ms ($groups)"
echo "runs list --group-by kernel --where 'host=board-7' over $total runs: $(ms target/release/rtshield runs --store "$url" list --group-by kernel --where host=board-7) ms"
echo "database size: $(psql -t -A -c "SELECT pg_size_pretty(pg_database_size('postgres'))")"

# The same BIG runs in the local SQLite store (python3's sqlite3 module),
# for the same query on the other backend.
python3 - "$local_db" "$copies" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
k = int(sys.argv[2])
db.execute("""INSERT INTO runs (uuid, host, kernel, kernel_version, preempt, arch, cpu_model, tool, label,
        started, duration_s, end_reason, mode, source, stored_at, summary, result)
    SELECT r.uuid || '-' || g.value, 'board-' || ((r.id + g.value) % 40), '6.' || ((r.id * 7 + g.value) % 12) || '.0',
        r.kernel_version, r.preempt, r.arch, r.cpu_model, r.tool, r.label, r.started, r.duration_s,
        r.end_reason, r.mode, 'bench:' || r.id, r.stored_at, r.summary, '{}'
    FROM runs r, (WITH RECURSIVE s(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM s WHERE value < ?)
                  SELECT value FROM s) g""", (k,))
db.execute("""INSERT INTO threads SELECT c.id, t.idx, t.cpu, t.samples, t.min_ns, t.avg_ns,
        t.max_ns + (c.id % 997) * 1000, t.p50_ns, t.p99_ns, t.p999_ns + (c.id % 89) * 100, t.p9999_ns,
        t.overruns, t.missed_periods, t.lost
    FROM runs c JOIN threads t ON t.run_id = CAST(substr(c.source, 7) AS INTEGER)
    WHERE c.source LIKE 'bench:%'""")
db.commit()
db.execute("ANALYZE")
PY
echo "SQLite: runs list --group-by host,kernel over the same runs: $(ms target/release/rtshield runs --store "$local_db" list --group-by host,kernel) ms"
