//===- HugePages.h - Large tables on transparent huge pages -----*- C++ -*-===//
//
// Embedding tables are read and written at random rows: on 4 KB pages
// nearly every row is a TLB miss once a table outgrows the TLB's reach
// (a few MB). Memory of a huge page or more that starts on one and is
// advised with MADV_HUGEPAGE gets 2 MB pages where the kernel's transparent
// huge pages are `madvise` (Debian's and Ubuntu's default) or `always`;
// elsewhere the advice is ignored. A session's regions (exec::RegionMemory)
// and a parameter server's rows (ps::RowBlock) are placed so.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_HUGEPAGES_H
#define KILN_RUNTIME_CPU_HUGEPAGES_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <sys/mman.h>

namespace kiln::cpu {

/// x86-64's transparent huge page.
constexpr size_t kHugePageBytes = size_t(2) << 20;

/// A std::allocator that places an allocation of a huge page or more on
/// huge pages (aligned to one, its size rounded up to whole ones, advised
/// before anything touches it); smaller ones as std::allocator does.
template <typename T> struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U> HugePageAllocator(const HugePageAllocator<U> &) {}

  T *allocate(size_t count) {
    size_t bytes = count * sizeof(T);
    if (bytes < kHugePageBytes)
      return std::allocator<T>().allocate(count);
    size_t rounded = (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
    void *memory = std::aligned_alloc(kHugePageBytes, rounded);
    if (!memory)
      throw std::bad_alloc();
    ::madvise(memory, rounded, MADV_HUGEPAGE); // Advice only: ignored where unsupported.
    return static_cast<T *>(memory);
  }
  void deallocate(T *memory, size_t count) {
    if (count * sizeof(T) < kHugePageBytes)
      std::allocator<T>().deallocate(memory, count);
    else
      std::free(memory);
  }
  template <typename U> bool operator==(const HugePageAllocator<U> &) const { return true; }
  template <typename U> bool operator!=(const HugePageAllocator<U> &) const { return false; }
};

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_HUGEPAGES_H
