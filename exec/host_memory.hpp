#pragma once
/// Host buffers of the CPU executor and of `parasim calibrate --backend cpu|mpi`, allocated alike so
/// that the calibration measures kernels on memory that behaves as the executor's does.
///
/// A buffer of 2 MiB or more is aligned to 2 MiB and advised MADV_HUGEPAGE (madvise(2)): where the
/// kernel's transparent huge pages are "always" or "madvise" (Debian's and most distributions'
/// settings), it is backed by 2 MiB pages. On 4 KiB pages a large memory-bound loop's speed hangs on
/// TLB misses, and in a virtual machine on how the host happens to back each page: on this project's
/// 2-core VM an in-place SGD-with-momentum update of 11.2 M parameters (3 arrays, 134 MB) took
/// 8.7-9.7 ms on 4 KiB pages and 6.9-7.3 ms on 2 MiB pages, and freshly allocated 4 KiB pages ran
/// slower than pages a process had used for a while, so that a calibration's long sweep and an
/// executor's fresh buffers saw different speeds (docs/validation.md). Smaller buffers, and hosts
/// where the advice does nothing, get ordinary memory.
#include <cstddef>
#include <new>
#include <string>
#include <vector>

namespace parasim::exec {

/// The kernel's transparent-huge-page mode, the bracketed word of
/// /sys/kernel/mm/transparent_hugepage/enabled ("always [madvise] never"): "always", "madvise",
/// "never", or "" where the kernel has none.
[[nodiscard]] std::string transparent_huge_pages();

/// The pages large host buffers get, in words, for reports and profiles: "2 MiB pages advised
/// (transparent huge pages: madvise)", or "4 KiB pages (transparent huge pages: never)" where the
/// kernel gives none.
[[nodiscard]] std::string host_pages();

/// `bytes` of host memory (see above); free with release_host.
[[nodiscard]] void* allocate_host(std::size_t bytes);
void release_host(void* p, std::size_t bytes) noexcept;

/// Keeps what this process frees for its own reuse, as a framework's caching allocator does: from
/// here on malloc serves every block from its arenas (never a fresh mmap of its own) and never trims
/// them, so a block freed and asked for again comes back on pages already touched. `parasim execute`
/// and `parasim calibrate` call it first, so that both time kernels and collectives alike.
///
/// glibc's malloc otherwise maps each block above its mmap threshold (at most 32 MiB) afresh and
/// unmaps it on free. Open MPI 4.1's non-blocking all-reduce allocates a scratch block of its
/// message's size on every call: ResNet-18's 33.8 MB gradient bucket under DP 2 was mapped, faulted
/// in page by page and unmapped every step on both ranks (strace: one mmap and munmap of 33,783,808
/// bytes a step a rank). On this project's 2-core VM that all-reduce took 44.7-47.1 ms and the step
/// 108.9-118.2 ms; with freed memory kept, 28.7-35.3 ms and 95.2-98.2 ms (docs/validation.md).
/// Every thread takes its blocks from the main arena (M_ARENA_MAX 1): a thread's own arena holds no
/// block above 64 MiB, and glibc maps such a block apart and unmaps it on free even with M_MMAP_MAX
/// 0. GPT's 67.7 MB gradient bucket under DP 2, all-reduced on a stream thread, took 134-166 ms in
/// six runs so; from the main arena, 75.5 ms (and a polled 64 MiB all-reduce 51-58 ms from the
/// main thread, where calibrate times it).
/// Returns false where the C library has no such setting (the call then changes nothing).
bool keep_freed_memory();

/// What keep_freed_memory has done in this process, in words for reports and profiles: "freed
/// memory kept for reuse" or "freed memory returned to the system".
[[nodiscard]] std::string freed_memory();

/// std::allocator's contract over allocate_host / release_host.
template <class T>
struct HostAllocator {
  using value_type = T;
  HostAllocator() = default;
  template <class U>
  HostAllocator(const HostAllocator<U>&) noexcept {}  // NOLINT: converting, as allocators are
  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocate_host(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { release_host(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const HostAllocator<U>&) const noexcept { return true; }
};

/// A vector of host memory allocated as above.
template <class T>
using HostVector = std::vector<T, HostAllocator<T>>;

}  // namespace parasim::exec
