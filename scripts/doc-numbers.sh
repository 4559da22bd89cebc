#!/usr/bin/env bash
# scripts/doc-numbers.sh [--check]
# The numbers in docs/size.md come from the aarch64 release binary and its
# Debian package: this builds them (scripts/cross.sh, scripts/deb.sh; nothing
# to do when CI has just built them) and rewrites the generated blocks
# (scripts/doc-numbers.py). With --check (CI, scripts/ci-arm.sh) it changes
# nothing and fails when a documented number is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(scripts/cross.sh aarch64 -q | tail -1)
deb=$(scripts/deb.sh arm64 "$bin" | tail -1)
. scripts/msrv-env.sh
python3 scripts/doc-numbers.py "$@" --bin "$bin" --debug "$(dirname "$bin")/rtshield.debug" \
  --unstripped "$MSRV_TARGET_DIR/aarch64-unknown-linux-gnu/release/rtshield" --deb "$deb"
