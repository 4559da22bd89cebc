#!/usr/bin/env bash
# scripts/size-table.sh BINARY [N]
# What each crate costs in an unstripped rtshield (e.g. the one cross.sh
# leaves in its target directory): the sizes of the functions and data
# symbols, grouped by the crate that names them (like `cargo bloat --crates`,
# and with the same limit: a generic instantiated for a crate's type counts
# for the crate whose function it is, often core/alloc/std).
# Prints the N (default 25) largest, as a Markdown table.
set -euo pipefail
bin=$1
n=${2:-25}
total=$(stat -c %s "$bin")
text=$(size -A "$bin" | awk '$1==".text"{print $2}')
echo "| crate | bytes | % of .text |"
echo "|---|---:|---:|"
nm -S --size-sort -C --radix=d "$bin" 2>/dev/null | awk -v text="$text" -v n="$n" '
  NF >= 4 && ($3 ~ /^[tTrRdDbB]$/) {
    size = $2 + 0; name = $4
    for (i = 5; i <= NF; i++) name = name " " $i
    # <T as Trait>::f: the crate of T; otherwise the first path segment.
    sub(/^</, "", name); sub(/^&(mut )?/, "", name); sub(/^dyn /, "", name)
    split(name, p, "::")
    c = p[1]
    if (c == name || c ~ /[ <>(]/) c = ($3 ~ /[tT]/) ? "[C/libc/unknown code]" : "[data]"
    sum[c] += size; all += size
  }
  END {
    for (c in sum) printf "%d\t%s\n", sum[c], c
  }' | sort -rn | head -"$n" | awk -F'\t' -v text="$text" '{printf "| %s | %d | %.1f |\n", $2, $1, 100*$1/text}'
echo
echo "file $total bytes, .text $text bytes"
