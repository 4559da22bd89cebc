#!/usr/bin/env bash
# Rewrites the numbered citations of the source documents ("seed 000",
# "Seed 001's", "seed-000", "(seed 004 §2.2)", ...) in code, tests, examples
# and benches into the names defined once in docs/sources.md:
#   000 the systress article          001 the torture article
#   002 the partitioning article      003 the PREEMPT_RT impact article
#   004 the ARTiS thesis
# Usage: scripts/rename-seeds.sh [REPO_ROOT]   (default: the repository of this script)
# Idempotent: a second run changes nothing. Words such as "the seed" of the
# simulator's random generator are left alone: only the spellings below change.
set -euo pipefail
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
cd "$root"

dirs=()
for d in crates src tests examples bench; do [ -d "$d" ] && dirs+=("$d"); done

# Files citing a document by number (text files only; target/ is never searched).
pattern='[Ss]eed[ _-]00[0-4]|in_the_seed\b|\bparses_seed_units|_seed_layout\b|\bseed_configs_pass|\bseed_examples_run'
mapfile -t files < <(grep -rlI -E "$pattern" "${dirs[@]}" --exclude-dir=target || true)

rules=(
  # Spellings that need more than a word swap.
  -e 's/Seed 000 §4\.3\.4'"'"'s timer_thread00\.txt ends with:/The timer_thread00.txt of the systress article §4.3.4 ends with:/g'
  -e 's/_reproduces_seed_000\b/_reproduces_the_systress_article/g'
  -e 's/seed 000 figure /the systress article'"'"'s figure /g'
  -e 's/seed 004 annex /the ARTiS thesis'"'"'s annex /g'
  -e 's/Seed 004 annex /The ARTiS thesis'"'"'s annex /g'
  -e 's/seed 004 ch\. /the ARTiS thesis, ch. /g'
  # Test names that say "seed" for the systress article (whole identifiers only).
  -e 's/\bhost_cfg_as_printed_in_the_seed\b/host_cfg_as_printed_in_the_systress_article/g'
  -e 's/\bparses_seed_units\b/parses_systress_article_units/g'
  -e 's/\bsystress_txt_has_seed_layout\b/systress_txt_has_the_systress_article_layout/g'
  -e 's/\btable_matches_seed_layout\b/table_matches_the_systress_article_layout/g'
  -e 's/\bseed_configs_pass_check_on_machines_of_their_size\b/systress_article_configs_pass_check_on_machines_of_their_size/g'
  -e 's/\bseed_examples_run_shortened\b/systress_article_examples_run_shortened/g'
  # "the seed-000 examples" -> "the systress article's examples"
  -e 's/\b([Tt])he seed-000\b/\1he systress article'"'"'s/g'
  -e 's/\b([Tt])he seed-001\b/\1he torture article'"'"'s/g'
  -e 's/\b([Tt])he seed-002\b/\1he partitioning article'"'"'s/g'
  -e 's/\b([Tt])he seed-003\b/\1he PREEMPT_RT impact article'"'"'s/g'
  -e 's/\b([Tt])he seed-004\b/\1he ARTiS thesis'"'"'s/g'
  # Capitalised (start of a sentence or comment).
  -e 's/\bSeed[ -]000\b/The systress article/g'
  -e 's/\bSeed[ -]001\b/The torture article/g'
  -e 's/\bSeed[ -]002\b/The partitioning article/g'
  -e 's/\bSeed[ -]003\b/The PREEMPT_RT impact article/g'
  -e 's/\bSeed[ -]004\b/The ARTiS thesis/g'
  # Everything else ("seed 001's", "(seed 000 §4.3.4)", "seed-000").
  -e 's/\bseed[ -]000\b/the systress article/g'
  -e 's/\bseed[ -]001\b/the torture article/g'
  -e 's/\bseed[ -]002\b/the partitioning article/g'
  -e 's/\bseed[ -]003\b/the PREEMPT_RT impact article/g'
  -e 's/\bseed[ -]004\b/the ARTiS thesis/g'
)
if [ ${#files[@]} -gt 0 ]; then
  sed -E -i "${rules[@]}" "${files[@]}"
fi

# The example configurations of the systress article call it "the seed".
cfgs=()
for f in examples/host.cfg examples/host2.cfg examples/rpi_isolcpus.cfg examples/rpi_isolcpus_load.cfg; do
  [ -f "$f" ] && cfgs+=("$f")
done
if [ ${#cfgs[@]} -gt 0 ]; then
  sed -E -i -e 's/\belided in the seed\b/elided in the systress article/g' \
            -e 's/\bthe seed elides\b/the systress article elides/g' "${cfgs[@]}"
fi

# What is left is reported, not guessed at.
left=$(grep -rnI -E "$pattern|the seed (elides|with)|in the seed\)" "${dirs[@]}" --exclude-dir=target || true)
if [ -n "$left" ]; then
  echo "rename-seeds: citations left for a human:" >&2
  echo "$left" >&2
  exit 1
fi
echo "rename-seeds: ${#files[@]} file(s) rewritten, plus ${#cfgs[@]} example configuration(s) checked"
