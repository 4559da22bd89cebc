#!/bin/sh
# Simulator speed: one simulated hour of a 32-CPU machine (CPUs 16-31 RT)
# running 200 tasks, under each balancer. Prints wall time and events/s.
#
#   bench/sim-speed.sh [BALANCER...]      (default: linux26 ule artis artis-2005)
#
# Builds the release binary first (honours CARGO_TARGET_DIR).
set -eu
cd "$(dirname "$0")/.."
cargo build --release -q -p rtshield
bin="${CARGO_TARGET_DIR:-target}/release/rtshield"
scn="$(mktemp "${TMPDIR:-/tmp}/sim-speed.XXXXXX")"
trap 'rm -f "$scn"' EXIT

# One iteration = 10 us (loops_per_us 0.1). Work is sized so that nothing
# finishes within the hour: the machine stays loaded throughout.
{
  echo "loops_per_us = 0.1"
  # 16 RT0 tasks, one per RT CPU: 1 ms of work every 10 ms.
  for cpu in $(seq 16 31); do
    printf '{\nname = rt0-%s\ngroup = rt0\nsched = FIFO\npriority = 99\ncpu_mask = %s\nloop = 100000000\nsloop = 100\nsleep = 9000\n}\n' "$cpu" "$cpu"
  done
  # 8 firm RT tasks (RT1+): 5 ms of work, 20 ms asleep, a masking call every 2 ms.
  printf '{\nname = rt1\nsched = FIFO\npriority = 50\nloop = 100000000\nsloop = 500\nsleep = 20000\nirq_period = 200\ncount = 8\n}\n'
  # 120 compute-only normal tasks.
  printf '{\nname = compute\nloop = 100000000\ncount = 120\n}\n'
  # 56 normal tasks doing system calls (a masking section every 10 ms of
  # work) and sleeping 5 ms after every 10 ms of work.
  printf '{\nname = syscall\nloop = 100000000\nirq_period = 1000\nsloop = 1000\nsleep = 5000\ncount = 56\n}\n'
} > "$scn"

for b in ${@:-linux26 ule artis artis-2005}; do
  "$bin" simulate "$scn" --cpus 32 --rt-cpus 16-31 --balancer "$b" --duration 1h --timing >/dev/null
done
