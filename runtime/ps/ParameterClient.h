//===- ParameterClient.h - A worker's view of the parameter servers -*- C++ -*-===//
//
// What a worker's train step calls to pull variables and push gradients,
// whatever carries them:
//
//   - pulls go out at once, one request per server holding a part of what
//     is asked (a whole group of variables and tables), all servers in
//     parallel; a table's ids are made unique first and its rows scattered
//     back to every position that asked;
//   - pushes are collected during the step, duplicate ids summed, and sent
//     by finishStep(): one request per server per step (every server gets
//     one, empty or not: a sync server counts every worker's step); a step
//     whose fp16 gradients were not finite (skipStep()) sends a skip marker
//     instead;
//   - in async mode a step's first pulls can be prefetched during the step
//     before (prefetch()): the next step's pull with the same variables and
//     ids takes the answer already on its way; one no pull of its step
//     took is dropped when a later step pulls;
//   - the id -1 pads an embedding bag's id lists, in every table, fixed or
//     hash: it pulls a zero row and pushes nothing, and never reaches a
//     server (so no hash table holds the key -1);
//   - an error names the server (`ps:1 at host:port`) and what failed.
//
// A ServerLink carries requests to one server: over gRPC (GrpcServerLink)
// or straight into a ParameterServer in this process (LocalServerLink, for
// `kiln run` of a parameter-server artifact and for tests).
// One ParameterClient per worker thread; not thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PS_PARAMETERCLIENT_H
#define KILN_RUNTIME_PS_PARAMETERCLIENT_H

#include "runtime/cluster/GrpcSetup.h"
#include "runtime/cpu/UniqueIds.h"
#include "runtime/ps/ClientSupport.h"
#include "runtime/exec/ParameterAccess.h"
#include "runtime/ps/ParameterServer.h"

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace kiln::ps {

class ServerLink {
public:
  virtual ~ServerLink() = default;
  /// How errors name the server: "ps:1 at 10.0.0.2:2222".
  virtual const std::string &name() const = 0;
  virtual CallStatus hello(const HelloRequest &request, HelloReply &reply) = 0;
  /// Start a call; `done` runs when it completes (perhaps on another thread).
  virtual void pull(const PullRequest &request, PullReply *reply, Done done) = 0;
  virtual void push(const PushRequest &request, PushReply *reply, Done done) = 0;
  virtual CallStatus stats(StatsReply &reply) = 0;
  virtual CallStatus save(const ShardSaveRequest &request, ShardSaveReply &reply) = 0;
};

/// A server in this process.
std::unique_ptr<ServerLink> makeLocalServerLink(ParameterServer &server, std::string name);

/// A server across gRPC; every call carries `token` and ends by `deadline`.
std::unique_ptr<ServerLink> makeGrpcServerLink(const std::string &address, std::string name,
                                               const std::string &token,
                                               const cluster::TlsFiles &tls,
                                               std::chrono::milliseconds deadline);

/// The id that pads a list of ids (kiln.embedding_bag's).
constexpr int64_t kPaddingId = -1;

class ParameterClient : public exec::ParameterAccess {
public:
  ParameterClient(const PsModel &model, std::vector<std::unique_ptr<ServerLink>> servers,
                  int worker, int workers);
  /// Waits for prefetched pulls still in flight.
  ~ParameterClient() override;

  /// Checks that every server runs this artifact with this cluster shape,
  /// retrying unreachable ones until `patience` passes.
  bool connect(std::chrono::milliseconds patience, std::string &error);

  /// Starts step `step` (1-based): pulls and pushes until finishStep() belong to it.
  void beginStep(int64_t step) { step_ = step; }
  /// The step the next pulls and pushes belong to (finishStep() moves it on).
  int64_t currentStep() const { return step_; }
  /// Pulls every order in one request per server: whole variables by
  /// shards, table rows by the unique ids asked (scattered back to every
  /// position that asked).
  bool pull(const std::vector<exec::PullOrder> &orders, std::string &error) override;
  /// Sends the pull of `orders` for the next step (currentStep() + 1) now
  /// and returns; its `out` pointers are ignored and its ids copied. The
  /// first pull() of that step asking the same variables and ids waits for
  /// these replies instead of asking again (one prefetch is kept ahead; a
  /// newer one replaces it). False with `error` for orders pull() would
  /// refuse (an id outside a table).
  bool prefetch(const std::vector<exec::PullOrder> &orders, std::string &error) override;
  /// Pulls that prefetched answers served, and prefetches dropped unused.
  int64_t prefetchHits() const { return prefetchHits_; }
  int64_t prefetchMisses() const { return prefetchMisses_; }
  /// Writes the whole value of the variable with artifact index `variable` to `out`.
  bool pullDense(uint32_t variable, float *out, std::string &error) {
    return pull({{variable, out}}, error);
  }
  /// Writes the rows at `ids` (`count` of them, i32 or i64) of table
  /// `variable` to `out` ([count, row width]).
  bool pullRows(uint32_t variable, const void *ids, bool ids64, int64_t count, float *out,
                std::string &error) {
    return pull({{variable, out, ids, ids64, count}}, error);
  }
  /// Queues the dense gradient of `variable` for this step's push.
  bool pushDense(uint32_t variable, const float *gradient, std::string &error) override;
  /// Queues a sparse gradient (rows[k] at ids[k], duplicates summed).
  bool pushRows(uint32_t variable, const void *ids, bool ids64, int64_t count,
                const float *rows, std::string &error) override;
  /// fp16 loss scaling: this step's gradients were not finite; finishStep()
  /// sends every server a skip marker instead of the pushes queued.
  void skipStep() { skipping_ = true; }
  /// fp16 loss scaling: this step's gradients are times `scale`, which the
  /// servers divide them by; a gradient that overflows f16 when compressed
  /// for the wire (--compress=fp16) then skips the step like one that was
  /// not finite (stepSkipped()). 0: not scaled.
  void setGradientScale(float scale) { gradientScale_ = scale; }
  /// Sends this step's pushes to every server and waits for them (sync: until applied).
  bool finishStep(std::string &error);
  /// Whether the step finishStep() last sent changed nothing: this worker
  /// skipped it, or (sync) another worker did and so the servers did.
  bool stepSkipped() const { return stepSkipped_; }
  /// Sync: the steps the servers have skipped so far (the optimizer's own
  /// step count is the steps applied less these); 0 in async mode.
  int64_t skippedSteps() const { return skippedSteps_; }

  /// The servers' statistics, one reply per server.
  bool stats(std::vector<StatsReply> &replies, std::string &error);
  /// Has every server write its part of checkpoint `step` into `directory`
  /// (DIR/ckpt-S), all at once; one reply per server.
  bool save(const std::string &directory, int64_t step, std::vector<ShardSaveReply> &replies,
            std::string &error);

  int serverCount() const { return static_cast<int>(servers_.size()); }
  /// --compress=fp16: gradients travel as IEEE f16 (half the bytes; values
  /// beyond 65504 become infinities, below 6e-8 zeros).
  void setCompression(bool fp16) { compressFp16_ = fp16; }

private:
  const PsVariable *variable(uint32_t index, std::string &error) const;
  const VariableShards &shardsOf(const PsVariable &spec) const;
  /// Where a server's answer to one order goes. Dense: shard `shard` of
  /// the variable. Rows: the order's unique ids `uniques`, in the order asked.
  struct PullPart {
    size_t order;
    int server;
    int reply; ///< Index among that server's dense or rows replies.
    int64_t shard = 0;
    std::vector<int64_t> uniques;
  };
  /// A group of pull orders as one request per server, and how the replies
  /// scatter back.
  struct PullPlan {
    int64_t step = 0;
    std::vector<PullRequest> requests; ///< By server.
    std::vector<const PsVariable *> specs;
    std::vector<uint32_t> variables;          ///< Per order.
    std::vector<std::vector<int64_t>> ids;    ///< Per order: the ids asked (none: whole).
    std::vector<bool> whole;                  ///< Per order.
    std::vector<PullPart> denseParts, rowsParts;
    std::vector<std::vector<int64_t>> slots;  ///< Per rows order: each position's unique id.
    std::vector<int64_t> uniqueCounts;
  };
  /// A plan's calls in flight.
  struct PullCalls {
    PullPlan plan;
    std::vector<PullReply> replies;
    std::vector<CallStatus> statuses;
    std::unique_ptr<Latch> latch;
  };
  bool planPull(const std::vector<exec::PullOrder> &orders, int64_t step, PullPlan &plan,
                std::string &error) const;
  std::unique_ptr<PullCalls> startPull(PullPlan plan);
  /// Waits for `calls` and writes the answers to the `out` of `orders`.
  bool finishPull(PullCalls &calls, const std::vector<exec::PullOrder> &orders,
                  std::string &error) const;
  /// Whether `calls` asked what `orders` ask, for this step.
  bool samePull(const PullCalls &calls, const std::vector<exec::PullOrder> &orders) const;
  /// Waits for every prefetch in flight and forgets them.
  void dropPrefetched();

  /// A pushed tensor's bytes: f32, or f16 with compression (noting a value
  /// that overflowed f16).
  std::string payloadOf(const std::vector<float> &values);

  const PsModel &model_;
  bool compressFp16_ = false;
  std::vector<std::unique_ptr<ServerLink>> servers_;
  std::vector<VariableShards> shards_; ///< By ordinal.
  int worker_, workers_;
  int64_t step_ = 1;
  bool skipping_ = false, stepSkipped_ = false, pushOverflowed_ = false;
  float gradientScale_ = 0;
  int64_t skippedSteps_ = 0;
  std::vector<PushRequest> pending_; ///< By server.
  /// Buffers pushRows() and planPull() reuse from call to call (the step's
  /// thread alone calls them), so that a step allocates little.
  struct Scratch {
    cpu::UniqueIds unique;
    std::vector<int64_t> uniqueIds;
    std::vector<float> sums;
    std::vector<std::vector<int64_t>> idsFor; ///< By server.
    std::vector<std::vector<float>> rowsFor;  ///< By server.
  };
  mutable Scratch scratch_;
  std::deque<std::unique_ptr<PullCalls>> prefetched_;
  int64_t prefetchHits_ = 0, prefetchMisses_ = 0;
};

} // namespace kiln::ps

#endif // KILN_RUNTIME_PS_PARAMETERCLIENT_H
