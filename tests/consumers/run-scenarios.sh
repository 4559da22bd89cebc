#!/usr/bin/env bash
# The three runs of issue 22's consumer check, end to end, as root:
#   (a) a fresh 5 s `rtshield measure --cpus 1 --period 200us --duration 5s`
#   (b) the same failing its limit: --max-latency 1us (exit 3)
#   (c) a real `cyclictest --json` run without -h (and one with -h 1000
#       --histfile) read back through `rtshield report` and `runs import`
# then tests/consumers/check.py on each. Everything is written under one
# temporary directory with a private HOME (the user's results store is not
# touched); the measurements hold /tmp/rtshield-live.lock like the live
# tests. Usage: run-scenarios.sh [--rtshield BIN] [--keep DIR] [--strict]
# Exit status: 0 when every consumer's verdict is PASS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="" keep="" strict=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rtshield) bin=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --strict) strict=(--strict); shift ;;
    *) echo "usage: $0 [--rtshield BIN] [--keep DIR] [--strict]" >&2; exit 2 ;;
  esac
done
[ -n "$bin" ] || bin=${RTSHIELD_BIN:-$root/target/release/rtshield}
[ -x "$bin" ] || { echo "$0: no rtshield at $bin (cargo build --release, or --rtshield)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "$0: needs root (SCHED_FIFO measurements)" >&2; exit 2; }
command -v cyclictest >/dev/null || { echo "$0: cyclictest not installed (apt: rt-tests)" >&2; exit 2; }
cpu=1
[ "$(nproc)" -ge 2 ] || cpu=0

work=${keep:-$(mktemp -d /tmp/rtshield-consumers.XXXXXX)}
mkdir -p "$work"
export HOME="$work/home" RTSHIELD_STORE="$work/home/runs.db"
mkdir -p "$HOME"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
lock=/tmp/rtshield-live.lock
status=0

measure() { # DIR EXTRA-ARGS...; prints measure's exit status
  local d=$1; shift
  mkdir -p "$d"
  set +e
  flock "$lock" "$bin" measure --cpus "$cpu" --period 200us --duration 5s -q --out "$d/res" \
    --metrics-file "$d/metrics.prom" --json "$d/cyclictest.json" --json-format cyclictest \
    "$@" >"$d/measure.out" 2>&1
  echo $? >"$d/status"
  set -e
}

echo "== (a) rtshield measure --cpus $cpu --period 200us --duration 5s"
measure "$work/a" --label 'a "quoted", label'
echo "measure exit $(cat "$work/a/status")"
$py "$here/check.py" --rtshield "$bin" "${strict[@]}" --json "$work/a/verdicts.json" \
  result "$work/a/res" --exit-status "$(cat "$work/a/status")" \
  --metrics-file "$work/a/metrics.prom" --cyclictest-json "$work/a/cyclictest.json" || status=1

echo "== (b) the same with --max-latency 1us"
measure "$work/b" --max-latency 1us
echo "measure exit $(cat "$work/b/status") (3 expected)"
$py "$here/check.py" --rtshield "$bin" "${strict[@]}" --json "$work/b/verdicts.json" \
  result "$work/b/res" --exit-status "$(cat "$work/b/status")" --max-latency 1us \
  --metrics-file "$work/b/metrics.prom" --cyclictest-json "$work/b/cyclictest.json" || status=1

echo "== (c) cyclictest -m -p 98 -i 200 -D 5 --json (no -h), and with -h 1000 --histfile"
mkdir -p "$work/c"
flock "$lock" cyclictest -q -m -p 98 -i 200 -D 5 -a "$cpu" -t 1 --json="$work/c/cyclictest.json" \
  >"$work/c/cyclictest.out" 2>&1
flock "$lock" cyclictest -q -m -p 98 -i 200 -D 5 -a "$cpu" -t 1 -h 1000 \
  --histfile="$work/c/hist.txt" --json="$work/c/cyclictest-h1000.json" >/dev/null 2>&1
for f in cyclictest.json cyclictest-h1000.json hist.txt; do
  $py "$here/check.py" --rtshield "$bin" "${strict[@]}" --json "$work/c/$f.verdicts.json" \
    import "$work/c/$f" || status=1
done
echo "files in $work"
exit $status
