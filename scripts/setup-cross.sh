#!/usr/bin/env bash
# Installs, idempotently, what scripts/cross.sh and scripts/ci-arm.sh need:
#  - Debian's Rust 1.85 (the project's MSRV) with the standard libraries for
#    x86_64, aarch64 and armv7: pinned .deb files (scripts/msrv-env.sh: path
#    and SHA-256 of each) downloaded from a Debian mirror and extracted with
#    dpkg -x (not installed: no foreign architecture is added to apt, whose
#    armhf index failing to update stopped CI before, and the architectures'
#    indexes can disagree on versions) into
#    $RTSHIELD_CI_CACHE/rust-1.85-HASH (HASH: of the pinned files);
#  - the cross linkers and C libraries, and qemu-user-static to run the results.
# Prints the toolchain directory on its last line. Every failure stops it
# with the step and the package names (scripts/apt-lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt-lib.sh
RTSHIELD_MSRV_VERSIONS_ONLY=1 . scripts/msrv-env.sh

TOOLCHAIN=$RUST185
STAMP=$TOOLCHAIN/.rtshield-stamp

need_root() {
  [ "$(id -u)" = 0 ] || apt_die "setup-cross.sh: $1 needs root (apt-get/dpkg); run it once as root"
}

# Cross linkers, C libraries, the emulator, and the shared libraries that
# Debian's cargo 1.85 links against (what cargo-web's Depends lists).
host_pkgs=(gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-arm64-cross
           libc6-dev-armhf-cross qemu-user-static binutils
           libcurl4 libhttp-parser2.9 libpcre3 libsqlite3-0 libssh2-1 libssl3 zlib1g)
mapfile -t missing < <(apt_missing "${host_pkgs[@]}")
if [ ${#missing[@]} -gt 0 ]; then
  need_root "installing ${missing[*]}"
  echo "setup-cross.sh: installing ${missing[*]}" >&2
  apt_update --native-fallback
  apt_install setup-cross.sh "${missing[@]}"
fi

# Rust 1.85 with std for three targets: the pinned files, checked against
# their SHA-256 by apt's own downloader (apt's proxy settings apply).
mirror=${RTSHIELD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ "$(cat "$STAMP" 2>/dev/null)" != "$TOOLCHAIN_ID" ]; then
  need_root "installing Rust $RUST185_VERSION into $TOOLCHAIN"
  tmp=$TOOLCHAIN.tmp.$$
  rm -rf "$tmp"
  mkdir -p "$tmp/debs"
  # apt-helper downloads as _apt (its sandbox user), who must write there.
  chmod 755 "$tmp"
  if getent passwd _apt >/dev/null; then chown _apt "$tmp/debs"; fi
  for entry in "${TOOLCHAIN_DEBS[@]}"; do
    read -r path sha <<<"$entry"
    deb=$tmp/debs/$(basename "$path")
    echo "setup-cross.sh: downloading $mirror/$path" >&2
    /usr/lib/apt/apt-helper -o Acquire::Retries=3 download-file "$mirror/${path//+/%2b}" "$deb" "SHA256:$sha" >/dev/null \
      || apt_die "setup-cross.sh: cannot download $mirror/$path with SHA-256 $sha (set RTSHIELD_DEBIAN_MIRROR to another Debian mirror?)"
    dpkg -x "$deb" "$tmp"
  done
  rm -rf "$tmp/debs"
  echo "$TOOLCHAIN_ID" > "$tmp/.rtshield-stamp"
  rm -rf "$TOOLCHAIN"
  mv "$tmp" "$TOOLCHAIN"
fi

# rustc-web and cargo-web are the same programs as rustc and cargo.
[ -x "$TOOLCHAIN/usr/bin/rustc" ] || apt_die "setup-cross.sh: no rustc in $TOOLCHAIN"
echo "$TOOLCHAIN"
