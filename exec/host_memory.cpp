#include "exec/host_memory.hpp"

#include <atomic>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <iterator>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace parasim::exec {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;  // x86-64's and arm64's (4 KiB granule) PMD page
std::atomic<bool> g_kept{false};
}  // namespace

bool keep_freed_memory() {
#if defined(__GLIBC__)
  // mallopt(3): M_MMAP_MAX 0 serves every request from the heap; M_TRIM_THRESHOLD, the free space at
  // a heap's top before malloc gives it back, at its largest; M_ARENA_MAX 1, every thread from the
  // main arena's heap. A thread's own arena grows by heaps of at most 64 MiB (HEAP_MAX_SIZE), so a
  // larger block a stream thread asks for is mapped apart whatever M_MMAP_MAX says, and unmapped on
  // free: it came back on fresh pages every step (see the header). mallopt returns 1 on success.
  const bool kept = ::mallopt(M_MMAP_MAX, 0) == 1 && ::mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1 && ::mallopt(M_ARENA_MAX, 1) == 1;
  if (kept) g_kept = true;
  return kept;
#else
  return false;
#endif
}

std::string freed_memory() { return g_kept ? "freed memory kept for reuse" : "freed memory returned to the system"; }

std::string transparent_huge_pages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto open = text.find('['), close = text.find(']', open == std::string::npos ? 0 : open);
  return open == std::string::npos || close == std::string::npos ? "" : text.substr(open + 1, close - open - 1);
}

std::string host_pages() {
  const std::string mode = transparent_huge_pages();
  if (mode == "always" || mode == "madvise") return "2 MiB pages advised (transparent huge pages: " + mode + ")";
  return "4 KiB pages (transparent huge pages: " + (mode.empty() ? std::string("none") : mode) + ")";
}

void* allocate_host(std::size_t bytes) {
  if (bytes < kHugePage) return ::operator new(bytes == 0 ? 1 : bytes);
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: EINVAL where the kernel has no transparent huge pages leaves ordinary pages.
  (void)::madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

void release_host(void* p, std::size_t bytes) noexcept {
  if (bytes < kHugePage) {
    ::operator delete(p);
  } else {
    std::free(p);
  }
}

}  // namespace parasim::exec
