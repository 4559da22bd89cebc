# shellcheck shell=bash
# Sourced (not run). Build caches kept across CI runs on one machine, under
# $RTSHIELD_CI_CACHE (default /var/cache/rtshield-ci), each named by the hash
# of what its content depends on (the Cargo.lock, the toolchain, the flags),
# the way CI services key theirs:
#
#   ci_cache_dir NAME INPUT...  sets CI_CACHE_DIR to $CACHE/NAME-HASH, HASH
#                               being that of the INPUT strings. A new key
#                               starts as a copy of the most recently used
#                               NAME-* (cargo then rebuilds only what changed,
#                               not every dependency), and the older NAME-*
#                               are removed (a target directory takes
#                               gigabytes).
#   ci_host_target_dir          the same for the host's target directory, keyed
#                               by `rustc -vV` and Cargo.lock (.ci/run).
#
# Both return 1, with a line naming the step that failed, on any failure
# (an empty input, a failed lock, copy, rename or removal): a cache named
# by the hash of a failed command's empty output would silently be shared
# by every toolchain. Call them as plain commands, not in `$(...)`: bash
# ignores `set -e` inside a command substitution, and every step here is
# checked explicitly so that a caller's `|| die` (which also turns `set -e`
# off inside the function) does not hide a failure either.
CACHE=${RTSHIELD_CI_CACHE:-/var/cache/rtshield-ci}

ci_cache_fail() {
  echo "ci-cache: $*" >&2
  return 1
}

ci_cache_dir() {
  local name=$1 key dir i=0 input
  shift
  CI_CACHE_DIR=
  [ -n "$name" ] || { ci_cache_fail "ci_cache_dir: no cache name"; return 1; }
  [ $# -gt 0 ] || { ci_cache_fail "$name: no input to key the cache by"; return 1; }
  for input in "$@"; do
    i=$((i + 1))
    [ -n "$input" ] || { ci_cache_fail "$name: input $i of the cache key is empty (the command that computes it failed?)"; return 1; }
  done
  key=$(printf '%s\n' "$@" | sha256sum | cut -c1-16) && [ ${#key} = 16 ] \
    || { ci_cache_fail "$name: hashing the key inputs failed (sha256sum)"; return 1; }
  dir=$CACHE/$name-$key
  mkdir -p "$CACHE" || { ci_cache_fail "$name: cannot create $CACHE"; return 1; }
  # Two CI runs creating the same key take turns; the subshell holds the
  # lock on fd 9 and exits 1 at its first failed step (already reported).
  (
    flock 9 || { ci_cache_fail "$name: flock $CACHE/.lock-$name failed"; exit 1; }
    if [ ! -d "$dir" ]; then
      prev=$(ls -1dt "$CACHE/$name"-* 2>/dev/null | grep -v '\.tmp$' | head -1 || true)
      if [ -n "$prev" ]; then
        echo "ci-cache: $name: new key $key, starting from $(basename "$prev")" >&2
        rm -rf "$dir.tmp" || { ci_cache_fail "$name: cannot remove the leftover $dir.tmp"; exit 1; }
        cp -a --reflink=auto "$prev" "$dir.tmp" \
          || { ci_cache_fail "$name: copying $prev to $dir.tmp failed (disk full?); $prev is kept"; exit 1; }
        mv "$dir.tmp" "$dir" || { ci_cache_fail "$name: renaming $dir.tmp to $dir failed"; exit 1; }
      else
        echo "ci-cache: $name: new key $key, empty (first build on this machine)" >&2
        mkdir -p "$dir" || { ci_cache_fail "$name: cannot create $dir"; exit 1; }
      fi
    fi
    # The newest first: what the next new key starts from.
    touch "$dir" || { ci_cache_fail "$name: cannot touch $dir"; exit 1; }
    for old in $(ls -1dt "$CACHE/$name"-* 2>/dev/null | grep -v '\.tmp$' | grep -vxF "$dir" || true); do
      echo "ci-cache: $name: removing the older $(basename "$old")" >&2
      rm -rf "$old" || { ci_cache_fail "$name: cannot remove the older $old"; exit 1; }
    done
  ) 9>"$CACHE/.lock-$name" || { ci_cache_fail "$name: preparing $dir failed (see above)"; return 1; }
  CI_CACHE_DIR=$dir
}

ci_host_target_dir() {
  local rustc_v lock
  rustc_v=$(rustc -vV) \
    || { ci_cache_fail "host-target: 'rustc -vV' failed (is a toolchain installed for HOME=$HOME? see above)"; return 1; }
  lock=$(cat Cargo.lock) || { ci_cache_fail "host-target: cannot read Cargo.lock"; return 1; }
  ci_cache_dir host-target "$rustc_v" "$lock"
}
