#!/usr/bin/env bash
# scripts/test.sh [CARGO TEST OPTIONS...] [-- TEST HARNESS OPTIONS...]
# The whole test setup in one command, right after cloning (README, .ci/run):
#  - as root on Debian/Ubuntu: installs the packages of
#    scripts/test-packages.txt that are missing (and says which, and for
#    what), checks that every one is there, then runs the whole suite with
#    RTSHIELD_REQUIRE_ROOT=1: a test that cannot run fails (in code: the
#    test kit's skip helper panics), a test that printed a SKIP line fails
#    the run, and so does a test that touched the user's results store;
#  - not root: installs nothing, names the missing packages, runs what it
#    can, and ends with each test that did not run and why.
# With no option, every test of the workspace runs (`--workspace`); options
# go to `cargo test` (e.g. `-p rtshield-sim`, `--test integration trace_live`).
# The full output is kept in TARGET/rtshield-test.log.
#
# Why the runner reads the output: a test that skips prints `SKIP: why` and
# returns, which libtest counts as passed and hides with the rest of a
# passing test's output. `--show-output` keeps that output, under the
# test's name; this script finds the SKIP lines in it.
#
# Environment: RTSHIELD_REQUIRE_ROOT (default 1 as root, unset otherwise),
# RTSHIELD_CI_CACHE (default /var/cache/rtshield-ci: the pip packages),
# RTSHIELD_TEST_NO_INSTALL=1 (check the packages, install none).
# Exit status: 0 when every test that ran passed (and, under
# RTSHIELD_REQUIRE_ROOT=1, none skipped), 1 otherwise, 2 for a bad package list.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt-lib.sh
t0=$SECONDS
say() { echo "test.sh: $*" >&2; }
die() { echo "test.sh: $*" >&2; exit 1; }

# --- cargo (root's PATH under sudo often lacks ~/.cargo/bin) -------------
if ! command -v cargo >/dev/null 2>&1; then
  for home in "$HOME" ${SUDO_USER:+"$(getent passwd "$SUDO_USER" | cut -d: -f6)"}; do
    if [ -x "$home/.cargo/bin/cargo" ]; then
      export PATH="$home/.cargo/bin:$PATH"
      [ -d "$home/.rustup" ] && export RUSTUP_HOME=${RUSTUP_HOME:-$home/.rustup}
      export CARGO_HOME=${CARGO_HOME:-$home/.cargo}
      break
    fi
  done
fi
command -v cargo >/dev/null 2>&1 || die "cargo not found: install a Rust toolchain (1.85 or newer, e.g. https://rustup.rs) first"

# --- the package list ------------------------------------------------------
list=scripts/test-packages.txt
apt_pkgs=() apt_why=() pip_pkgs=() pip_why=()
n=0
while IFS= read -r line || [ -n "$line" ]; do
  n=$((n + 1))
  spec=${line%%#*}
  spec=${spec//[[:space:]]/}
  [ -n "$spec" ] || continue
  why=
  [[ "$line" == *"#"* ]] && why=$(sed 's/^[^#]*#[[:space:]]*//' <<<"$line")
  case "$spec" in
    apt:*)
      name=${spec#apt:}
      [[ "$name" =~ ^[a-z0-9][a-z0-9+.-]+$ ]] || { echo "$list:$n: bad apt package name '$name'" >&2; exit 2; }
      apt_pkgs+=("$name"); apt_why+=("$why") ;;
    pip:*)
      name=${spec#pip:}
      [[ "$name" =~ ^[A-Za-z0-9._-]+==[A-Za-z0-9.+!-]+$ ]] \
        || { echo "$list:$n: pip packages are pinned: pip:NAME==VERSION, not '$name'" >&2; exit 2; }
      pip_pkgs+=("$name"); pip_why+=("$why") ;;
    *) echo "$list:$n: expected apt:NAME or pip:NAME==VERSION, not '$spec'" >&2; exit 2 ;;
  esac
done < "$list"

root=0
[ "$(id -u)" = 0 ] && root=1
install=$root
[ "${RTSHIELD_TEST_NO_INSTALL:-0}" != 0 ] && install=0
# Why nothing is installed, and what that does to the tests that need it.
if [ "$root" = 0 ]; then
  no_install_why="not root"
  their_tests="their tests skip; as root this script installs them"
else
  no_install_why="RTSHIELD_TEST_NO_INSTALL=${RTSHIELD_TEST_NO_INSTALL:-}"
  their_tests="their tests fail under RTSHIELD_REQUIRE_ROOT=1, skip otherwise; unset RTSHIELD_TEST_NO_INSTALL to install them"
fi
have_apt=0
command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1 && have_apt=1

why_of() { # why_of NAME|pip:NAME: the list's comment for a package
  local i
  for i in "${!apt_pkgs[@]}"; do
    [ "${apt_pkgs[$i]}" = "$1" ] && { echo "${apt_why[$i]}"; return; }
  done
  for i in "${!pip_pkgs[@]}"; do
    [ "pip:${pip_pkgs[$i]}" = "$1" ] && { echo "${pip_why[$i]}"; return; }
  done
}

# --- apt packages --------------------------------------------------------
not_installed=()   # what could not be installed (not root, no apt): reported at the end
if [ "$have_apt" = 1 ]; then
  mapfile -t missing < <(apt_missing "${apt_pkgs[@]}")
  if [ ${#missing[@]} -gt 0 ] && [ "$install" = 1 ]; then
    say "installing ${#missing[@]} package(s) the tests need (from $list):"
    for p in "${missing[@]}"; do say "  $p    # $(why_of "$p")"; done
    apt_update --native-fallback
    apt_install test.sh "${missing[@]}"
    # apt:prometheus is there for promtool only; on a systemd machine its
    # package enables and starts the server (port 9090): stop and disable it.
    if printf '%s\n' "${missing[@]}" | grep -qx prometheus && [ -d /run/systemd/system ]; then
      say "prometheus is installed for promtool only: systemctl disable --now prometheus.service"
      systemctl disable --now prometheus.service >&2 || say "warning: could not disable prometheus.service"
    fi
  elif [ ${#missing[@]} -gt 0 ]; then
    not_installed=("${missing[@]}")
    say "$no_install_why: not installing ${missing[*]} ($their_tests)"
  else
    say "the ${#apt_pkgs[@]} packages of $list are installed"
  fi
else
  say "no apt-get here: cannot check or install ${apt_pkgs[*]} (install their equivalents; tests that need a missing one skip, or fail as root)"
fi

# --- pip packages: a private directory on PYTHONPATH ------------------------
if [ ${#pip_pkgs[@]} -gt 0 ]; then
  cache=${RTSHIELD_CI_CACHE:-/var/cache/rtshield-ci}
  key=$(printf '%s\n' "${pip_pkgs[@]}" | sha256sum | cut -c1-16)
  pipdir=$cache/pip-$key
  if [ ! -f "$pipdir/.complete" ] && [ "$install" = 1 ]; then
    /usr/bin/python3 -m pip --version >/dev/null 2>&1 \
      || die "$list has pip packages but /usr/bin/python3 has no pip: add apt:python3-pip to $list"
    say "installing ${pip_pkgs[*]} into $pipdir (on PYTHONPATH for the tests; the system's Python is not changed):"
    for i in "${!pip_pkgs[@]}"; do say "  ${pip_pkgs[$i]}    # ${pip_why[$i]}"; done
    rm -rf "$pipdir.tmp"
    /usr/bin/python3 -m pip install -q --disable-pip-version-check --no-warn-script-location \
      --target "$pipdir.tmp" "${pip_pkgs[@]}" || die "pip install failed for: ${pip_pkgs[*]}"
    touch "$pipdir.tmp/.complete"
    rm -rf "$pipdir"
    mv "$pipdir.tmp" "$pipdir"
  fi
  if [ -f "$pipdir/.complete" ]; then
    export PYTHONPATH="$pipdir${PYTHONPATH:+:$PYTHONPATH}"
    for spec in "${pip_pkgs[@]}"; do
      have=$(/usr/bin/python3 -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' "${spec%%==*}" 2>/dev/null) \
        || die "pip:$spec is not importable from $pipdir (remove that directory and rerun as root)"
      [ "$have" = "${spec#*==}" ] || die "pip:$spec: $pipdir has version $have"
    done
  else
    not_installed+=("${pip_pkgs[@]/#/pip:}")
    say "$no_install_why: not installing ${pip_pkgs[*]} ($their_tests)"
  fi
fi

# --- the suite -------------------------------------------------------------
if [ "$root" = 1 ]; then
  export RTSHIELD_REQUIRE_ROOT=${RTSHIELD_REQUIRE_ROOT:-1}
fi
strict=0
case "${RTSHIELD_REQUIRE_ROOT:-}" in ""|0) ;; *) strict=1 ;; esac

cargo_args=() test_args=()
seen_dd=0
for a in "$@"; do
  if [ "$seen_dd" = 0 ] && [ "$a" = -- ]; then seen_dd=1; continue; fi
  if [ "$seen_dd" = 1 ]; then test_args+=("$a"); else cargo_args+=("$a"); fi
done
[ ${#cargo_args[@]} -gt 0 ] || cargo_args=(--workspace)

target=${CARGO_TARGET_DIR:-target}
mkdir -p "$target"
log=$target/rtshield-test.log
# The tests' own runs must not land in the user's results store. Every
# test runs rtshield through the test kit's commands (a private empty home
# each, no store: crates/testkit/src/cmd.rs); a test that bypasses them
# writes into this sentinel XDG_DATA_HOME instead, and the run fails
# under RTSHIELD_REQUIRE_ROOT=1 (a warning otherwise). The real store,
# ~/.local/share/rtshield of the user running this, is listed (names,
# sizes, mtimes) before and after the tests, inside the live lock: any
# change fails the run the same way.
store_home=$(mktemp -d /tmp/rtshield-test-xdg.XXXXXX)
trap 'rm -rf "$store_home"' EXIT
real_store=$(getent passwd "$(id -u)" | cut -d: -f6)/.local/share/rtshield
store_list=$target/rtshield-test-store

cargo --version >&2
say "building the tests"
cargo test --locked --no-run "${cargo_args[@]}" 2>&1 | grep -v '^  Executable ' >&2
build_s=$((SECONDS - t0))

# Live tests of two runs on one machine would fight over cgroups, tracefs
# and CPUs: runs of this script (and `flock /tmp/rtshield-live.lock cargo test`)
# take turns.
lock=(flock /tmp/rtshield-live.lock)
command -v flock >/dev/null 2>&1 || lock=()
if [ ${#lock[@]} -gt 0 ] && ! flock -n /tmp/rtshield-live.lock true 2>/dev/null; then
  say "waiting for /tmp/rtshield-live.lock (another test run on this machine)"
  t_wait=$SECONDS
  flock /tmp/rtshield-live.lock true
  say "waited $((SECONDS - t_wait)) s"
fi
say "running the tests$([ "$strict" = 1 ] && echo " with RTSHIELD_REQUIRE_ROOT=1: a test that cannot run fails")"
t_run=$SECONDS
set +e
# shellcheck disable=SC2016 # expanded by the inner shell
XDG_DATA_HOME=$store_home "${lock[@]}" bash -c '
    real=$1 list=$2; shift 2
    ls_store() { find "$real" -printf "%p %s %T@\n" 2>/dev/null | LC_ALL=C sort; }
    ls_store >"$list.before"; "$@"; st=$?; ls_store >"$list.after"; exit $st' \
    bash "$real_store" "$store_list" \
    cargo test --locked --no-fail-fast "${cargo_args[@]}" -- --show-output "${test_args[@]}" 2>&1 \
  | tee "$log" \
  | awk '
      # Hide what passing tests printed (kept in the log, read below), show the rest.
      /^successes:$/ { hide = 1; next }
      /^failures:$/ || /^test result: / || /^ *(Running|Doc-tests) / { hide = 0 }
      !hide { print; fflush() }'
status=${PIPESTATUS[0]}
set -e
run_s=$((SECONDS - t_run))

# --- what did not run --------------------------------------------------------
# SKIP lines in a test's captured output, as "BINARY TEST: LINE", and ignored
# tests. The test kit's own tests of the skip mechanism print a SKIP on
# purpose (outside RTSHIELD_REQUIRE_ROOT) and are not counted.
mapfile -t skipped < <(awk '
  /^ *(Running|Doc-tests) / {
    bin = $0; sub(/.*\(/, "", bin); sub(/\).*/, "", bin); sub(/.*\//, "", bin); sub(/-[0-9a-f]+$/, "", bin)
    if ($1 == "Doc-tests") bin = "doctests " $2
    test = ""
  }
  /^---- .* stdout ----$/ { test = $0; sub(/^---- /, "", test); sub(/ stdout ----$/, "", test) }
  /^test result: / { test = "" }
  /^SKIP[: ]/ && test != "" {
    if (test ~ /(^|::)(an_unmet_precondition_skips_or_fails_by_the_variable|a_missing_tool_is_unmet)$/) next
    if (!seen[bin " " test]++) print bin "  " test ": " $0
  }
  /^test .* \.\.\. ignored/ {
    t = $0; sub(/^test /, "", t); reason = t; sub(/ \.\.\. ignored.*/, "", t)
    sub(/.*\.\.\. ignored,? ?/, "", reason)
    print bin "  " t ": ignored" (reason != "" ? " (" reason ")" : "")
  }' "$log")
read -r passed failed _ignored < <(awk '/^test result: /{
    for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) g += $i }
  } END { print p + 0, f + 0, g + 0 }' "$log")

echo >&2
if [ ${#skipped[@]} -gt 0 ]; then
  say "tests that did not run, and why:"
  printf '  %s\n' "${skipped[@]}" >&2
fi
if [ ${#not_installed[@]} -gt 0 ]; then
  say "missing packages (as root, without RTSHIELD_TEST_NO_INSTALL, this script installs them):"
  for p in "${not_installed[@]}"; do say "  $p    # $(why_of "$p")"; done
fi
store_bad=0
stored=$(find "$store_home" -mindepth 1 -print -quit)
if [ -n "$stored" ]; then
  trap - EXIT
  store_bad=1
  say "$([ "$strict" = 1 ] && echo ERROR || echo WARNING): some test ran rtshield outside the test kit's commands and wrote into the default results store; without this script that is ~/.local/share/rtshield (kept for a look: $store_home):"
  find "$store_home" -type f -printf '  %p %s bytes\n' >&2
fi
if ! cmp -s "$store_list.before" "$store_list.after"; then
  store_bad=1
  say "$([ "$strict" = 1 ] && echo ERROR || echo WARNING): $real_store changed during the tests (a test, or another run on this machine not under /tmp/rtshield-live.lock):"
  diff "$store_list.before" "$store_list.after" | sed 's/^/  /' >&2 || true
fi
rm -f "$store_list.before" "$store_list.after"
say "build ${build_s} s, tests ${run_s} s, total $((SECONDS - t0)) s; full output in $log"
# The plain closing line (CI reads it): skipped = did not run (SKIP line or ignored).
# A test that printed SKIP returned early and libtest counted it as passed.
nskip=$(printf '%s\n' "${skipped[@]}" | grep -c ': SKIP' || true)
echo "test.sh: $((passed - nskip)) passed, $failed failed, ${#skipped[@]} skipped"
if [ "$status" != 0 ]; then
  say "FAILED (cargo test exited $status; the failures are listed above)"
  exit 1
fi
if [ "$strict" = 1 ] && [ "$store_bad" = 1 ]; then
  say "FAILED: the tests touched a results store outside their own directories (see above)"
  exit 1
fi
if [ "$strict" = 1 ] && [ ${#skipped[@]} -gt 0 ]; then
  say "FAILED: ${#skipped[@]} test(s) did not run although RTSHIELD_REQUIRE_ROOT=$RTSHIELD_REQUIRE_ROOT (every test must run here)"
  exit 1
fi
say "OK"
