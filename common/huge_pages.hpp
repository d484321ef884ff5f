#pragma once
/// Large arrays on transparent huge pages. A step of a thousand-GPU plan holds a gigabyte of task
/// arrays that the lowering fills once and the engine reads in dataflow order: on 4 KiB pages the
/// kernel takes a page fault for every 4 KiB first touched (a quarter of a million for one GPT-3
/// step) and nearly every access of the engine misses the TLB. Backed by 2 MiB pages both shrink by
/// 512×. Linux gives huge pages to a region only when asked (`madvise` mode, the default of Debian
/// and most distributions), so the arrays that matter ask for them before they are first touched.
#include <cstddef>
#include <vector>

namespace parasim {

/// Asks the kernel to back the whole 2 MiB pages inside [p, p + bytes) with huge pages
/// (madvise MADV_HUGEPAGE). Does nothing for smaller ranges, off Linux, or where the kernel refuses:
/// it changes speed only, never a result.
void advise_huge_pages(const void* p, std::size_t bytes) noexcept;

/// Reserves room for `n` elements and asks for huge pages for it; call before the elements are
/// written (assign/resize/push_back within the capacity then fault in huge pages).
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace parasim
