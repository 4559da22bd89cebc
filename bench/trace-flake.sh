#!/usr/bin/env bash
# bench/trace-flake.sh [N]: issue 23's "the trace tests pass 20 times in a
# row while another test holds its own tracefs mount". The two trace tests
# that failed that way (trace_live::a_fifo_99_thread_busy_for_2_ms_is_named_
# as_the_cause and trace_live::trace_stop_ends_the_run_at_the_first_spike_
# and_keeps_the_trace) run N times each (default 20), one after the other,
# while a helper process (crates/testkit/examples/hold_tracefs_mount.rs)
# holds a tracefs mount of its own, registered with the test kit's reaper
# before it is made. After every run the helper's mount must still be
# mounted (rtshield never uses another process's temporary mount, so it
# never keeps it busy); at the end the helper unmounts it, and no tracefs
# mount may be left that was not there before, and no process may have
# had a file open under the helper's mount meanwhile (sampled every 0.2 s). Prints one line per run and
# a summary; failed runs' output is kept under the printed directory.
# Root, CPUs 0 and 1; the whole run holds /tmp/rtshield-live.lock.
# Exit status: 0 when every run passed and nothing was left, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "trace-flake: N must be a positive integer, not '$n'" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "trace-flake: needs root (tracefs, SCHED_FIFO)" >&2; exit 2; }
tests=(
  trace_live::a_fifo_99_thread_busy_for_2_ms_is_named_as_the_cause
  trace_live::trace_stop_ends_the_run_at_the_first_spike_and_keeps_the_trace
)
target=${CARGO_TARGET_DIR:-target}

echo "trace-flake: building the integration tests and the mount holder"
cargo build -q --locked -p rtshield-testkit --example hold_tracefs_mount
holder=$target/debug/examples/hold_tracefs_mount
bin=$(cargo test -q --locked --test integration --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json, sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "integration":
        print(m["executable"])')
[ -x "$bin" ] || { echo "trace-flake: no integration test binary (build it: cargo test --test integration --no-run)" >&2; exit 1; }

tracefs_mounts() { awk '$9 == "tracefs" { print $5 }' /proc/self/mountinfo | sort; }
logs=$(mktemp -d /tmp/rtshield-trace-flake.XXXXXX)

# Live tests of two runs on one machine take turns (as scripts/test.sh).
exec {lock}>/tmp/rtshield-live.lock
if ! flock -n "$lock"; then
  echo "trace-flake: waiting for /tmp/rtshield-live.lock"
  flock "$lock"
fi
tracefs_mounts > "$logs/mounts.before"

coproc HOLD { exec "$holder" 2>"$logs/holder.err"; }
holder_pid=$HOLD_PID
holder_in=${HOLD[1]} holder_out=${HOLD[0]}
finish_holder() {
  # Closing its stdin makes the helper unmount and exit.
  exec {holder_in}>&- {holder_out}<&-
  wait "$holder_pid"
}
trap 'finish_holder || true' EXIT
read -r mnt <&"$holder_out" || { echo "trace-flake: the mount holder failed: $(cat "$logs/holder.err")" >&2; exit 1; }
mountpoint -q "$mnt" || { echo "trace-flake: $mnt is not mounted" >&2; exit 1; }
echo "trace-flake: helper $holder_pid holds its own tracefs mount at $mnt"
# Any process with a file open under the helper's mount is using it (the
# old bug: rtshield's child took the first tracefs mount it found, and the
# test's own unmount then failed with EBUSY).
: > "$logs/users"
watch_mount() {
  while :; do
    find /proc/[0-9]*/fd -maxdepth 1 -lname "$mnt/*" -printf '%h -> %l\n' 2>/dev/null >> "$logs/users" || true
    sleep 0.2
  done
}
watch_mount &
watcher=$!
trap 'kill "$watcher" 2>/dev/null; finish_holder || true' EXIT
echo "trace-flake: commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (uncommitted changes)'), $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A passed
failed=0
t0=$SECONDS
for i in $(seq 1 "$n"); do
  for t in "${tests[@]}"; do
    s=$SECONDS
    log=$logs/$i-${t#trace_live::}.log
    if RTSHIELD_REQUIRE_ROOT=1 "$bin" --exact "$t" --test-threads 1 >"$log" 2>&1 \
        && grep -q '^test result: ok. 1 passed' "$log"; then
      passed[$t]=$(( ${passed[$t]:-0} + 1 ))
      verdict=ok
      rm -f "$log"
    else
      failed=$((failed + 1))
      verdict="FAILED (output: $log)"
    fi
    if [ -s "$logs/users" ]; then
      verdict="$verdict; the helper's mount was used: $(sort -u "$logs/users" | head -3 | tr '\n' ' ')"
      failed=$((failed + 1))
      : > "$logs/users"
    fi
    if ! mountpoint -q "$mnt"; then
      verdict="$verdict; the helper's mount $mnt is gone"
      failed=$((failed + 1))
    fi
    printf '%3d/%d  %-75s %3d s  %s\n' "$i" "$n" "$t" $((SECONDS - s)) "$verdict"
  done
done

trap - EXIT
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
holder_status=0
finish_holder || holder_status=$?
tracefs_mounts > "$logs/mounts.after"
left=0
if [ "$holder_status" != 0 ]; then
  echo "trace-flake: the helper could not unmount its tracefs: $(cat "$logs/holder.err")"
  left=1
fi
if ! cmp -s "$logs/mounts.before" "$logs/mounts.after"; then
  echo "trace-flake: tracefs mounts changed:"
  diff "$logs/mounts.before" "$logs/mounts.after" | sed 's/^/  /'
  left=1
fi
echo "trace-flake: $(cat "$logs/holder.err")"
for t in "${tests[@]}"; do
  echo "trace-flake: ${passed[$t]:-0}/$n  $t"
done
echo "trace-flake: $((SECONDS - t0)) s, $failed failure(s), $([ "$left" = 0 ] && echo "nothing left mounted" || echo "SOMETHING LEFT (above)")"
if [ "$failed" = 0 ] && [ "$left" = 0 ]; then
  rm -rf "$logs"
  exit 0
fi
echo "trace-flake: logs in $logs"
exit 1
