// exec/host_memory.hpp: the executor's and the calibration's host buffers, on 2 MiB pages where the
// kernel's transparent huge pages allow it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "exec/host_memory.hpp"

using namespace parasim;

namespace {

/// AnonHugePages, in kB, of the mapping of /proc/self/smaps that holds `address`; -1 if none does.
long huge_kb_at(const void* address) {
  std::ifstream in("/proc/self/smaps");
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= a && a < hi;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
  }
  return -1;
}

}  // namespace

TEST_CASE("exec: host buffers hold their values, the large ones aligned to 2 MiB", "[exec]") {
  // 1,000 floats (4,000 B, under 2 MiB): ordinary memory. 1,572,864 floats (6 MiB): 2 MiB-aligned.
  exec::HostVector<float> small(1000, 0.25f), large(std::size_t{3} << 19, 0.5f);
  CHECK(small[999] == 0.25f);
  CHECK(large.front() == 0.5f);
  CHECK(large.back() == 0.5f);
  CHECK(reinterpret_cast<std::uintptr_t>(large.data()) % (std::uintptr_t{2} << 20) == 0);
  // Growing past 2 MiB moves the values into aligned memory.
  small.resize(std::size_t{1} << 20, 1.0f);  // 4 MiB
  CHECK(small[999] == 0.25f);
  CHECK(small[1000] == 1.0f);
  CHECK(reinterpret_cast<std::uintptr_t>(small.data()) % (std::uintptr_t{2} << 20) == 0);
}

TEST_CASE("exec: a large host buffer is on huge pages where the kernel gives them on advice", "[exec]") {
  const std::string mode = exec::transparent_huge_pages();
  if (mode != "always" && mode != "madvise") {
    WARN("skipped: this kernel's transparent huge pages are '" << mode << "' (/sys/kernel/mm/transparent_hugepage/enabled), so no buffer gets them");
    return;
  }
  // 6 MiB, aligned to 2 MiB: three whole huge pages, each backed as 2 MiB once touched (the fill).
  exec::HostVector<float> buffer(std::size_t{3} << 19, 1.0f);
  const long kb = huge_kb_at(buffer.data());
  REQUIRE(kb >= 0);
  CHECK(kb >= 2048);
}
