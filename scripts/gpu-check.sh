#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU, from the repository's root: unpacks a bundle made by
# scripts/gpu-bundle.sh, then
#   1. calibrates the GPU (`parasim calibrate --backend cuda`) and tries NCCL (`--backend nccl`);
#   2. executes the GPU scenarios' plans (scenarios/execute/*-h100.json) with `parasim execute
#      --backend cuda`, predicted from the calibrated profile, and folds one back (--recalibrate);
#   3. logs cuDNN's account of one ResNet step (unless GPU_CHECK_CUDNN_LOG=0), and runs the test
#      cases that need a GPU (unless GPU_CHECK_TESTS=0; GPU_CHECK_TAGS names others).
# Every result goes under RESULTS (default $OUT, else /tmp/gpu-check): a log and results.tar.gz.
#   bash scripts/gpu-check.sh BUNDLE.tar.gz [RESULTS]
set -u
bundle=${1:?usage: gpu-check.sh BUNDLE.tar.gz [RESULTS]}
results=${2:-${OUT:-/tmp/gpu-check}}
mkdir -p "$results"
exec > >(tee "$results/log.txt") 2>&1
repo=$(pwd)
r=$(mktemp -d)
tar -xzf "$bundle" -C "$repo"   # into build/ (ignored by git), its libraries in build/gpu-lib
# CUDA's libraries: the machine's own, wherever its toolkit or Python wheels put them.
dirs=""
for name in libcudart.so.13 libcublas.so.13 libcudnn.so.9 libnccl.so.2; do
  found=$(find /usr/local/cuda* /usr/lib/x86_64-linux-gnu /opt /usr/local/lib -name "$name" 2>/dev/null | head -1)
  if [ -n "$found" ]; then dirs="$dirs:$(dirname "$found")"; else echo "gpu-check: $name not found on this machine"; fi
done
# The bundle's C++ library only where the machine's is older than the one parasim was built with.
cxx=$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64/{print $NF; exit}')
if [ -n "$cxx" ] && grep -q GLIBCXX_3.4.30 "$cxx"; then rm -f "$repo/build/gpu-lib/libstdc++.so.6" "$repo/build/gpu-lib/libgcc_s.so.1"; fi
export LD_LIBRARY_PATH="$repo/build/gpu-lib$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
p="$repo/build/parasim"
step() { echo; echo "=== $* ($(date +%T))"; }
step machine
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv
ldd "$p" "$repo/build/libparasim_gpu.so" | grep -E "not found|cublas|cudnn|nccl|cudart" | sort -u
step calibrate cuda
timeout 300 "$p" calibrate --backend cuda --out "$r/calibrated.json" --timeout 240; echo "exit $?"
step calibrate nccl
timeout 120 "$p" calibrate --backend nccl --base "$r/calibrated.json" --out "$r/nccl.json" --timeout 100; echo "exit $?"
profile="$r/calibrated.json"
[ -f "$profile" ] || profile=""
for s in gpt-h100 resnet-h100; do
  plans=$(python3 -c "import json,sys; print(' '.join(['base']+[w['name'] for w in json.load(open(sys.argv[1])).get('what_if',[])]))" "scenarios/execute/$s.json")
  for plan in $plans; do
    step execute "$s" "$plan"
    extra=()
    [ -n "$profile" ] && extra+=(--profile "$profile")
    [ "$plan" = base ] && extra+=(--recalibrate "$r/$s-recalibrated.json")
    timeout 200 "$p" execute "scenarios/execute/$s.json" --backend cuda --plan "$plan" --steps 10 --warmup 2 --out "$r/$s-$plan" --timeout 180 "${extra[@]}"
    echo "exit $?"
  done
done
if [ "${GPU_CHECK_CUDNN_LOG:-1}" != 0 ]; then
step "cuDNN's own account of one ResNet step (its API log, info level: the algorithms found and chosen)"
CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG="$r/cudnn.log" timeout 200 "$p" execute scenarios/execute/resnet-h100.json --backend cuda --steps 1 --warmup 0 \
  --out "$r/resnet-h100-logged" --timeout 180 > /dev/null
echo "exit $?"
[ -f "$r/cudnn.log" ] && gzip "$r/cudnn.log"
fi
[ "${GPU_CHECK_TESTS:-1}" = 0 ] && { tar -C "$r" -czf "$results/results.tar.gz" .; exit 0; }
step tests that need a GPU
mkdir -p /work 2>/dev/null
[ -e /work/main ] || ln -s "$repo" /work/main 2>/dev/null
(cd "$repo/build/tests" && timeout 300 ./parasim_tests "${GPU_CHECK_TAGS:-[cuda],[gpu-plugin],[calibrate]}" -r compact > "$r/tests.txt" 2>&1; echo "exit $?")
grep -v -E "^[^:]+:[0-9]+: passed" "$r/tests.txt" | tail -40
step done
tar -C "$r" -czf "$results/results.tar.gz" .
ls -la "$results"
