#!/usr/bin/env bash
# The README's two set-up commands. On a fresh Debian 12 machine (root, or a user with sudo):
#   bash scripts/bootstrap.sh run    installs missing Debian packages, builds, runs parasim on a bundled scenario
#   bash scripts/bootstrap.sh test   installs missing Debian packages, builds, runs the whole test suite
# Re-running is cheap: packages already present are not reinstalled and the build is incremental.
set -euo pipefail
mode=${1:-}
case "$mode" in run|test) ;; *) echo "usage: bash scripts/bootstrap.sh run|test" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."

packages=(cmake g++ make pkg-config git
          libsimgrid-dev libboost-graph-dev nlohmann-json3-dev libvalijson-dev catch2 libcli11-dev
          libopenblas-dev libopenmpi-dev openmpi-bin libbenchmark-dev libjpeg62-turbo-dev libarchive-dev coinor-libcbc-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Tools found by command, since a machine may have them from elsewhere (a NodeSource node bundles
# npm): node and npm fetch the pinned Vega libraries that report.html inlines (package.json);
# chromium renders report.html headless in the tests.
tools=(node:nodejs npm:npm)
[ "$mode" = test ] && tools+=(chromium:chromium)
for t in "${tools[@]}"; do
  command -v "${t%%:*}" >/dev/null 2>&1 || missing+=("${t#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "parasim: installing missing Debian packages: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The exact tree package-lock.json pins; again only when the lock file changed since.
if [ ! node_modules/.package-lock.json -nt package-lock.json ]; then
  npm ci --no-audit --no-fund
fi

jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
if [ "$mode" = run ]; then
  # Only what the run needs: the parasim binary (not the tests, the benchmarks, nor the plugins of
  # the backends its scenario does not use: GPU, MPI, SimGrid, OpenBLAS; `cmake --build build`
  # builds them).
  cmake --build build -j"$jobs" --target parasim
  ./build/parasim scenarios/examples/gpt3-175b-1024-a100.json --out parasim-out/gpt3-175b-1024-a100
else
  cmake --build build -j"$jobs"
  ctest --test-dir build --output-on-failure -j"$jobs"
fi
