#!/bin/sh
# Simulator speed, one simulated hour under each balancer, two machines:
#   small: 32 CPUs (16-31 RT) running 200 tasks;
#   large: 128 CPUs (64-127 RT) running 1000 tasks (the same mix, 4x/5x), the
#          size the default --max-events is chosen for (docs/scale.md).
# Prints wall time and events/s; with /usr/bin/time (GNU time) also peak RSS.
#
#   bench/sim-speed.sh [small|large|all] [BALANCER...]
#       (default: all linux26 ule artis artis-2005)
#
# Builds the release binary first (honours CARGO_TARGET_DIR; RTSHIELD=PATH
# uses that binary instead). Prints the load average. Needs nothing
# but the rtshield binary (no farm-bench, no root).
set -eu
cd "$(dirname "$0")/.."
if [ -n "${RTSHIELD:-}" ]; then
  bin="$RTSHIELD"
else
  cargo build --release -q -p rtshield
  bin="${CARGO_TARGET_DIR:-target}/release/rtshield"
fi
dir="$(mktemp -d "${TMPDIR:-/tmp}/sim-speed.XXXXXX")"
trap 'rm -rf "$dir"' EXIT

size=all
case "${1:-}" in small|large|all) size="$1"; shift ;; esac

# scenario FILE FIRST_RT_CPU LAST_RT_CPU RT1_COUNT COMPUTE_COUNT SYSCALL_COUNT
# One iteration = 10 us (loops_per_us 0.1). Work is sized so that nothing
# finishes within the hour: the machine stays loaded throughout.
scenario() {
  {
    echo "loops_per_us = 0.1"
    # One RT0 task per RT CPU: 1 ms of work every 10 ms.
    for cpu in $(seq "$2" "$3"); do
      printf '{\nname = rt0-%s\ngroup = rt0\nsched = FIFO\npriority = 99\ncpu_mask = %s\nloop = 100000000\nsloop = 100\nsleep = 9000\n}\n' "$cpu" "$cpu"
    done
    # Firm RT tasks (RT1+): 5 ms of work, 20 ms asleep, a masking call every 2 ms.
    printf '{\nname = rt1\nsched = FIFO\npriority = 50\nloop = 100000000\nsloop = 500\nsleep = 20000\nirq_period = 200\ncount = %s\n}\n' "$4"
    # Compute-only normal tasks.
    printf '{\nname = compute\nloop = 100000000\ncount = %s\n}\n' "$5"
    # Normal tasks doing system calls (a masking section every 10 ms of
    # work) and sleeping 5 ms after every 10 ms of work.
    printf '{\nname = syscall\nloop = 100000000\nirq_period = 1000\nsloop = 1000\nsleep = 5000\ncount = %s\n}\n' "$6"
  } > "$1"
}

# 16 + 8 + 120 + 56 = 200 tasks.
scenario "$dir/small.scn" 16 31 8 120 56
# 64 + 32 + 600 + 304 = 1000 tasks.
scenario "$dir/large.scn" 64 127 32 600 304

timed() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "  peak RSS %M KB, %e s wall, %U s user" "$@"
  else
    "$@"
  fi
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs" >&2
for b in ${@:-linux26 ule artis artis-2005}; do
  if [ "$size" != large ]; then
    echo "small (32 CPUs, 200 tasks), $b:" >&2
    timed "$bin" simulate "$dir/small.scn" --cpus 32 --rt-cpus 16-31 --balancer "$b" --duration 1h --timing >/dev/null
  fi
  if [ "$size" != small ]; then
    echo "large (128 CPUs, 1000 tasks), $b:" >&2
    timed "$bin" simulate "$dir/large.scn" --cpus 128 --rt-cpus 64-127 --balancer "$b" --duration 1h --timing >/dev/null
  fi
done
