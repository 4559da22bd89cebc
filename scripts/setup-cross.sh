#!/usr/bin/env bash
# Installs, idempotently, what scripts/cross.sh and scripts/ci-arm.sh need:
#  - Debian's Rust 1.85 (the project's MSRV) with the standard libraries for
#    x86_64, aarch64 and armv7, extracted (not installed: the architectures'
#    package indexes can disagree on versions, which makes apt refuse the
#    multi-arch install, while dpkg -x of pinned versions always works) into
#    $RTSHIELD_CI_CACHE/rust-1.85;
#  - the cross linkers and C libraries, and qemu-user-static to run the results.
# Prints the toolchain directory on its last line.
set -euo pipefail

CACHE=${RTSHIELD_CI_CACHE:-/var/cache/rtshield-ci}
RUST_VER=1.85.0+dfsg3-1~deb12u3
LLVM_VER=1:19.1.7-3~deb12u1
TOOLCHAIN=$CACHE/rust-1.85
STAMP=$TOOLCHAIN/.rtshield-stamp
WANT_STAMP="rust $RUST_VER llvm $LLVM_VER"

need_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "setup-cross.sh: $1 needs root (apt-get/dpkg)" >&2
    exit 1
  fi
}

updated=0
apt_update_once() {
  if [ "$updated" = 0 ]; then
    # A mirror that fails for one architecture must not stop the others.
    apt-get update -qq || true
    updated=1
  fi
}

# Cross linkers, C libraries, the emulator, and the shared libraries that
# Debian's cargo 1.85 links against (what cargo-web's Depends lists).
host_pkgs=(gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-arm64-cross
           libc6-dev-armhf-cross qemu-user-static binutils
           libcurl4 libhttp-parser2.9 libpcre3 libsqlite3-0 libssh2-1 libssl3 zlib1g)
missing=()
for p in "${host_pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  need_root "installing ${missing[*]}"
  apt_update_once
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Rust 1.85 with std for three targets.
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT_STAMP" ]; then
  need_root "downloading Rust $RUST_VER"
  for a in arm64 armhf; do
    dpkg --print-foreign-architectures | grep -qx "$a" || { dpkg --add-architecture "$a"; updated=0; }
  done
  apt_update_once
  dl=$CACHE/debs-1.85
  mkdir -p "$dl"
  (cd "$dl" && apt-get download -qq \
      "rustc-web=$RUST_VER" "cargo-web=$RUST_VER" \
      "libstd-rust-web-1.85=$RUST_VER" "libstd-rust-web-dev=$RUST_VER" \
      "libstd-rust-web-dev:arm64=$RUST_VER" "libstd-rust-web-dev:armhf=$RUST_VER" \
      "libllvm19=$LLVM_VER")
  tmp=$TOOLCHAIN.tmp.$$
  rm -rf "$tmp"
  mkdir -p "$tmp"
  for d in "$dl"/*.deb; do dpkg -x "$d" "$tmp"; done
  rm -rf "$TOOLCHAIN"
  mv "$tmp" "$TOOLCHAIN"
  echo "$WANT_STAMP" > "$STAMP"
fi

# rustc-web and cargo-web are the same programs as rustc and cargo.
[ -x "$TOOLCHAIN/usr/bin/rustc" ] || { echo "no rustc in $TOOLCHAIN" >&2; exit 1; }
echo "$TOOLCHAIN"
