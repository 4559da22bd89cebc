#!/usr/bin/env bash
# Builds the Debian packages of RTSHIELD_DEB_ARCHES (default "arm64": the one
# CI builds, from the aarch64 binary its smoke tests use; "amd64 armhf" or
# all three on demand), checks each one's architecture and file list, and
# installs the first with dpkg into a private root (dpkg --root: the
# machine's own package database and /usr are not touched), where it checks
# `rtshield --version` (under qemu-user for a foreign architecture) and that
# `man` finds every page. Needs root (dpkg --root).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt-lib.sh
[ "$(id -u)" = 0 ] || apt_die "deb-test.sh: needs root (dpkg --root)"
mapfile -t missing < <(apt_missing man-db)
if [ ${#missing[@]} -gt 0 ]; then
  echo "deb-test.sh: installing man-db (man -w checks the pages)" >&2
  apt_update --native-fallback
  apt_install deb-test.sh man-db
fi

want=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
first=
for arch in ${RTSHIELD_DEB_ARCHES:-arm64}; do
  deb=$(scripts/deb.sh "$arch" | tail -1)
  [ -n "$first" ] || first=$deb
  # (No `dpkg-deb | grep -q`: grep quitting early kills dpkg-deb with
  # SIGPIPE, which pipefail turns into a failure.)
  [ "$(dpkg-deb --field "$deb" Architecture)" = "$arch" ] \
    || apt_die "deb-test.sh: $deb is not $arch"
  # Every man page and completion is in the package.
  listing=$(dpkg-deb --contents "$deb")
  for f in usr/bin/rtshield usr/share/man/man1/rtshield.1.gz usr/share/man/man5/rtshield.conf.5.gz \
           usr/share/bash-completion/completions/rtshield usr/share/zsh/vendor-completions/_rtshield \
           usr/share/fish/vendor_completions.d/rtshield.fish usr/share/doc/rtshield/examples/host.cfg \
           usr/share/doc/rtshield/examples/scenarios/annex-b.scn; do
    grep -q " \./$f\$" <<<"$listing" || apt_die "deb-test.sh: $deb lacks $f"
  done
done

root=$(mktemp -d /tmp/rtshield-deb-root.XXXXXX)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
arch=$(dpkg-deb --field "$first" Architecture)
[ "$arch" = "$(dpkg --print-architecture)" ] || dpkg --root="$root" --add-architecture "$arch"
dpkg --root="$root" -i "$first" >/dev/null
status=$(dpkg --root="$root" -s rtshield | sed -n 's/^Status: //p')
[ "$status" = "install ok installed" ] || apt_die "deb-test.sh: dpkg says '$status' for $first"
case "$arch" in
  amd64) run=() ;;
  arm64) run=(qemu-aarch64-static) ;;
  armhf) run=(qemu-arm-static) ;;
esac
v=$("${run[@]}" "$root/usr/bin/rtshield" --version)
echo "$(basename "$first"): $v"
[ "$v" = "rtshield $want" ] || apt_die "deb-test.sh: --version says '$v', Cargo.toml $want"
man=(man -M "$root/usr/share/man")
page=$("${man[@]}" -w rtshield)
[ "$page" = "$root/usr/share/man/man1/rtshield.1.gz" ] || apt_die "deb-test.sh: man -w gave '$page'"
"${man[@]}" -w 5 rtshield.conf >/dev/null
"${man[@]}" -w rtshield-measure >/dev/null
dpkg --root="$root" -r rtshield >/dev/null
[ ! -e "$root/usr/bin/rtshield" ] || apt_die "deb-test.sh: dpkg -r left /usr/bin/rtshield"
echo "deb-test.sh: OK (${RTSHIELD_DEB_ARCHES:-arm64})"
