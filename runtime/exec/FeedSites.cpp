//===- FeedSites.cpp - Where a program holds its feeds' addresses ---------===//

#include "runtime/exec/FeedSites.h"

#include <cstring>

namespace kiln::exec {

FeedSites::FeedSites(const BufferAddresses &addresses, const artifact::Program &program)
    : addresses_(&addresses) {
  if (program.feeds())
    for (const artifact::Binding *feed : *program.feeds()) {
      feeds_[feed->buffer()] = feed->buffer();
      if (!feed->views()) // Views unknown: it stays in its buffer.
        fixed_.insert(feed->buffer());
      else
        for (uint32_t view : *feed->views())
          feeds_.emplace(view, feed->buffer());
    }
  // A fetch reads the buffer itself.
  if (program.fetches())
    for (const artifact::Binding *fetch : *program.fetches())
      if (int64_t feed = feedOf(fetch->buffer()); feed >= 0)
        fixed_.insert(static_cast<uint32_t>(feed));
}

int64_t FeedSites::feedOf(uint32_t buffer) const {
  auto found = feeds_.find(buffer);
  return found == feeds_.end() ? -1 : found->second;
}

uint8_t *FeedSites::operator[](uint32_t buffer) const {
  if (int64_t feed = feedOf(buffer); feed >= 0)
    fixed_.insert(static_cast<uint32_t>(feed));
  return (*addresses_)[buffer];
}

uint8_t *FeedSites::site(uint32_t buffer, const void *where) const {
  // A view is at its feed's offset (the validator checks): the same address.
  if (int64_t feed = feedOf(buffer); feed >= 0)
    sites_[static_cast<uint32_t>(feed)].push_back(const_cast<void *>(where));
  return (*addresses_)[buffer];
}

bool FeedSites::movable(uint32_t buffer) const {
  return feedOf(buffer) == static_cast<int64_t>(buffer) && !fixed_.count(buffer);
}

void FeedSites::point(uint32_t buffer, const void *address) const {
  auto found = sites_.find(buffer);
  if (found == sites_.end())
    return;
  // Each site is a data pointer (void *, const float *...): the same bytes.
  for (void *where : found->second)
    std::memcpy(where, &address, sizeof(address));
}

} // namespace kiln::exec
