#!/usr/bin/env bash
# Issue 16's table on this host: the six plans of each bundled CPU scenario, executed for real on two
# MPI ranks against the prediction from a profile calibrated here, in ROUNDS rounds (default 3). Each
# round calibrates afresh (`calibrate --backend cpu --threads 1`, then `--backend mpi --link shm` on
# top) and runs every plan once (`--steps 5`, the median of five timed steps), so the slow drift of a
# shared machine falls on all plans of a round alike. Prints, per plan, each round's error and the
# median over rounds, as a Markdown table (docs/validation.md), then each run's host check.
# Usage: scripts/execute-table.sh [BUILD_DIR] [WORK_DIR]   (ROUNDS=N in the environment)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
work="${2:-$(mktemp -d)}"
rounds="${ROUNDS:-3}"
parasim="$build/parasim"
mpirun=(mpirun -np 2)
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
plans=(single base tp2 pp2-gpipe pp2-1f1b dp2-zero3)
scenarios=(tiny-gpt-cpu small-resnet-cpu)
join() { local IFS=/; echo "$*"; }  # "a/b/c"
mkdir -p "$work"
for ((r = 1; r <= rounds; ++r)); do
  d="$work/round$r"; mkdir -p "$d"
  "$parasim" calibrate --backend cpu --threads 1 --out "$d/cpu.json" > "$d/calibrate-cpu.txt" 2>&1
  "${mpirun[@]}" "$parasim" calibrate --backend mpi --link shm --base "$d/cpu.json" --out "$d/cpu-shm.json" > "$d/calibrate-mpi.txt" 2>&1
  for s in "${scenarios[@]}"; do
    for p in "${plans[@]}"; do
      if [ "$p" = single ]; then
        "$parasim" execute "$here/scenarios/execute/$s.json" --plan single --threads 1 --profile "$d/cpu-shm.json" --steps 5 --out "$d/$s-$p" > "$d/$s-$p.txt" 2>&1
      else
        "${mpirun[@]}" "$parasim" execute "$here/scenarios/execute/$s.json" --plan "$p" --profile "$d/cpu-shm.json" --steps 5 --out "$d/$s-$p" > "$d/$s-$p.txt" 2>&1
      fi
    done
  done
  echo "round $r of $rounds done: $d" >&2
done
# "| one step | MEDIAN | FASTEST | SLOWEST | PREDICTED | ERROR |" in each report.md
echo "| scenario | plan | measured median, each round | predicted, each round | error, each round | median error |"
echo "|---|---|---|---|---|---:|"
for s in "${scenarios[@]}"; do
  for p in "${plans[@]}"; do
    measured=(); predicted=(); errors=()
    for ((r = 1; r <= rounds; ++r)); do
      line="$(grep '^| one step |' "$work/round$r/$s-$p/report.md")"
      measured+=("$(echo "$line" | cut -d'|' -f3 | xargs)")
      predicted+=("$(echo "$line" | cut -d'|' -f6 | xargs)")
      errors+=("$(echo "$line" | cut -d'|' -f7 | xargs)")
    done
    median="$(printf '%s\n' "${errors[@]}" | tr -d '%+' | sort -g | awk '{v[NR]=$1} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%+.1f%%", m}')"
    echo "| $s | $p | $(join "${measured[@]}") | $(join "${predicted[@]}") | $(join "${errors[@]}") | $median |"
  done
done
# Each run's host check (report.md: "| 512x512x512 fp32 sgemm | M | P | E |", "| 64 MiB memory pass | ..."):
# how far the host had moved from each round's calibration when the plan ran.
echo
echo "| scenario | plan | host check, GEMM error each round | host check, memory pass error each round |"
echo "|---|---|---|---|"
for s in "${scenarios[@]}"; do
  for p in "${plans[@]}"; do
    gemm=(); memory=()
    for ((r = 1; r <= rounds; ++r)); do
      gemm+=("$(grep '^| 512x512x512 fp32 sgemm |' "$work/round$r/$s-$p/report.md" | cut -d'|' -f5 | xargs)")
      memory+=("$(grep '^| 64 MiB memory pass |' "$work/round$r/$s-$p/report.md" | cut -d'|' -f5 | xargs)")
    done
    echo "| $s | $p | $(join "${gemm[@]}") | $(join "${memory[@]}") |"
  done
done
