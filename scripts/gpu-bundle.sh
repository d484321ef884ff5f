#!/usr/bin/env bash
# Packs a build of parasim for a GPU machine that lacks this project's Debian packages (a cloud GPU
# image, say): the parasim binary, its plugins (common/plugin.hpp), the test binary, and every shared library they
# load except the C library's and CUDA's own, which must be the GPU machine's (CUDA's libraries match
# its driver). scripts/gpu-check.sh unpacks it there and runs the GPU checks.
#   bash scripts/gpu-bundle.sh [BUILD_DIR] [OUT.tar.gz]     (defaults: build, gpu-bundle.tar.gz)
set -euo pipefail
build=${1:-build}
out=${2:-gpu-bundle.tar.gz}
for f in "$build/parasim" "$build/libparasim_gpu.so"; do
  [ -f "$f" ] || { echo "gpu-bundle: $f is missing: build parasim where the CUDA toolkit, cuDNN and NCCL are (README.md)" >&2; exit 2; }
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build/tests" "$stage/build/gpu-lib"
binaries=("$build/parasim")
for plugin in "$build"/libparasim_*.so; do binaries+=("$plugin"); done
cp "${binaries[@]}" "$stage/build/"
if [ -f "$build/tests/parasim_tests" ]; then
  cp "$build/tests/parasim_tests" "$stage/build/tests/"
  binaries+=("$build/tests/parasim_tests")
fi
# The C library and the loader belong to the GPU machine; so do CUDA's libraries.
ldd "${binaries[@]}" | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libmvec|libpthread|libdl|librt|libresolv|ld-linux-x86-64)\.so|/libcuda|/libcublas|/libcudnn|/libnccl|/libcudart' |
  while read -r lib; do cp -L "$lib" "$stage/build/gpu-lib/"; done
tar -C "$stage" -czf "$out" build
echo "gpu-bundle: wrote $out ($(du -h "$out" | cut -f1)): $(ls "$stage/build/gpu-lib" | wc -l) libraries beside the binaries"
