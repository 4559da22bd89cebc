#!/bin/sh
# Browser check of report.html (issue 5): load it in headless Chromium,
# require no script error, one curve per series, and that clicking the
# first legend entry hides exactly that curve. Uses the page's own test
# hook (`report.html#selftest`, see crates/report/src/html.rs).
#
# Usage: bench/report-browser.sh [REPORT_DIR]
#   Without REPORT_DIR, builds rtshield and makes a report from two
#   synthetic runs (crates/report/examples/synth.rs) and a cyclictest file.
# Needs: chromium (apt-get install -y chromium).
set -eu
cd "$(dirname "$0")/.."
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || { echo "SKIP: chromium not installed (apt-get install -y chromium)"; exit 0; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -ge 1 ]; then
    dir=$1
else
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
    cargo build -q -p rtshield
    cargo build -q -p rtshield-report --example synth
    bin=$CARGO_TARGET_DIR/debug/rtshield
    "$CARGO_TARGET_DIR/debug/examples/synth" "$work/in" 2 720
    "$bin" report "$work/in/idle" "$work/in/loaded" "$work/in/cyclictest.json" -o "$work/report" >/dev/null
    dir=$work/report
fi
page=$(cd "$dir" && pwd)/report.html
[ -f "$page" ] || { echo "FAIL: $page missing"; exit 1; }
expected=$(grep -o '"label":' "$page" | wc -l)

"$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run \
    --user-data-dir="$work/profile" --enable-logging=stderr --v=0 \
    --virtual-time-budget=5000 --dump-dom "file://$page#selftest" \
    >"$work/dom.html" 2>"$work/console.log" || true

line=$(grep -o 'SELFTEST {[^<]*}' "$work/dom.html" || true)
echo "page:     $page"
echo "selftest: ${line:-<none>}"
fail=0
[ -n "$line" ] || { echo "FAIL: the page did not run its self-test (script error?)"; fail=1; }
json=${line#SELFTEST }
get() { printf '%s' "$json" | sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }
if [ -n "$line" ]; then
    [ "$(get series)" = "$expected" ] || { echo "FAIL: $(get series) series, $expected in the data"; fail=1; }
    [ "$(get curves)" = "$(get series)" ] || { echo "FAIL: $(get curves) curves for $(get series) series"; fail=1; }
    [ "$(get legend)" = "$(get series)" ] || { echo "FAIL: $(get legend) legend entries"; fail=1; }
    [ "$(get visibleBefore)" = "$(get series)" ] || { echo "FAIL: not every curve visible at load"; fail=1; }
    [ "$(get visibleAfter)" = "$(( $(get series) - 1 ))" ] || { echo "FAIL: clicking the legend did not hide one curve"; fail=1; }
    [ "$(get firstHidden)" = "true" ] || { echo "FAIL: the clicked curve is still shown"; fail=1; }
    [ "$(get hover)" = "true" ] || { echo "FAIL: hovering the first point does not show its count"; fail=1; }
    printf '%s' "$json" | grep -q '"errors":\[\]' || { echo "FAIL: script errors: $json"; fail=1; }
fi
# Chromium prints page console errors on stderr with --enable-logging.
if grep -E 'Uncaught|CONSOLE.*(Error|error)' "$work/console.log"; then
    echo "FAIL: console errors above"; fail=1
fi
# Self-contained: no http(s) reference anywhere in the page.
if grep -Eq '(src|href)="https?:' "$page"; then echo "FAIL: the page loads from the network"; fail=1; fi
[ $fail -eq 0 ] && echo "PASS: $(get curves) curves, legend click hides one, hover shows counts, no console errors, no network"
exit $fail
