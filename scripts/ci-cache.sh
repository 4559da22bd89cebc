# shellcheck shell=bash
# Sourced (not run). Build caches kept across CI runs on one machine, under
# $RTSHIELD_CI_CACHE (default /var/cache/rtshield-ci), each named by the hash
# of what its content depends on (the Cargo.lock, the toolchain, the flags),
# the way CI services key theirs:
#
#   ci_cache_dir NAME INPUT...  prints $CACHE/NAME-HASH, HASH being that of
#                               the INPUT strings. A new key starts as a copy of
#                               the most recently used NAME-* (cargo then
#                               rebuilds only what changed, not every
#                               dependency), and the older NAME-* are
#                               removed (a target directory takes gigabytes).
CACHE=${RTSHIELD_CI_CACHE:-/var/cache/rtshield-ci}

ci_cache_dir() {
  local name=$1 key dir prev old
  shift
  key=$(printf '%s\n' "$@" | sha256sum | cut -c1-16)
  dir=$CACHE/$name-$key
  mkdir -p "$CACHE"
  (
    # Two CI runs creating the same key take turns.
    flock 9
    if [ ! -d "$dir" ]; then
      prev=$(ls -1dt "$CACHE/$name"-* 2>/dev/null | grep -v '\.tmp$' | head -1 || true)
      if [ -n "$prev" ]; then
        echo "ci-cache: $name: new key $key, starting from $(basename "$prev")" >&2
        rm -rf "$dir.tmp"
        cp -a --reflink=auto "$prev" "$dir.tmp"
        mv "$dir.tmp" "$dir"
      else
        echo "ci-cache: $name: new key $key, empty (first build on this machine)" >&2
        mkdir -p "$dir"
      fi
    fi
    touch "$dir"
    for old in $(ls -1dt "$CACHE/$name"-* 2>/dev/null | grep -v '\.tmp$' | tail -n +2); do
      echo "ci-cache: $name: removing the older $(basename "$old")" >&2
      rm -rf "$old"
    done
  ) 9>"$CACHE/.lock-$name"
  echo "$dir"
}
