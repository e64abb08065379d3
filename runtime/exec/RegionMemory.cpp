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
  // A region of a huge page or more starts on one and asks for them (where
  // transparent huge pages are `madvise`, as on Debian and Ubuntu): an
  // embedding table's random rows then cost a TLB miss each far less often.
  bool huge = size >= cpu::kHugePageBytes;
  void *memory = huge ? cpu::mapHugePages(size)
                      : ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (!memory || memory == MAP_FAILED) {
    int reason = errno; // Before the message's allocations.
    error = std::string("cannot allocate the ") + name + " region (" +
            std::to_string(size) + " bytes): " + std::strerror(reason);
    return false;
  }
  data_ = static_cast<uint8_t *>(memory);
  size_ = size;
  // Up to a huge page past size_ is mapped too (the last one's rest).
  mappedSize_ = huge ? cpu::hugePageRounded(size) : size;
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
