//===- TrainingLoop.h - kiln run --data: training an artifact ---*- C++ -*-===//
//
// Trains a training artifact (one with a `train_step` program) on a data
// file: step k (from 1) feeds batch k-1 of the data (BatchReader's order),
// runs train_step, and records the loss train_step computed before its
// update. Around that: progress on the terminal, one JSON line per step,
// TensorBoard scalars, checkpoints (variables, optimizer slots and the step
// counter; the data position is the step), restore, and evaluation of the
// `forward` program on another data file.
//
// `steps` is the step to stop at, counted from the start of training: a run
// restored at step S trains steps S+1..steps and is bit-identical to one
// that never stopped.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TRAIN_TRAININGLOOP_H
#define KILN_RUNTIME_TRAIN_TRAININGLOOP_H

#include "runtime/collective/Collective.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace kiln::train {

/// Data-parallel training (docs/distributed.md): the replicas of the job,
/// which of them this process runs, and how they find each other. Replica
/// r trains block r of every global batch; rank 0 is the chief, the only
/// one that logs, evaluates and saves checkpoints.
struct ReplicaGroup {
  int worldSize = 1;     ///< Replicas in the whole job.
  int firstRank = 0;     ///< Rank of this process's first replica.
  int localReplicas = 1; ///< Replicas this process runs, one thread each.
  /// Where the replicas meet (addresses for Gloo); needed when worldSize > 1.
  std::shared_ptr<collective::KeyValueStore> store;
  /// Hostname, key prefix, algorithm and timeout; rank and size are set per
  /// replica.
  collective::GlooOptions gloo;
  /// The task running rank r, for errors ("worker:1"); empty: "rank r".
  std::function<std::string(int)> describeRank;
  /// Called with the error of a failed run; returns the line to print (a
  /// cluster task reports it and names the peer that was lost).
  std::function<std::string(const std::string &)> explainFailure;
};

/// Where a parameter-server artifact's variables live.
struct ParameterServerOptions {
  /// The ps tasks' "host:port", in index order; empty: `localServers`
  /// servers run inside this process (kiln run).
  std::vector<std::string> addresses;
  int localServers = 1;
  bool requested = false;  ///< A flag chose servers or a mode: the artifact must use them.
  /// Hash rows: admitted after this many pulls (0: at once); evicted when
  /// untouched for more than evictTtl steps or beyond maxRows per table and
  /// server (0: never).
  int64_t admitAfter = 0, evictTtl = 0, maxRows = 0;
  bool report = false;     ///< The chief prints each server's statistics at the end.
  bool compressFp16 = false; ///< Gradients pushed as IEEE f16.
  bool async = false;      ///< Each push applied on arrival (else sync).
  int64_t staleness = -1;  ///< Async: the most steps ahead of the slowest worker; -1: any.
  /// Async: each step's first pulls for the next batch go out before the
  /// step computes (--no-prefetch turns it off). Sync never prefetches: a
  /// step must read what the step before applied.
  bool prefetch = true;
  /// How long one pull or push may take (sync pushes wait for every worker).
  std::chrono::milliseconds deadline{300000};
  std::string token;       ///< The cluster token every call carries.
  std::string tlsCert, tlsKey, tlsCa; ///< PEM contents; all empty: plaintext.

  /// "sync", "async" or "staleness K", as summaries print the mode.
  std::string modeName() const {
    if (!async)
      return "sync";
    return staleness < 0 ? "async" : "staleness " + std::to_string(staleness);
  }
};

struct TrainOptions {
  std::string artifact;
  /// A .npz, .csv/.tsv file, or "synthetic" / "synthetic:ROWS".
  std::string data;
  int64_t steps = 0;
  bool shuffle = false;
  /// Batches laid out on a background thread while the steps before them
  /// run (--prefetch N); 0 writes each straight into the feeds' buffers
  /// when its step needs it (or reads it where the data set holds it): the
  /// data is in memory, so a batch is one copy at most, and a second thread
  /// competing with the step's only adds a copy and a handoff
  /// (docs/training.md has the measurements). kPrefetchAuto (the default):
  /// 2 for a shuffled run of one process, without parameter servers, with
  /// a core its threads leave free (the gather moves there), else 0.
  int prefetchBatches = kPrefetchAuto;
  static constexpr int kPrefetchAuto = -1;
  uint64_t seed = 0;
  bool skipBadRows = false;
  /// After the run, where the train step's time went (kiln run --profile),
  /// naming its `profileSlowest` slowest instructions.
  bool profile = false;
  int64_t profileSlowest = 5;
  std::string metricsOut; ///< FILE.jsonl; empty = none.
  std::string logdir;     ///< TensorBoard directory; empty = none.
  std::string saveDir;    ///< Checkpoint directory; empty = none.
  int64_t saveEvery = 0;  ///< 0 = only at the end.
  int keep = 5;           ///< Checkpoints kept.
  std::string restore;    ///< Checkpoint directory or ckpt-N; empty = none.
  std::string evalData;   ///< Evaluated every `evalEvery` steps and at the end.
  int64_t evalEvery = 0;  ///< 0 = only at the end.
  ReplicaGroup group;
  ParameterServerOptions ps;
};

/// One finished step, as a TrainingObserver sees it.
struct StepReport {
  int64_t step = 0;        ///< From 1, counted from the start of training.
  double loss = 0;         ///< The mean loss before the step's update.
  double learningRate = 0;
  int64_t examples = 0;    ///< Rows the step trained on (all micro-batches).
  double seconds = 0;      ///< The step itself: forward, backward, update.
  double examplesPerSecond = 0; ///< Over the time since the previous step.
  /// fp16 loss scaling: whether the run scales its loss, the scale for the
  /// next step, and whether this step skipped its update.
  bool lossScaling = false;
  double lossScale = 0;
  bool skipped = false;
};

/// Watches a run from outside the loop, beside its own logs (JSON lines,
/// TensorBoard, progress): the Prometheus endpoint of `kiln run
/// --metrics-port` (runtime/metrics/PrometheusMetrics.h). Called on the
/// training thread between steps, so each call must be quick.
class TrainingObserver {
public:
  virtual ~TrainingObserver() = default;
  /// Steps startStep+1..lastStep are about to be trained.
  virtual void trainingStarted(int64_t startStep, int64_t lastStep) {}
  virtual void stepFinished(const StepReport &report) {}
  /// The checkpoint of `step` is committed.
  virtual void checkpointSaved(int64_t step) {}
};

/// Trains; prints one error line to `err` and returns 1 on failure, 0 on
/// success. Summaries go to `out`; `observer`, if any, sees every step.
/// With several replicas, the chief's summaries and steps are reported;
/// the first replica to fail ends the run, and its error is the one printed.
int runTraining(const TrainOptions &options, std::ostream &out, std::ostream &err,
                TrainingObserver *observer = nullptr);

/// Whether a replica's failure `problem` is only the consequence of another
/// member's: its collective's group broke, or its parameter server stopped
/// (for a failure elsewhere).
bool failedBecauseAnotherDid(const std::string &problem);

} // namespace kiln::train

#endif // KILN_RUNTIME_TRAIN_TRAININGLOOP_H
