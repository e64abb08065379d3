//===- CoordinatorClient.h - A task's link to the coordinator ---*- C++ -*-===//
//
// Every task of a cluster, the coordinator's own included, talks to the
// coordinator through this client: it registers (retrying with backoff while
// the chief is not up yet), sends heartbeats from a thread of its own, uses
// the coordinator's key-value store as the replicas' rendezvous (it is a
// collective::KeyValueStore), reports its failure, asks which task was
// lost, and leaves.
//
// Every call carries the cluster token and a deadline; the channel has
// keepalive on and the same 4 MiB message limit as the server.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CLUSTER_COORDINATORCLIENT_H
#define KILN_RUNTIME_CLUSTER_COORDINATORCLIENT_H

#include "runtime/cluster/ClusterSpec.h"
#include "runtime/cluster/CoordinatorServer.h"
#include "runtime/collective/KeyValueStore.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::cluster {

/// How long a rendezvous waits before onLongWait's notice, by default.
constexpr std::chrono::milliseconds kWaitNoticeAfter{10000};

class CoordinatorClient : public collective::KeyValueStore {
public:
  /// A client of the coordinator at `address` ("host:port"), which is task
  /// `coordinator`, for task `self`. Connects lazily.
  CoordinatorClient(std::string address, TaskId coordinator, TaskId self, std::string token,
                    const TlsFiles &tls);
  /// Stops the heartbeats.
  ~CoordinatorClient() override;

  /// Registers this task with its artifact and replica count, retrying
  /// with backoff while the coordinator cannot be reached, for at most
  /// `patience`. False with `error` set to one line on a refusal or when
  /// patience runs out.
  bool registerTask(uint64_t artifactChecksum, int replicas, std::chrono::milliseconds patience,
                    std::string &error,
                    const std::map<std::string, std::string> &settings = {});
  /// Sends a heartbeat every kHeartbeatInterval until destroyed or left.
  void startHeartbeats();

  bool set(const std::string &key, const std::string &value, std::string &error) override;
  bool wait(const std::vector<std::string> &keys, std::chrono::milliseconds timeout,
            std::string &error) override;
  bool get(const std::string &key, std::string &value, std::string &error) override;

  /// Called once per wait() that has lasted `after` while some training
  /// task has not registered, with a line naming them: a task waiting up to
  /// --collective-timeout for one never started says so.
  void onLongWait(std::function<void(const std::string &)> notice,
                  std::chrono::milliseconds after = kWaitNoticeAfter) {
    waitNotice_ = std::move(notice);
    waitNoticeAfter_ = after;
  }

  /// Tells the coordinator why this task stops (best effort).
  void reportFailure(const std::string &error);
  /// Names the task other than this one that failed or was lost, waiting up
  /// to `patience` for the coordinator to notice; empty when none is.
  std::string explainLoss(std::chrono::milliseconds patience);
  /// One look at the training tasks, for a task that does not train (a
  /// parameter server): `finished` when every one has left, `failure` the
  /// first failure one reported. False with `error` set when the coordinator
  /// does not answer.
  bool trainingStatus(bool &finished, std::string &failure, std::string &error);
  /// Says this task is done (best effort) and stops the heartbeats.
  void leave();

private:
  class Stub;
  /// One Get call: `found` and `value` of `key`; false with `error` set
  /// when the coordinator does not answer.
  bool fetch(const std::string &key, bool &found, std::string &value, std::string &error);
  /// The training tasks that have not registered: `list` names them
  /// ("worker:1 at ADDRESS", with "(refused: WHY)" where the coordinator
  /// turned one away; comma-separated), empty when all have, or the
  /// coordinator does not say.
  struct Unregistered {
    std::string list;
    bool anyRefused = false;
  };
  Unregistered unregisteredTasks();
  void heartbeatLoop();

  std::string address_;
  TaskId coordinator_, self_;
  std::string token_;
  std::unique_ptr<Stub> stub_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread heartbeats_;
  std::function<void(const std::string &)> waitNotice_;
  std::chrono::milliseconds waitNoticeAfter_ = kWaitNoticeAfter;
};

} // namespace kiln::cluster

#endif // KILN_RUNTIME_CLUSTER_COORDINATORCLIENT_H
