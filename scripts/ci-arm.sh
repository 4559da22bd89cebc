#!/usr/bin/env bash
# CI for the boards (called by .ci/run after the tests; runnable alone, as root):
#  1. proves the MSRV: the whole workspace, tests included, checks with
#     Debian's Rust 1.85 and the committed Cargo.lock (scripts/msrv-check.sh);
#  2. builds the static aarch64 binary with scripts/cross.sh and runs it under
#     qemu-user: --version, sysinfo, run --check on every examples/*.cfg (fake
#     sysroot), simulate on annex B (output compared byte for byte with the
#     x86-64 binary's), a 1 s measure in both wait modes;
#  3. armv7: the unit tests of the measure and results libraries built for
#     armv7 and run under qemu-arm: what differs on a 32-bit target (the
#     posix timer's siginfo layout, 32-bit time_t in timespec conversions,
#     histogram bucket indexes past u32, 64-bit atomics), not every crate;
#  4. the Debian package of arm64 (from the binary of step 2), checked and
#     installed into a private root (scripts/deb-test.sh);
#  5. the numbers in docs/size.md against that binary and package
#     (scripts/doc-numbers.sh --check).
# Builds go to target directories under /var/cache/rtshield-ci named by the
# hash of Cargo.lock and the toolchain (scripts/ci-cache.sh), reused by later
# CI runs on this machine.
# RTSHIELD_CI_ARMV7: "tests" (default) runs the armv7 unit tests above,
# "full" also builds and smoke-runs the armv7 release binary and packages
# armhf too, "0" skips armv7. RTSHIELD_DEB_ARCHES: the packages to build
# (default arm64; amd64 and armhf on demand).
set -euo pipefail
cd "$(dirname "$0")/.."
trap 'echo "ci-arm: FAILED at scripts/ci-arm.sh:$LINENO: $BASH_COMMAND" >&2' ERR
t0=$SECONDS
last=$SECONDS
times=()
step() {
  [ -z "${cur:-}" ] || times+=("$(printf '%5d s  %s' $((SECONDS - last)) "$cur")")
  cur=$*
  last=$SECONDS
  echo "== ci-arm: $* (at $((SECONDS - t0)) s)"
}
fail() { echo "ci-arm: FAILED: $*" >&2; exit 1; }
# The smoke runs below are not results: nothing goes into a results store.
export RTSHIELD_NO_STORE=1

step "toolchain"
scripts/setup-cross.sh
. scripts/msrv-env.sh

step "MSRV check with $("$RUSTC" --version)"
scripts/msrv-check.sh -q

# The x86-64 reference: the binary the test suite just built.
x86=${CARGO_TARGET_DIR:-target}/debug/rtshield
[ -x "$x86" ] || cargo build -q --locked --bin rtshield

work=$(mktemp -d /tmp/rtshield-ci-arm.XXXXXX)
trap 'rm -rf "$work"' EXIT

# A fake sysroot with 8 online CPUs: every example fits it.
mkdir -p "$work/root/sys/devices/system/cpu"
echo 0-7 > "$work/root/sys/devices/system/cpu/online"

# The results of a run, reduced to what must hold: samples were taken.
samples_of() {
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(t["samples"] for t in r["threads"]))' "$1"
}

smoke() { # smoke NAME QEMU BIN
  local name=$1 qemu=$2 bin=$3 o=$work/$1
  mkdir -p "$o"
  step "$name: smoke runs under $qemu"
  "$qemu" "$bin" --version | tee "$o/version"
  grep -qx "rtshield $("$x86" --version | awk '{print $2}')" "$o/version" || fail "$name --version"
  "$qemu" "$bin" sysinfo > "$o/sysinfo" || fail "$name sysinfo"
  grep -qi "kernel" "$o/sysinfo" || fail "$name sysinfo prints no kernel: $(head -5 "$o/sysinfo")"

  echo "   run --check on examples/*.cfg"
  local cfg
  for cfg in examples/*.cfg; do
    "$qemu" "$bin" --sysroot "$work/root" run --check "$cfg" > "$o/check.out" 2> "$o/check.err" \
      || fail "$name run --check $cfg: $(cat "$o/check.err")"
    "$x86" --sysroot "$work/root" run --check "$cfg" > "$o/check.x86" 2>/dev/null
    cmp "$o/check.out" "$o/check.x86" || fail "$name run --check $cfg differs from x86-64"
  done

  echo "   simulate annex B, compared with x86-64"
  local sim=(simulate examples/scenarios/annex-b.scn --cpus 4 --rt-cpus 1-3
             --compare linux26,ule,artis,artis-2005)
  "$qemu" "$bin" "${sim[@]}" --json "$o/sim.json" > "$o/sim.txt"
  [ -s "$work/sim-x86.txt" ] || "$x86" "${sim[@]}" --json "$work/sim-x86.json" > "$work/sim-x86.txt"
  cmp "$o/sim.txt" "$work/sim-x86.txt" || { diff "$o/sim.txt" "$work/sim-x86.txt" | head -20; fail "$name simulate table differs"; }
  cmp "$o/sim.json" "$work/sim-x86.json" || fail "$name simulate JSON differs"

  # Not timed: under emulation only the mechanics are checked (the
  # measuring thread's timer, signals, result files), not the latencies.
  local mode
  for mode in nanosleep posix-timer; do
    echo "   measure 1 s ($mode)"
    "$qemu" "$bin" measure --duration 1s --mode "$mode" --no-dma-latency --no-store -q \
      --out "$o/m-$mode" > "$o/m-$mode.log" 2>&1 || fail "$name measure $mode: $(tail -5 "$o/m-$mode.log")"
    local n
    n=$(samples_of "$o/m-$mode/results.json")
    [ "$n" -gt 0 ] || fail "$name measure $mode took no sample"
    echo "   $n samples"
  done
}

step "aarch64: static release build"
bin=$(scripts/cross.sh aarch64 -q | tail -1)
smoke aarch64 qemu-aarch64-static "$bin"

armv7=${RTSHIELD_CI_ARMV7:-tests}
case "$armv7" in tests|full|0) ;; *) fail "RTSHIELD_CI_ARMV7 is '$armv7': expected tests, full or 0" ;; esac
if [ "$armv7" = full ]; then
  step "armv7: static release build"
  bin=$(scripts/cross.sh armv7 -q | tail -1)
  smoke armv7 qemu-arm-static "$bin"
fi
if [ "$armv7" != 0 ]; then
  step "armv7: unit tests of measure and results under qemu-arm"
  RUSTFLAGS=$CROSS_RUSTFLAGS CARGO_TARGET_DIR=$MSRV_TARGET_DIR \
    "$CARGO185" test --locked -q --target armv7-unknown-linux-gnueabihf --no-run \
      -p rtshield-measure -p rtshield-results --lib \
      --message-format=json-render-diagnostics > "$work/armv7.json" \
    || fail "the armv7 test build (errors above)"
  tests=$(python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])' < "$work/armv7.json")
  [ "$(wc -w <<<"$tests")" = 2 ] || fail "expected 2 armv7 test binaries, got: $tests"
  for t in $tests; do
    echo "   $(basename "$t")"
    qemu-arm-static "$t" -q || fail "armv7 tests $(basename "$t")"
  done
fi

step "Debian package(s)"
arches=${RTSHIELD_DEB_ARCHES:-arm64}
[ "$armv7" != full ] || [[ " $arches " == *" armhf "* ]] || arches="$arches armhf"
RTSHIELD_DEB_ARCHES=$arches scripts/deb-test.sh

step "docs/size.md against this build"
scripts/doc-numbers.sh --check --built

step "done"
echo "ci-arm: stage times (s):"
printf '  %s\n' "${times[@]}"
