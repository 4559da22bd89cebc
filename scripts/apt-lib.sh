# shellcheck shell=bash
# Sourced (not run) by the scripts that install Debian packages
# (scripts/test.sh, scripts/setup-cross.sh, scripts/deb-test.sh): one way to
# update the indexes and install, loud on every failure.
#
#   apt_missing PKG...       prints the packages (NAME or NAME:ARCH) not installed
#   apt_update [--native-fallback]
#                            apt-get update, retried (a mirror in the middle of
#                            a sync answers "File has unexpected size" for a
#                            while); with --native-fallback a last attempt
#                            drops the foreign architectures' indexes (the
#                            armhf/arm64 ones scripts/setup-cross.sh adds) when
#                            only this machine's architecture is needed
#   apt_install WHO PKG...   installs the packages (no recommends) and checks
#                            that each one is installed afterwards; WHO names
#                            the caller in messages
# Every function exits the script (status 1) with the failing step and the
# package names; none returns a failure to be ignored.

# Waits for another apt/dpkg (other helpers, unattended-upgrades) instead of failing at once.
APT_OPTS=(-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)

apt_die() {
  echo "$*" >&2
  exit 1
}

apt_missing() {
  local p
  for p in "$@"; do
    # db:Status-Abbrev is "ii " for an installed package.
    [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" = "ii " ] || echo "$p"
  done
}

apt_update() {
  local fallback=0 attempt out foreign native
  [ "${1:-}" = --native-fallback ] && fallback=1
  out=$(mktemp)
  for attempt in 1 2 3; do
    if apt-get "${APT_OPTS[@]}" update -q >"$out" 2>&1; then
      # apt-get update can succeed while some index failed ("W: Failed to fetch"),
      # leaving the old or no index behind; that is a failure here too.
      if ! grep -q '^[WE]: Failed to fetch' "$out"; then
        rm -f "$out"
        return 0
      fi
    fi
    echo "apt-get update failed (attempt $attempt of 3):" >&2
    grep -E '^(W|E|Err):' "$out" | head -10 >&2 || tail -5 "$out" >&2
    [ "$attempt" = 3 ] || sleep $((attempt * 15))
  done
  foreign=$(dpkg --print-foreign-architectures | tr '\n' ' ')
  if [ "$fallback" = 1 ] && [ -n "${foreign// /}" ]; then
    native=$(dpkg --print-architecture)
    echo "apt-get update: retrying with the $native indexes only (dropping those of $foreign; only $native packages are needed here)" >&2
    if apt-get "${APT_OPTS[@]}" -o APT::Architectures="$native" update -q >"$out" 2>&1 \
      && ! grep -q '^[WE]: Failed to fetch' "$out"; then
      rm -f "$out"
      return 0
    fi
    grep -E '^(W|E|Err):' "$out" | head -10 >&2 || tail -5 "$out" >&2
  fi
  rm -f "$out"
  apt_die "apt-get update failed 3 times (see above): the package indexes cannot be read; fix the network or /etc/apt/sources.list* and rerun"
}

apt_install() {
  local who=$1 left
  shift
  [ $# -gt 0 ] || return 0
  DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y -q --no-install-recommends "$@" \
    || apt_die "$who: apt-get install failed for: $*"
  left=$(apt_missing "$@" | tr '\n' ' ')
  [ -z "${left// /}" ] || apt_die "$who: still not installed after apt-get install: $left"
}
