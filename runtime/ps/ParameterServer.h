//===- ParameterServer.h - One parameter server's protocol ------*- C++ -*-===//
//
// What a `ps` task does with pulls and pushes, apart from the transport
// (the gRPC service in ParameterServerService.h and the in-process client
// both call it):
//
//   - sync: a step's pushes from every worker are summed, divided by the
//     number of workers and applied once, as optimizer step s; the reply to
//     each push of step s waits until then, so a worker's next pull sees the
//     update and N workers at batch B train as one process at batch N*B;
//   - async: each push is applied on arrival, one optimizer step each (as
//     TensorFlow 2's ParameterServerStrategy);
//   - bounded staleness K (async): a pull for step s waits until no worker
//     has pushed fewer than s - 1 - K steps;
//   - a push carries (worker, step): a repeated one is answered as a
//     duplicate and applied once;
//   - fp16 loss scaling: a worker whose gradients were not finite pushes a
//     skip marker instead. Sync: the step changes nothing on any server and
//     is not an optimizer step (the schedule and Adam's bias correction use
//     the steps applied less those skipped), as one process at the global
//     batch would skip it; the replies say so. Async: that push applies
//     nothing but counts as the worker's progress.
//
// Replies that wait are finished later, from the call that completes the
// step, through the `Done` callbacks; shutdown() fails every waiting call.
// Thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PS_PARAMETERSERVER_H
#define KILN_RUNTIME_PS_PARAMETERSERVER_H

#include "proto/kiln/ps.pb.h"
#include "runtime/ps/ShardStore.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace kiln::ps {

/// The outcome of a call, mapped onto gRPC's codes by the service.
struct CallStatus {
  enum class Code { Ok, InvalidArgument, FailedPrecondition, DeadlineExceeded, Unavailable };
  Code code = Code::Ok;
  std::string message;
  bool ok() const { return code == Code::Ok; }
  static CallStatus error(Code code, std::string message) { return {code, std::move(message)}; }
};

using Done = std::function<void(CallStatus)>;

struct ServerOptions {
  int index = 0;
  int servers = 1;
  int workers = 1;
  SyncMode mode = SyncMode::Sync;
  /// Async only: the most steps a worker may run ahead of the slowest; -1
  /// for no bound.
  int64_t staleness = -1;
  /// How long a pull waits for the slowest worker under bounded staleness.
  std::chrono::milliseconds staleWait{300000};
  /// Admission and eviction of hash rows.
  HashPolicy hashPolicy;
};

/// How long a pull may wait for the slowest worker when the workers' calls
/// have `clientDeadline`: a little less (a tenth, at most 5 s), so that the
/// held pull ends with the server's "bounded staleness" message before the
/// client's gRPC deadline, which started earlier, ends the call without one.
std::chrono::milliseconds staleWaitWithin(std::chrono::milliseconds clientDeadline);

/// How many servers saved the checkpoint whose manifest is `manifest`
/// (data.ps.servers), checked against the range of server counts; on
/// failure sets `error`, naming the manifest.
bool savedServerCount(const std::string &manifestPath, const std::map<std::string, int64_t> &data,
                      int &servers, std::string &error);

class ParameterServer {
public:
  ParameterServer(const PsModel &model, const ServerOptions &options);
  ~ParameterServer();

  CallStatus hello(const HelloRequest &request, HelloReply &reply);
  /// Fills `reply` and calls `done`, at once or (bounded staleness) later.
  void pull(const PullRequest &request, PullReply *reply, Done done);
  /// Fills `reply` and calls `done`, at once or (sync) when the step is applied.
  void push(const PushRequest &request, PushReply *reply, Done done);
  void stats(StatsReply &reply);
  /// Writes this server's part of checkpoint `request.step` into
  /// `request.directory` (ps-0000I-of-0000N.safetensors) and describes it.
  CallStatus save(const ShardSaveRequest &request, ShardSaveReply &reply);
  /// Before serving: loads this server's part of the checkpoint at `path`
  /// (a checkpoint directory or one ckpt-S) and goes on from its step.
  /// Refuses a checkpoint saved by another number of servers.
  bool restore(const std::string &path, std::string &error);
  /// Fails every waiting call and every later one (the server is going
  /// away); their errors end with `reason` (what failed in the cluster).
  void shutdown(const std::string &reason = "");

  int64_t appliedSteps();

private:
  struct Waiter {
    std::function<bool()> ready;
    std::function<CallStatus()> complete;
    Done done;
    std::chrono::steady_clock::time_point deadline;
  };
  using Finished = std::vector<std::pair<Done, CallStatus>>;

  CallStatus readPull(const PullRequest &request, PullReply &reply);
  CallStatus addPush(const PushRequest &request);
  /// Sync: applies step `step` if every worker has pushed it.
  void maybeApplyStep(int64_t step, Finished &finished);
  /// Completes the waiters whose condition now holds or whose time is up.
  void wakeWaiters(Finished &finished);
  /// Bounded staleness: ends each held pull when its time is up, without
  /// waiting for a push to look (every worker that would push may be held
  /// itself); runs on `deadlineWatcher_` until the server stops.
  void expireWaiters();
  bool stalenessAllows(int64_t step) const;
  std::string slowestWorker() const;

  std::mutex mutex_;
  /// A push's entries and a pull's ids decoded (under mutex_): kept from
  /// request to request, so that one allocates little.
  struct Decoded {
    std::vector<std::vector<float>> dense, rows;
    std::vector<std::vector<int64_t>> ids;
    std::vector<int64_t> pulledIds;
  } decoded_;
  ShardStore store_;
  ServerOptions options_;
  int64_t applied_ = 0;
  /// Sync: workers whose push of a step has arrived, and the replies waiting for it.
  std::map<int64_t, std::set<int>> pushedBy_;
  std::map<int64_t, std::vector<std::pair<PushReply *, Done>>> waitingPushes_;
  /// Sync: steps a worker pushed a skip marker for, not applied yet.
  std::set<int64_t> skippedAt_;
  /// Sync: steps skipped (applied_ counts them too); async: pushes skipped.
  int64_t skipped_ = 0;
  /// Sync: the last kRecentSkips steps skipped, for repeated pushes' replies.
  static constexpr size_t kRecentSkips = 64;
  std::set<int64_t> recentSkips_;
  /// Async: each worker's last step pushed.
  std::vector<int64_t> lastPushed_;
  std::vector<Waiter> waiters_;
  /// Notified when a waiter is added or the server stops.
  std::condition_variable waitersChanged_;
  std::thread deadlineWatcher_;
  bool stopped_ = false;
  std::string stopReason_; ///< ": why", or empty.
  // Statistics.
  std::chrono::steady_clock::time_point started_;
  int64_t pullRequests_ = 0, pushRequests_ = 0, bytesReceived_ = 0, bytesSent_ = 0;
};

} // namespace kiln::ps

#endif // KILN_RUNTIME_PS_PARAMETERSERVER_H
