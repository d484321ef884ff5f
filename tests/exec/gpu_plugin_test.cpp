// The GPU parts live in libparasim_gpu.so, loaded only by the commands that use a GPU
// (exec/gpu_plugin.hpp): a command without one maps no CUDA library, and where the build made the
// library it loads and answers.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "exec/gpu_plugin.hpp"
#include "tests/cli/run_parasim.hpp"

namespace fs = std::filesystem;

TEST_CASE("commands without a GPU part load no CUDA library, and the GPU library loads where it was built", "[exec][gpu-plugin]") {
  // The dynamic loader's own account of the libraries it initialises (glibc: LD_DEBUG=libs).
  const fs::path dir = parasim::testing::fresh_dir("gpu-plugin");
  const std::string command = "LD_DEBUG=libs '" + std::string(PARASIM_BINARY) + "' '" PARASIM_TEST_DATA_DIR "/execute/tiny-gpt-2.json' --out '" +
                              (dir / "run").string() + "' > /dev/null 2> '" + (dir / "loader").string() + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  const std::string loader = parasim::testing::slurp(dir / "loader");
  REQUIRE(loader.find("calling init") != std::string::npos);  // the account is there to read
  for (const char* gpu_library : {"libcudart", "libcublas", "libcudnn", "libnccl", "libparasim_gpu"}) {
    INFO(gpu_library);
    CHECK(loader.find(gpu_library) == std::string::npos);
  }
  const fs::path plugin = fs::path(PARASIM_BINARY).parent_path() / "libparasim_gpu.so";
  std::string why;
  const parasim::exec::GpuPlugin* loaded = parasim::exec::gpu_plugin(&why);
  if (!fs::exists(plugin)) {
    WARN("this build has no GPU library: " + why);
    CHECK(loaded == nullptr);
    CHECK_FALSE(why.empty());
    return;
  }
  INFO(why);
  REQUIRE(loaded != nullptr);
  CHECK(loaded->version == parasim::exec::kGpuPluginVersion);
  REQUIRE(loaded->measure_cuda != nullptr);
  // Here with no GPU (or with one) it answers: a reason, or nothing when a device is present.
  if (!loaded->cuda_unavailable) {
    WARN("this build has no CUDA executor");
    return;
  }
  if (const std::string no_gpu = loaded->cuda_unavailable(); !no_gpu.empty()) {
    WARN("skipped the check of the CUDA executor's own kernels: " + no_gpu);
    return;
  }
  // With a GPU, the executor's own kernels match a double-precision host reference (relative error
  // under 1e-5 in fp32 and 2^-8 in bf16 for the memory-bound pass; exec/cuda_self_check.cpp).
  REQUIRE(loaded->check_cuda_kernels != nullptr);
  CHECK(loaded->check_cuda_kernels() == "");
}
