//===- KeyValueStore.cpp - Rendezvous storage in memory -------------------===//

#include "runtime/collective/KeyValueStore.h"

namespace kiln::collective {

bool MemoryStore::set(const std::string &key, const std::string &value, std::string &) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    values_[key] = value;
  }
  changed_.notify_all();
  return true;
}

bool MemoryStore::wait(const std::vector<std::string> &keys,
                       std::chrono::milliseconds timeout, std::string &error) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const std::string &key : keys)
    if (!changed_.wait_until(lock, deadline, [&] { return values_.count(key) > 0; })) {
      error = "timed out after " + std::to_string(timeout.count()) +
              " ms waiting for rendezvous key '" + key + "'";
      return false;
    }
  return true;
}

bool MemoryStore::get(const std::string &key, std::string &value, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = values_.find(key);
  if (it == values_.end()) {
    error = "rendezvous key '" + key + "' has no value";
    return false;
  }
  value = it->second;
  return true;
}

} // namespace kiln::collective
