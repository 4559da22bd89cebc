#!/usr/bin/env bash
# scripts/doc-numbers.sh [--check] [--built]
# The numbers in docs/size.md come from the aarch64 release binary and its
# Debian package: this builds them (scripts/cross.sh, scripts/deb.sh) and
# rewrites the generated blocks (scripts/doc-numbers.py). With --check (CI,
# scripts/ci-arm.sh) it changes nothing and fails when a documented number
# is stale. --built: use the binary and package the caller has just built
# (target/cross, target/deb) instead of building them.
set -euo pipefail
cd "$(dirname "$0")/.."
args=() built=0
for a in "$@"; do
  case "$a" in
    --built) built=1 ;;
    *) args+=("$a") ;;
  esac
done
. scripts/msrv-env.sh
if [ "$built" = 1 ]; then
  bin=${RTSHIELD_CROSS_OUT:-target/cross}/aarch64-unknown-linux-gnu/rtshield
  deb=target/deb/rtshield_$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)-1_arm64.deb
else
  bin=$(scripts/cross.sh aarch64 -q | tail -1)
  deb=$(scripts/deb.sh arm64 "$bin" | tail -1)
fi
python3 scripts/doc-numbers.py "${args[@]}" --bin "$bin" --debug "$(dirname "$bin")/rtshield.debug" \
  --unstripped "$MSRV_TARGET_DIR/aarch64-unknown-linux-gnu/release/rtshield" --deb "$deb"
