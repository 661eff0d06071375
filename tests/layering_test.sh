#!/usr/bin/env bash
# The pipeline's layering (lib/stages.txt), checked on every #include of lib/ and cli/:
#   - a stage includes only itself and the stages above it, never one below (a back-edge);
#   - of another stage it includes only the public headers stages.txt lists;
#   - a public header includes only public headers, and none names re2/ or nlohmann/, so that
#     cli/ and report/ never compile against the matcher's or the tables' libraries.
#   layering_test.sh SOURCE_DIR
set -uo pipefail
root=${1:?usage: layering_test.sh SOURCE_DIR}
cd "$root" || exit 2

declare -A order public
n=0
while read -r stage headers; do
  [[ -z $stage || $stage == \#* ]] && continue
  order[$stage]=$n
  for h in $headers; do public[$stage/$h]=1; done
  n=$((n + 1))
done <lib/stages.txt
order[cli]=$n

problems=0
problem() { echo "layering: $*"; problems=$((problems + 1)); }

files=$(find lib cli -name '*.h' -o -name '*.cpp' | sort)
for file in $files; do
  stage=${file#lib/}
  stage=${stage%%/*}
  [[ $file == cli/* ]] && stage=cli
  [[ -n ${order[$stage]+x} ]] || { problem "$file: folder $stage is not a stage of lib/stages.txt"; continue; }
  is_public=${public[${file#lib/}]+x}
  while IFS=: read -r line include; do
    target=$(sed -E 's/^#include "([^"]+)".*/\1/' <<<"$include")
    dep=${target%%/*}
    # cli/ may include its own headers (cli/completions.h); no stage may include cli/.
    if [[ -z ${order[$dep]+x} || ($dep == cli && $stage != cli) ]]; then
      problem "$file:$line: includes \"$target\", which is no stage's header"
    elif ((order[$dep] > order[$stage])); then
      problem "$file:$line: $stage includes \"$target\" of $dep, a later stage (back-edge)"
    elif [[ $dep != "$stage" || -n $is_public ]] && [[ -z ${public[$target]+x} ]]; then
      problem "$file:$line: includes \"$target\", which is internal to $dep"
    fi
  done < <(grep -n '^#include "' "$file")
  if [[ -n $is_public ]] && grep -nE '^#include <(re2|nlohmann)/' "$file" >/dev/null; then
    problem "$file: a public header includes $(grep -oE '<(re2|nlohmann)/[^>]+>' "$file" | head -1)"
  fi
done

checked=$(wc -w <<<"$files")
if ((problems)); then
  echo "layering: $problems problems in $checked files"
  exit 1
fi
echo "layering: $checked files, every include follows lib/stages.txt"
