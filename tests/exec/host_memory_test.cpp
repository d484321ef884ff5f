// exec/host_memory.hpp: the executor's and the calibration's host buffers, on 2 MiB pages where the
// kernel's transparent huge pages allow it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "exec/host_memory.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

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

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
namespace {

/// In a child process (the setting is the whole process's): malloc a block of `mib` MiB, touch it and
/// free it, on the main thread or on a thread of its own (as the executor's stream threads, and the
/// MPI library's scratch blocks on them, do). Exit code bit 0: the block was mapped on its own
/// (mallinfo2's hblkhd, the bytes in such mappings, grew by the block, or its address is outside
/// every arena's heap: the pages were gone again after the free); bit 1: after the free, the arenas
/// still hold it (fordblks, their free bytes summed over the arenas, are at least the block).
/// keep_freed_memory's failure, or its words not saying so, exits 4.
int block_fate(bool keep, bool on_thread = false, std::size_t mib = 48) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (keep && (!exec::keep_freed_memory() || exec::freed_memory() != "freed memory kept for reuse")) ::_exit(4);
    const std::size_t block = mib << 20;
    int code = 8;
    auto run = [&] {
      const struct mallinfo2 before = ::mallinfo2();
      void* p = std::malloc(block);
      if (p == nullptr) return;
      std::memset(p, 1, block);
      const bool mapped = ::mallinfo2().hblkhd >= before.hblkhd + block;
      std::free(p);
      const bool kept = ::mallinfo2().fordblks >= block;
      code = (mapped ? 1 : 0) | (kept ? 2 : 0);
    };
    if (on_thread) {
      std::thread t(run);
      t.join();
    } else {
      run();
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("exec: with freed memory kept, a large block comes from the arenas and stays there when freed", "[exec]") {
  // glibc's defaults: 48 MiB is above the mmap threshold (128 KiB at start, at most 32 MiB), so the
  // block is a mapping of its own, unmapped on free: mapped, not kept.
  CHECK(block_fate(false) == 1);
  // Kept (M_MMAP_MAX 0, M_TRIM_THRESHOLD at its largest): the heap serves it, and the free leaves it
  // in the heap's free space for the next request: kept, not mapped.
  CHECK(block_fate(true) == 2);
  // On a thread of its own, 80 MiB: a thread's arena grows by heaps of at most 64 MiB (glibc's
  // HEAP_MAX_SIZE, twice the 32 MiB largest mmap threshold on 64-bit), so no such heap holds it,
  // and glibc maps it apart and unmaps it on free whatever M_MMAP_MAX says (GPT's 67.7 MB gradient
  // bucket's scratch block under DP 2, every step). Kept (M_ARENA_MAX 1 too), the thread takes it
  // from the main arena's heap, which keeps it.
  CHECK(block_fate(true, true, 80) == 2);
}
#endif
