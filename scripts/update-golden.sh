#!/usr/bin/env bash
# Regenerates the expected outputs of the golden scenarios (tests/golden/README.md) from the built
# parasim, with the command line tests/golden/golden_test.cpp runs:
#
#   cd tests/golden/CASE && PARASIM scenario.json --backend BACKEND --out OUT --quiet --allow-oom
#
# A case checks the files it holds: result.BACKEND.json for each backend it runs under, and
# trace.BACKEND.json where its trace is kept too. This script rewrites exactly those files, so a
# change that moves a prediction updates every golden output in one command; `git diff` then shows
# what moved, and the commit says why.
#
#   scripts/update-golden.sh              # every case
#   scripts/update-golden.sh CASE...      # only these (folder names under tests/golden/)
#   PARASIM=other/build/parasim scripts/update-golden.sh   # another build (default: build/parasim)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
parasim=$(realpath "${PARASIM:-$root/build/parasim}")
[[ -x $parasim ]] || { echo "update-golden: $parasim not found; build first (bash scripts/bootstrap.sh test)" >&2; exit 1; }
golden=$root/tests/golden

if (($#)); then cases=("$@"); else
  cases=()
  for dir in "$golden"/*/; do cases+=("$(basename "$dir")"); done
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for c in "${cases[@]}"; do
  dir=$golden/$c
  [[ -f $dir/scenario.json ]] || { echo "update-golden: $dir/scenario.json not found" >&2; exit 1; }
  ran=0
  for backend in analytical simgrid; do
    [[ -e $dir/result.$backend.json ]] || continue
    out=$work/$c.$backend
    start=$SECONDS
    if ! (cd "$dir" && "$parasim" scenario.json --backend "$backend" --out "$out" --quiet --allow-oom > "$work/stdout" 2> "$work/stderr"); then
      echo "update-golden: $c under $backend failed:" >&2
      cat "$work/stderr" >&2
      exit 1
    fi
    cp "$out/result.json" "$dir/result.$backend.json"
    [[ -e $dir/trace.$backend.json ]] && cp "$out/trace.json" "$dir/trace.$backend.json"
    echo "$c $backend: $((SECONDS - start)) s"
    ran=1
  done
  ((ran)) || { echo "update-golden: $dir holds no result.analytical.json or result.simgrid.json to regenerate" >&2; exit 1; }
done
git -C "$root" status --short -- tests/golden
