//===- RegionMemory.cpp - One memory region of a session ------------------===//

#include "runtime/exec/RegionMemory.h"

#include "runtime/cpu/HugePages.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>

namespace kiln::exec {

namespace {
/// The address of every empty region.
alignas(64) uint8_t emptyRegion[64];
} // namespace

RegionMemory::~RegionMemory() {
  if (mapped_)
    ::munmap(data_, mappedSize_);
}

bool RegionMemory::allocate(const char *name, uint64_t size,
                            std::string &error) {
  if (size == 0) {
    data_ = emptyRegion;
    return true;
  }
  // A region of a huge page or more starts on one, with room to end on
  // one too, and asks for them (where transparent huge pages are
  // `madvise`, as on Debian and Ubuntu): an embedding table's random rows
  // then cost a TLB miss each far less often.
  bool huge = size >= cpu::kHugePageBytes;
  uint64_t mappedSize = huge ? size + cpu::kHugePageBytes : size;
  void *memory = ::mmap(nullptr, mappedSize, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    error = std::string("cannot allocate the ") + name + " region (" +
            std::to_string(size) + " bytes): " + std::strerror(errno);
    return false;
  }
  data_ = static_cast<uint8_t *>(memory);
  size_ = size;
  mappedSize_ = mappedSize;
  if (huge) {
    auto address = reinterpret_cast<uintptr_t>(memory);
    uintptr_t aligned = (address + cpu::kHugePageBytes - 1) & ~uintptr_t(cpu::kHugePageBytes - 1);
    // The unaligned head goes back; the tail stays mapped.
    if (aligned != address)
      ::munmap(memory, aligned - address);
    data_ = reinterpret_cast<uint8_t *>(aligned);
    mappedSize_ = mappedSize - (aligned - address);
    ::madvise(data_, mappedSize_, MADV_HUGEPAGE); // Advice only: ignored where unsupported.
  }
  mapped_ = true;
  return true;
}

bool RegionMemory::protectReadOnly(std::string &error) {
  if (!mapped_ || ::mprotect(data_, mappedSize_, PROT_READ) == 0)
    return true;
  error = std::string("cannot protect the constants region: ") +
          std::strerror(errno);
  return false;
}

} // namespace kiln::exec
