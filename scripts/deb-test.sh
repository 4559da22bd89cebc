#!/usr/bin/env bash
# Builds the Debian packages (amd64 and RTSHIELD_DEB_ARCHES, default
# "arm64 armhf"), installs the amd64 one on this machine
# with dpkg -i, checks `rtshield --version` and `man -w rtshield`, and
# removes it again (also when a check fails). Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "deb-test.sh: needs root (dpkg -i)" >&2; exit 1; }
if dpkg -s rtshield >/dev/null 2>&1; then
  echo "deb-test.sh: a package rtshield is already installed; not touching it" >&2
  exit 1
fi
command -v man >/dev/null 2>&1 || {
  apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends man-db
}

# amd64 last: $deb is the one installed below.
for arch in ${RTSHIELD_DEB_ARCHES:-arm64 armhf} amd64; do
  deb=$(scripts/deb.sh "$arch" | tail -1)
  # (No `dpkg-deb | grep -q`: grep quitting early kills dpkg-deb with
  # SIGPIPE, which pipefail turns into a failure.)
  [ "$(dpkg-deb --field "$deb" Architecture)" = "$arch" ] \
    || { echo "deb-test.sh: $deb is not $arch" >&2; exit 1; }
  # Every man page and completion is in the package.
  listing=$(dpkg-deb --contents "$deb")
  for f in usr/bin/rtshield usr/share/man/man1/rtshield.1.gz usr/share/man/man5/rtshield.conf.5.gz \
           usr/share/bash-completion/completions/rtshield usr/share/zsh/vendor-completions/_rtshield \
           usr/share/fish/vendor_completions.d/rtshield.fish usr/share/doc/rtshield/examples/host.cfg \
           usr/share/doc/rtshield/examples/scenarios/annex-b.scn; do
    grep -q " \./$f\$" <<<"$listing" || { echo "deb-test.sh: $deb lacks $f" >&2; exit 1; }
  done
done

trap 'dpkg -r rtshield >/dev/null || echo "deb-test.sh: dpkg -r rtshield failed" >&2' EXIT
dpkg -i "$deb"
v=$(/usr/bin/rtshield --version)
echo "$v"
want=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
[ "$v" = "rtshield $want" ] || { echo "deb-test.sh: --version says '$v'" >&2; exit 1; }
page=$(man -w rtshield)
echo "man -w rtshield: $page"
[ "$page" = /usr/share/man/man1/rtshield.1.gz ] || { echo "deb-test.sh: man -w gave '$page'" >&2; exit 1; }
man -w 5 rtshield.conf >/dev/null
man -w rtshield-measure >/dev/null
echo "deb-test.sh: OK"
