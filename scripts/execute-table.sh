#!/usr/bin/env bash
# Issue 16's table on this host: the six plans of each bundled CPU scenario, executed for real on two
# MPI ranks against the prediction from a profile calibrated here, in ROUNDS rounds (default 3). Each
# round calibrates afresh (`calibrate --backend cpu --threads 1`, then `--backend mpi --link shm` on
# top) and runs every plan once (`--steps 5`, the median of five timed steps), so the slow drift of a
# shared machine falls on all plans of a round alike. Prints, per plan, each round's error and the
# median over rounds, as a Markdown table (docs/validation.md), then each run's host check.
# Then, per scenario and round, the plans in measured and in predicted order, and whether the two
# orders agree (the acceptance's ranking), with each pair of neighbours' measured gap beside the
# slower one's spread over its steps (fastest to slowest): a gap inside the spread is not a ranking
# the run can tell apart. Last, each pair of plans over all the rounds: which was measured faster
# and which predicted faster in each round, and whether the rounds themselves agree on it.
# Usage: scripts/execute-table.sh [BUILD_DIR] [WORK_DIR]   (ROUNDS=N in the environment; REPORT_ONLY=1
# prints the tables from WORK_DIR's rounds of an earlier run without running anything)
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
  [ "${REPORT_ONLY:-0}" = 1 ] && break
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
# The ranking: "| one step | MEDIAN | FASTEST | SLOWEST | PREDICTED | ERROR |", times in ms or s.
seconds() { awk -v v="$1" -v u="$2" 'BEGIN { f = (u == "s") ? 1 : (u == "ms") ? 1e-3 : (u == "us") ? 1e-6 : 0; printf "%.9f", v * f }'; }
echo
echo "| scenario | round | measured order (gap to the next, that plan's spread) | predicted order | same order |"
echo "|---|---|---|---|---|"
for s in "${scenarios[@]}"; do
  for ((r = 1; r <= rounds; ++r)); do
    rows=()
    for p in "${plans[@]}"; do
      line="$(grep '^| one step |' "$work/round$r/$s-$p/report.md")"
      read -r mv mu <<< "$(echo "$line" | cut -d'|' -f3)"
      read -r fv fu <<< "$(echo "$line" | cut -d'|' -f4)"
      read -r sv su <<< "$(echo "$line" | cut -d'|' -f5)"
      read -r pv pu <<< "$(echo "$line" | cut -d'|' -f6)"
      rows+=("$p $(seconds "$mv" "$mu") $(seconds "$fv" "$fu") $(seconds "$sv" "$su") $(seconds "$pv" "$pu")")
    done
    measured_order="$(printf '%s\n' "${rows[@]}" | sort -g -k2 | awk '
      { name[NR] = $1; m[NR] = $2; spread[NR] = $4 - $3 }
      END { for (i = 1; i <= NR; ++i) { printf "%s", name[i]; if (i < NR) printf " < (%+.1f%%, %.1f%%) ", 100 * (m[i+1] - m[i]) / m[i], 100 * spread[i+1] / m[i+1] } }')"
    predicted_order="$(printf '%s\n' "${rows[@]}" | sort -g -k5 | awk '
      { name[NR] = $1; p[NR] = $5 }
      END { for (i = 1; i <= NR; ++i) { printf "%s", name[i]; if (i < NR) printf (p[i+1] - p[i] <= 1e-3 * p[i]) ? " = " : " < " } }')"
    # Pairs the prediction puts the other way round from the measurement (a predicted tie, within
    # 0.1%, puts no pair either way), each with the measured gap and the slower plan's spread.
    discordant="$(printf '%s\n' "${rows[@]}" | awk '
      { name[NR] = $1; m[NR] = $2; lo[NR] = $3; hi[NR] = $4; p[NR] = $5 }
      END {
        out = ""
        for (i = 1; i <= NR; ++i) for (j = 1; j <= NR; ++j)
          if (m[i] < m[j] && p[i] - p[j] > 1e-3 * p[j])
            out = out sprintf("%s%s measured %.1f%% before %s (spread %.1f%%)", out == "" ? "" : "; ", name[i], 100 * (m[j] - m[i]) / m[j], name[j], 100 * (hi[j] - lo[j]) / m[j])
        print out == "" ? "yes" : "no: " out
      }')"
    echo "| $s | $r | $measured_order | $predicted_order | $discordant |"
  done
done
# Each pair of plans over every round: which the run measured faster (< the first, > the second) and
# which the prediction put faster (= a tie within 0.1%), and whether the rounds themselves agree. A
# pair the rounds order both ways cannot be ordered by any one prediction; the ones they order alike
# are what the prediction must get right.
echo
echo "| scenario | pair | measured, each round | predicted, each round | measured gap (second − first, over the faster), each round | verdict |"
echo "|---|---|---|---|---|---|"
for s in "${scenarios[@]}"; do
  for ((r = 1; r <= rounds; ++r)); do
    for p in "${plans[@]}"; do
      line="$(grep '^| one step |' "$work/round$r/$s-$p/report.md")"
      read -r mv mu <<< "$(echo "$line" | cut -d'|' -f3)"
      read -r pv pu <<< "$(echo "$line" | cut -d'|' -f6)"
      echo "$r $p $(seconds "$mv" "$mu") $(seconds "$pv" "$pu")"
    done
  done | awk -v s="$s" -v rounds="$rounds" '
    { if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } m[$1, $2] = $3; p[$1, $2] = $4 }
    END {
      for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) {
        a = order[i]; b = order[j]; ms = ""; ps = ""; gaps = ""; first = 0; ties = 0; agree = 1
        for (r = 1; r <= rounds; ++r) {
          mo = m[r, a] < m[r, b] ? "<" : ">"
          po = (p[r, a] - p[r, b] <= 1e-3 * p[r, b] && p[r, b] - p[r, a] <= 1e-3 * p[r, a]) ? "=" : (p[r, a] < p[r, b] ? "<" : ">")
          ms = ms mo; ps = ps po
          lo = m[r, a] < m[r, b] ? m[r, a] : m[r, b]
          gaps = gaps sprintf("%s%+.1f%%", r > 1 ? " / " : "", 100 * (m[r, b] - m[r, a]) / lo)
          if (mo == "<") ++first
          if (po == "=") ++ties; else if (po != mo) agree = 0
        }
        if (first != 0 && first != rounds) verdict = "the rounds measure it both ways"
        else if (!agree) verdict = "predicted the other way round"
        else if (ties == rounds) verdict = "predicted a tie"
        else verdict = "the same"
        printf "| %s | %s, %s | %s | %s | %s | %s |\n", s, a, b, ms, ps, gaps, verdict
      }
    }'
done
