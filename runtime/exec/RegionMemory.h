//===- RegionMemory.h - One memory region of a session ----------*- C++ -*-===//

#ifndef KILN_RUNTIME_EXEC_REGIONMEMORY_H
#define KILN_RUNTIME_EXEC_REGIONMEMORY_H

#include <cstdint>
#include <string>

namespace kiln::exec {

/// Zero-filled, page-aligned (so 64-byte aligned) memory for one region,
/// allocated once; from 2 MB on, aligned to a huge page and advised to use
/// them. An empty region still has a valid, aligned address.
class RegionMemory {
public:
  RegionMemory() = default;
  ~RegionMemory();
  RegionMemory(const RegionMemory &) = delete;
  RegionMemory &operator=(const RegionMemory &) = delete;

  /// Maps `size` bytes. On failure sets `error` to "cannot allocate the
  /// NAME region (SIZE bytes): REASON" and returns false.
  bool allocate(const char *name, uint64_t size, std::string &error);

  /// Makes the region read-only: a kernel that writes to it faults instead
  /// of corrupting it.
  bool protectReadOnly(std::string &error);

  uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }

private:
  uint8_t *data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t mappedSize_ = 0; ///< From data_: size_, and up to a huge page more.
  bool mapped_ = false;
};

} // namespace kiln::exec

#endif // KILN_RUNTIME_EXEC_REGIONMEMORY_H
