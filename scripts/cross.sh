#!/usr/bin/env bash
# scripts/cross.sh TARGET [cargo build options...]
#   TARGET: aarch64 | armv7 | x86_64 (or the full Rust target triple)
# Builds a static (crt-static, glibc) release rtshield with Debian's Rust 1.85
# (the MSRV), strips it and keeps its debug info in rtshield.debug beside it
# (linked by .gnu_debuglink, so gdb and perf find it), then prints the sizes.
# Output: $RTSHIELD_CROSS_OUT/TRIPLE/{rtshield,rtshield.debug}
#         (default target/cross/TRIPLE); the last line printed is the binary's path.
# Needs root once, to install the toolchain (scripts/setup-cross.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  aarch64|arm64|aarch64-unknown-linux-gnu) triple=aarch64-unknown-linux-gnu; gnu=aarch64-linux-gnu ;;
  armv7|armhf|armv7-unknown-linux-gnueabihf) triple=armv7-unknown-linux-gnueabihf; gnu=arm-linux-gnueabihf ;;
  x86_64|amd64|x86_64-unknown-linux-gnu) triple=x86_64-unknown-linux-gnu; gnu=x86_64-linux-gnu ;;
  *) echo "usage: $0 aarch64|armv7|x86_64 [cargo build options]" >&2; exit 2 ;;
esac
shift

scripts/setup-cross.sh >/dev/null
. scripts/msrv-env.sh

objcopy=$gnu-objcopy
command -v "$objcopy" >/dev/null 2>&1 || objcopy=objcopy

# RUSTFLAGS with an explicit --target apply to the target only, not to build
# scripts and proc-macros (which must stay dynamic host programs).
export RUSTFLAGS="$CROSS_RUSTFLAGS${RTSHIELD_EXTRA_RUSTFLAGS:+ $RTSHIELD_EXTRA_RUSTFLAGS}"
CARGO_TARGET_DIR=$MSRV_TARGET_DIR "$CARGO185" build --locked --release \
  --target "$triple" --bin rtshield "$@"

out=${RTSHIELD_CROSS_OUT:-target/cross}/$triple
mkdir -p "$out"
built=$MSRV_TARGET_DIR/$triple/release/rtshield
tmp=$out/.rtshield.tmp.$$
cp "$built" "$tmp"
"$objcopy" --only-keep-debug "$tmp" "$out/rtshield.debug"
"$objcopy" --strip-all "$tmp"
# The debuglink names the file and records its CRC: run from $out.
(cd "$out" && "$objcopy" --add-gnu-debuglink=rtshield.debug "$(basename "$tmp")")
mv "$tmp" "$out/rtshield"

# A dynamic executable asks for its loader in a PT_INTERP header.
if readelf -lW "$out/rtshield" | grep -q 'INTERP'; then
  echo "cross.sh: $out/rtshield is not static" >&2
  exit 1
fi
printf '%-32s %10s bytes  unstripped %10s  debug file %10s\n' "$triple" \
  "$(stat -c %s "$out/rtshield")" "$(stat -c %s "$built")" "$(stat -c %s "$out/rtshield.debug")" >&2
echo "$out/rtshield"
