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

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <sys/mman.h>

namespace kiln::cpu {

/// x86-64's transparent huge page.
constexpr size_t kHugePageBytes = size_t(2) << 20;

/// `bytes` rounded up to whole huge pages.
inline size_t hugePageRounded(size_t bytes) {
  return (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
}

/// Maps hugePageRounded(bytes) zero-filled bytes starting on a huge page and
/// advises them before anything touches them: null if mmap fails. Give them
/// back with unmapHugePages(memory, bytes).
inline void *mapHugePages(size_t bytes) {
  if (bytes > SIZE_MAX - 2 * kHugePageBytes) { // Rounded up, it would wrap.
    errno = ENOMEM;
    return nullptr;
  }
  size_t rounded = hugePageRounded(bytes);
  // A huge page more, then the unaligned head and the rest of the tail back.
  void *memory = ::mmap(nullptr, rounded + kHugePageBytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    return nullptr;
  auto address = reinterpret_cast<uintptr_t>(memory);
  uintptr_t aligned = (address + kHugePageBytes - 1) & ~uintptr_t(kHugePageBytes - 1);
  if (aligned != address)
    ::munmap(memory, aligned - address);
  // The tail left is never empty: the head taken is less than a huge page.
  uintptr_t end = address + rounded + kHugePageBytes;
  ::munmap(reinterpret_cast<void *>(aligned + rounded), end - (aligned + rounded));
  ::madvise(reinterpret_cast<void *>(aligned), rounded, MADV_HUGEPAGE); // Advice only.
  return reinterpret_cast<void *>(aligned);
}

inline void unmapHugePages(void *memory, size_t bytes) {
  ::munmap(memory, hugePageRounded(bytes));
}

/// A std::allocator that maps an allocation of a huge page or more on its
/// own huge pages (mapHugePages: not from the heap, whose memory glibc would
/// hand to small allocations later); smaller ones as std::allocator does.
template <typename T> struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U> HugePageAllocator(const HugePageAllocator<U> &) {}

  T *allocate(size_t count) {
    if (count > SIZE_MAX / sizeof(T))
      failed();
    size_t bytes = count * sizeof(T);
    if (bytes < kHugePageBytes)
      return std::allocator<T>().allocate(count);
    void *memory = mapHugePages(bytes);
    if (!memory)
      failed();
    return static_cast<T *>(memory);
  }
  void deallocate(T *memory, size_t count) {
    if (count * sizeof(T) < kHugePageBytes)
      std::allocator<T>().deallocate(memory, count);
    else
      unmapHugePages(memory, count * sizeof(T));
  }
  template <typename U> bool operator==(const HugePageAllocator<U> &) const { return true; }
  template <typename U> bool operator!=(const HugePageAllocator<U> &) const { return false; }

private:
  /// As std::allocator fails: std::bad_alloc, or an abort without exceptions.
  [[noreturn]] static void failed() {
#if __cpp_exceptions
    throw std::bad_alloc();
#else
    std::abort();
#endif
  }
};

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_HUGEPAGES_H
