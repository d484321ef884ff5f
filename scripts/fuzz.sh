#!/usr/bin/env bash
# Fuzzes one of parasim's input readers with libFuzzer for a while:
#
#   scripts/fuzz.sh TARGET SECONDS        TARGET: scenario | graph_json | hf_config | profile | result_json | search_json | nccl_tests
#
# Builds the targets (clang, ASan + UBSan, coverage) in build-fuzz/ (or $PARASIM_FUZZ_BUILD), seeds the
# run with the committed corpus fuzz/corpus/TARGET and the files parasim ships (scenarios/examples,
# tests/data, sim/profiles), and runs for SECONDS. New interesting inputs go to
# build-fuzz/corpus/TARGET; when the run ends they are merged (minimised) into fuzz/corpus/TARGET.
# A crash, leak, sanitizer report or an input slower than 10 s stops the run and is written as
# build-fuzz/artifacts/TARGET/crash-* (or leak-*, timeout-*, oom-*): fix the fault, then copy the
# input to fuzz/regressions/TARGET/ so tests/fuzz/regressions_test.cpp replays it in every build.
# The last line printed is libFuzzer's final statistics (stat::number_of_executed_units: exec count).
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 TARGET SECONDS   (TARGET: scenario, graph_json, hf_config, profile, result_json, search_json, nccl_tests, kernel_csv, input_file)" >&2
  exit 2
fi
target=$1
seconds=$2
case "$target" in
  scenario | graph_json | hf_config | profile | result_json | search_json | nccl_tests | kernel_csv | input_file) ;;
  *) echo "$0: unknown target '$target' (expected scenario, graph_json, hf_config, profile, result_json, search_json, nccl_tests, kernel_csv or input_file)" >&2; exit 2 ;;
esac
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "$0: SECONDS must be a whole number, got '$seconds'" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
build=${PARASIM_FUZZ_BUILD:-$root/build-fuzz}
jobs=${PARASIM_JOBS:-2}

# clang 16 or newer (Debian 12: apt install clang-16 libclang-rt-16-dev): parasim's C++20 captures
# structured bindings in lambdas, which clang 14, Debian's default clang++, cannot compile.
compiler=${CXX_FUZZ:-}
if [[ -z "$compiler" ]]; then
  for c in clang++-19 clang++-18 clang++-17 clang++-16 clang++; do
    if command -v "$c" > /dev/null; then compiler=$c; break; fi
  done
fi
[[ -n "$compiler" ]] || { echo "$0: no clang++ found (Debian 12: apt install clang-16 libclang-rt-16-dev)" >&2; exit 2; }
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# PARASIM_FUZZ_NO_BUILD=1 runs the targets already built in $build as they are (e.g. to fuzz each
# target in turn from one build while the sources change under you).
if [[ "${PARASIM_FUZZ_NO_BUILD:-0}" != 1 ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$(command -v "$compiler")" -DPARASIM_FUZZ=ON \
    -DPARASIM_BUILD_TESTS=OFF -DPARASIM_BUILD_BENCH=OFF "${launcher[@]}" > /dev/null
  cmake --build "$build" -j "$jobs" --target "${target}_fuzzer"
fi

# Seeds: the committed corpus, then every shipped file of the format.
seeds=("$root/fuzz/corpus/$target")
case "$target" in
  scenario) seeds+=("$root/scenarios/examples" "$root/tests/data/scenarios" "$root/scenarios/validation") ;;
  graph_json) seeds+=("$root/tests/data/models/graphs" "$root/tests/data/scenarios/models") ;;
  hf_config) seeds+=("$root/tests/data/models/hf" "$root/tests/data/models/bad") ;;
  profile) seeds+=("$root/sim/profiles" "$root/tests/data/scenarios/profiles") ;;
  result_json) seeds+=("$root/tests/golden" "$root/tests/data") ;;
  search_json) ;;  # its committed corpus holds the seeds: two search.json files of a small search
  nccl_tests) seeds+=("$root/tests/data/calibrate") ;;
  kernel_csv) ;;  # its committed corpus holds the seeds: kernel CSVs in the documented layout
  input_file) ;;  # its committed corpus holds the seeds: every kind of file for every reader
esac
existing=()
for s in "${seeds[@]}"; do [[ -d "$s" ]] && existing+=("$s"); done

work="$build/corpus/$target"
artifacts="$build/artifacts/$target"
mkdir -p "$work" "$artifacts" "$root/fuzz/corpus/$target"
fuzzer="$build/fuzz/${target}_fuzzer"

# -timeout: an input that takes 10 s is a hang; -rss_limit_mb: one that needs 2 GiB is unbounded
# growth; -max_len: 64 KiB holds every shipped example with room to grow.
status=0
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  "$fuzzer" "$work" "${existing[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 || status=$?

# Keep the corpus small: only inputs that add coverage over what is committed.
"$fuzzer" -merge=1 "$root/fuzz/corpus/$target" "$work" > "$build/merge-$target.log" 2>&1 || true
echo "fuzz.sh: $target ran ${seconds} s, exit $status; corpus fuzz/corpus/$target now holds $(ls "$root/fuzz/corpus/$target" | wc -l) inputs"
exit "$status"
