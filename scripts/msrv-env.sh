# Sourced by the scripts that build with the MSRV toolchain (Debian's Rust
# 1.85, extracted by scripts/setup-cross.sh). Sets RUST185, CARGO185 and
# RUSTC, and the cross linkers; does not change PATH.
CACHE=${RTSHIELD_CI_CACHE:-/var/cache/rtshield-ci}
RUST185=$CACHE/rust-1.85
# Debian's rustc finds its own LLVM through the multiarch directory.
export LD_LIBRARY_PATH="$RUST185/usr/lib/x86_64-linux-gnu:$RUST185/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export RUSTC=$RUST185/usr/bin/rustc
export RUSTDOC=$RUST185/usr/bin/rustdoc
CARGO185=$RUST185/usr/bin/cargo
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_LINKER=arm-linux-gnueabihf-gcc
# Builds for this machine's CI reuse one target directory across runs.
MSRV_TARGET_DIR=${RTSHIELD_MSRV_TARGET_DIR:-$CACHE/target}
# Static target binaries: one file to copy to a board. Both cross.sh and the
# armv7 test build use exactly this string (a different RUSTFLAGS would
# rebuild every dependency).
CROSS_RUSTFLAGS="-C target-feature=+crt-static"
