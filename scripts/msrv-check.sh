#!/usr/bin/env bash
# Proves the declared rust-version: checks the whole workspace, tests
# included, with Debian's Rust 1.85 and the committed Cargo.lock (--locked:
# a dependency whose newest version needs a newer Rust must be pinned in the
# lockfile, e.g. `cargo update -p hdrhistogram --precise 7.5.4`).
# Run it after adding or updating a dependency.
set -euo pipefail
cd "$(dirname "$0")/.."
"$(dirname "$0")/setup-cross.sh" >/dev/null
. scripts/msrv-env.sh
"$RUSTC" --version
want=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml | head -1)
have=$("$RUSTC" --version | awk '{print $2}')
case "$have" in
  "$want"|"$want".*) ;;
  *) echo "msrv-check: Cargo.toml says rust-version $want but the MSRV toolchain is $have" >&2; exit 1 ;;
esac
CARGO_TARGET_DIR=$MSRV_TARGET_DIR "$CARGO185" check --locked --workspace --all-targets "$@"
