# shellcheck shell=bash
# Sourced by the scripts that build with the MSRV toolchain (Debian's Rust
# 1.85, extracted by scripts/setup-cross.sh). Sets the pinned versions
# (RUST185_VERSION, LLVM_VERSION), RUST185 (the toolchain directory), CARGO185
# and RUSTC, the cross linkers, and MSRV_TARGET_DIR; does not change PATH.
# The toolchain and the target directory are named by the hash of what they
# depend on (scripts/ci-cache.sh): a new pin or a new Cargo.lock gets its own.
. "$(dirname "${BASH_SOURCE[0]}")/ci-cache.sh"
RUST185_VERSION=1.85.0+dfsg3-1~deb12u3
LLVM_VERSION=1:19.1.7-3~deb12u1
# The packages, by their path on a Debian mirror and their SHA-256 (checked
# at download; taken from the signed bookworm index). Fetched by file, with
# no foreign architecture added to apt: the arm64/armhf indexes are never
# read (one of them failing to update stopped CI before).
TOOLCHAIN_DEBS=(
  "pool/main/r/rustc-web/rustc-web_1.85.0+dfsg3-1~deb12u3_amd64.deb ef797a56697a0b6a82c1d704119ccaa85ab3486ccf805472de46c31971346702"
  "pool/main/r/rustc-web/cargo-web_1.85.0+dfsg3-1~deb12u3_amd64.deb 59e985e49ba0934ba8aabacd2c38cc394fefa621e9f96ed2c494cf2ed33449f4"
  "pool/main/r/rustc-web/libstd-rust-web-1.85_1.85.0+dfsg3-1~deb12u3_amd64.deb c8b03bff73b2990b2a3e56b0cfb100eb4c70a9331f4232dc9783c9e50b1038be"
  "pool/main/r/rustc-web/libstd-rust-web-dev_1.85.0+dfsg3-1~deb12u3_amd64.deb 5360a1aa03979ccc4cc91dd3d9bad1d5ff30f36d615ed01e2c5209c5e8ece21b"
  "pool/main/r/rustc-web/libstd-rust-web-dev_1.85.0+dfsg3-1~deb12u3_arm64.deb 55e965bf1d9c31734b347387a5f3e0a4e66c748cc620e3af45460792fff30b0d"
  "pool/main/r/rustc-web/libstd-rust-web-dev_1.85.0+dfsg3-1~deb12u3_armhf.deb 8373e2107bea80feb3447f2f0d5f0cf2cbb73f7f32acc3dd5cb85e59ca888e49"
  "pool/main/l/llvm-toolchain-19/libllvm19_19.1.7-3~deb12u1_amd64.deb 6edf3a8b28495cdba883d9760e0dca1a81983fc497a5f989dc64d0d96d23b4aa"
)
TOOLCHAIN_ID="rust $RUST185_VERSION llvm $LLVM_VERSION $(printf '%s\n' "${TOOLCHAIN_DEBS[@]}" | sha256sum | cut -c1-16)"
RUST185=$CACHE/rust-1.85-$(printf '%s\n' "$TOOLCHAIN_ID" | sha256sum | cut -c1-16)
# Static target binaries: one file to copy to a board. Both cross.sh and the
# armv7 test build use exactly this string (a different RUSTFLAGS would
# rebuild every dependency).
CROSS_RUSTFLAGS="-C target-feature=+crt-static"

# The rest needs the toolchain (scripts/setup-cross.sh installs it; it sets
# RTSHIELD_MSRV_VERSIONS_ONLY to read only the lines above).
if [ -z "${RTSHIELD_MSRV_VERSIONS_ONLY:-}" ]; then
  # Debian's rustc finds its own LLVM through the multiarch directory.
  export LD_LIBRARY_PATH="$RUST185/usr/lib/x86_64-linux-gnu:$RUST185/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export RUSTC=$RUST185/usr/bin/rustc
  export RUSTDOC=$RUST185/usr/bin/rustdoc
  CARGO185=$RUST185/usr/bin/cargo
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
  export CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_LINKER=arm-linux-gnueabihf-gcc
  # One target directory per (Cargo.lock, toolchain, flags), kept across runs.
  if [ -n "${RTSHIELD_MSRV_TARGET_DIR:-}" ]; then
    MSRV_TARGET_DIR=$RTSHIELD_MSRV_TARGET_DIR
  else
    msrv_lock=$(cat "$(dirname "${BASH_SOURCE[0]}")/../Cargo.lock") \
      || { echo "msrv-env.sh: cannot read Cargo.lock" >&2; return 1; }
    ci_cache_dir cross-target "$TOOLCHAIN_ID" "$CROSS_RUSTFLAGS" "$msrv_lock" \
      || { echo "msrv-env.sh: no cross target directory (see above)" >&2; return 1; }
    MSRV_TARGET_DIR=$CI_CACHE_DIR
    unset msrv_lock
  fi
fi
