#!/usr/bin/env bash
# scripts/deb.sh ARCH [BINARY]
#   ARCH: amd64 | arm64 | armhf
# Builds target/deb/rtshield_VERSION-1_ARCH.deb with dpkg-deb: the static
# binary (built by scripts/cross.sh unless BINARY is given), the man pages
# and shell completions from dist/, the examples. No dependency: the binary
# is static. Prints the package's path on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

arch=${1:-}
case "$arch" in
  amd64) target=x86_64 ;;
  arm64) target=aarch64 ;;
  armhf) target=armv7 ;;
  *) echo "usage: $0 amd64|arm64|armhf [BINARY]" >&2; exit 2 ;;
esac
bin=${2:-}
[ -n "$bin" ] || bin=$(scripts/cross.sh "$target" -q | tail -1)

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
debver=$version-1
out=target/deb
mkdir -p "$out"
pkg=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$pkg"' EXIT
chmod 755 "$pkg"

install -D -m 755 "$bin" "$pkg/usr/bin/rtshield"
for page in dist/man/*.[0-9]; do
  sec=${page##*.}
  install -D -m 644 "$page" "$pkg/usr/share/man/man$sec/$(basename "$page")"
  gzip -9n "$pkg/usr/share/man/man$sec/$(basename "$page")"
done
install -D -m 644 dist/completions/rtshield.bash "$pkg/usr/share/bash-completion/completions/rtshield"
install -D -m 644 dist/completions/_rtshield "$pkg/usr/share/zsh/vendor-completions/_rtshield"
install -D -m 644 dist/completions/rtshield.fish "$pkg/usr/share/fish/vendor_completions.d/rtshield.fish"
doc=$pkg/usr/share/doc/rtshield
install -d -m 755 "$doc/examples/scenarios"
install -m 644 examples/*.cfg "$doc/examples/"
install -m 644 examples/scenarios/*.scn "$doc/examples/scenarios/"
cat > "$doc/copyright" <<COPY
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: rtshield

Files: *
License: MIT or Apache-2.0
 The binary statically links Rust crates under their own licenses
 (MIT, Apache-2.0 and compatible) and the GNU C library (LGPL-2.1+).
 The report plots embed the DejaVu Sans font (Bitstream Vera license).
COPY

installed_kb=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
install -d -m 755 "$pkg/DEBIAN"
cat > "$pkg/DEBIAN/control" <<CTRL
Package: rtshield
Version: $debver
Architecture: $arch
Maintainer: rtshield developers <rtshield@localhost>
Installed-Size: $installed_kb
Section: utils
Priority: optional
Description: shield CPUs for real-time work and measure wake-up latency
 rtshield partitions CPUs (cpusets, IRQ affinity), audits what can still
 disturb them, measures wake-up latency of periodic real-time threads under
 load (cyclictest-like, systress configuration files), reports it, and
 simulates load balancing (linux26, ULE, ARTiS).
 .
 Statically linked: the binary runs on any $arch Linux.
CTRL

deb=$out/rtshield_${debver}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >/dev/null
printf '%-8s %10s bytes  %s\n' "$arch" "$(stat -c %s "$deb")" "$deb" >&2
echo "$deb"
