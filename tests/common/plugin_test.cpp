// The parts that link a large library — CUDA, MPI, SimGrid, OpenBLAS — live in plugins loaded only by
// the commands that use them (common/plugin.hpp): a scenario run under the analytical backend maps
// none of them, a SimGrid run maps SimGrid alone, and where the build made the GPU library it loads
// and answers.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "exec/gpu_plugin.hpp"
#include "tests/cli/run_parasim.hpp"

namespace fs = std::filesystem;

namespace {

/// The libraries the dynamic loader initialised while `parasim ARGS` ran (glibc: LD_DEBUG=libs), the
/// command's exit status checked.
std::string loaded_by(const std::string& args, const fs::path& dir) {
  const std::string command = "LD_DEBUG=libs '" + std::string(PARASIM_BINARY) + "' " + args + " > /dev/null 2> '" + (dir / "loader").string() + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  std::string loader = parasim::testing::slurp(dir / "loader");
  REQUIRE(loader.find("calling init") != std::string::npos);  // the account is there to read
  return loader;
}

}  // namespace

TEST_CASE("a run maps neither MPI, SimGrid nor OpenBLAS, and --backend simgrid maps SimGrid alone", "[cli][plugin]") {
  const parasim::testing::TempDir dir_temp("plugins");
  const std::filesystem::path& dir = dir_temp.path;
  const std::string scenario = "'" PARASIM_TEST_DATA_DIR "/execute/tiny-gpt-2.json'";
  for (const std::string& args : {std::string("--version"), scenario + " --out '" + (dir / "run").string() + "'"}) {
    INFO(args);
    const std::string loader = loaded_by(args, dir);
    for (const char* library : {"libmpi", "libopen-pal", "libsimgrid", "libopenblas", "libparasim_"}) {
      INFO(library);
      CHECK(loader.find(library) == std::string::npos);
    }
  }
  const std::string loader = loaded_by(scenario + " --backend simgrid --out '" + (dir / "simgrid").string() + "'", dir);
  CHECK(loader.find("libparasim_simgrid.so") != std::string::npos);
  CHECK(loader.find("libsimgrid") != std::string::npos);
  for (const char* library : {"libmpi", "libopenblas", "libparasim_mpi", "libparasim_blas"}) {
    INFO(library);
    CHECK(loader.find(library) == std::string::npos);
  }
}

TEST_CASE("commands without a GPU part load no CUDA library, and the GPU library loads where it was built", "[exec][gpu-plugin]") {
  const parasim::testing::TempDir dir_temp("gpu-plugin");
  const std::filesystem::path& dir = dir_temp.path;
  const std::string loader = loaded_by("'" PARASIM_TEST_DATA_DIR "/execute/tiny-gpt-2.json' --out '" + (dir / "run").string() + "'", dir);
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

TEST_CASE("under a 1 GiB address-space limit every command ends with its own exit code", "[cli][plugin]") {
#if defined(__SANITIZE_ADDRESS__)
  WARN("skipped in a sanitizer build: AddressSanitizer reserves terabytes of address space for its shadow memory");
#else
  // As batch schedulers set it (ulimit -v). A binary that mapped every optional library ended its
  // commands by spinning on failing mmap calls until it was killed; `timeout 30` turns a hang into 124.
  const parasim::testing::TempDir dir_temp("address-limit");
  const std::filesystem::path& dir = dir_temp.path;
  auto status = [&](const std::string& args) {
    const std::string command = "bash -c \"ulimit -v 1048576; exec timeout 30 '" + std::string(PARASIM_BINARY) + "' " + args + "\" > /dev/null 2>&1";
    const int s = std::system(command.c_str());
    return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  };
  CHECK(status("--version") == 0);
  CHECK(status("'" PARASIM_TEST_DATA_DIR "/execute/tiny-gpt-2.json' --out '" + (dir / "run").string() + "'") == 0);
  CHECK(status("'" + (dir / "missing.json").string() + "'") == 2);
#endif
}
