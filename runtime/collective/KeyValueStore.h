//===- KeyValueStore.h - Rendezvous storage for collectives -----*- C++ -*-===//
//
// Replicas find each other through a key-value store: each publishes its
// address under a key and waits for the others'. Gloo's rendezvous and
// NCCL's unique id both go through this one interface, so the store behind
// it can be the chief's coordinator (across hosts), a map in memory (replicas
// that are threads of one process) or, later, etcd.
//
// Thread safety: every implementation may be called from several threads.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_COLLECTIVE_KEYVALUESTORE_H
#define KILN_RUNTIME_COLLECTIVE_KEYVALUESTORE_H

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::collective {

class KeyValueStore {
public:
  virtual ~KeyValueStore() = default;
  /// Stores `value` under `key` (replacing any earlier value). False with
  /// `error` set when the store cannot be reached.
  virtual bool set(const std::string &key, const std::string &value, std::string &error) = 0;
  /// Waits until every key in `keys` has a value, at most `timeout`; false
  /// with `error` naming a missing key when it runs out.
  virtual bool wait(const std::vector<std::string> &keys, std::chrono::milliseconds timeout,
                    std::string &error) = 0;
  /// The value of `key`; false with `error` set when it has none.
  virtual bool get(const std::string &key, std::string &value, std::string &error) = 0;
};

/// A store in this process's memory, for replicas that are its threads.
class MemoryStore : public KeyValueStore {
public:
  bool set(const std::string &key, const std::string &value, std::string &error) override;
  bool wait(const std::vector<std::string> &keys, std::chrono::milliseconds timeout,
            std::string &error) override;
  bool get(const std::string &key, std::string &value, std::string &error) override;

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
};

} // namespace kiln::collective

#endif // KILN_RUNTIME_COLLECTIVE_KEYVALUESTORE_H
