//===- TrainingLoop.cpp - kiln run --data: training an artifact -----------===//

#include "runtime/train/TrainingLoop.h"

#include "runtime/artifact/DTypes.h"
#include "runtime/checkpoint/Checkpoint.h"
#include "runtime/cpu/Convolution.h"
#include "runtime/cpu/LowPrecisionGemm.h"
#include "runtime/cpu/Threads.h"
#include "runtime/data/BatchReader.h"
#include "runtime/data/Dataset.h"
#include "runtime/exec/ResolvedProgram.h"
#include "runtime/exec/Session.h"
#include "runtime/metrics/BackgroundWriter.h"
#include "runtime/metrics/EvalMetrics.h"
#include "runtime/metrics/EventWriter.h"
#include "runtime/metrics/MetricsJsonl.h"
#include "runtime/metrics/ProgressLine.h"
#include "runtime/ps/ArtifactPsModel.h"
#include "runtime/ps/ParameterClient.h"
#include "runtime/ps/ShardFiles.h"
#include "runtime/ps/ShardReport.h"
#include "runtime/train/Evaluation.h"
#include "runtime/train/TrainingModel.h"

#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

namespace kiln::train {
namespace {

/// How the batches' feeds got their bytes, for the input line: read where
/// the data set holds them (borrowed), written into the feeds, or both.
std::string howFeedsWereBound(const TrainingModel::FeedCounts &counts) {
  int64_t all = counts.inPlace + counts.copied;
  if (all > 0 && counts.copied == 0)
    return "each batch read where the data set holds it, no copy";
  if (counts.inPlace == 0)
    return "each written into the feeds by the step's thread";
  return std::to_string((counts.inPlace * 100 + all / 2) / all) +
         "% of the feeds read where the data set holds them, the others written into the "
         "feeds by the step's thread";
}

using Clock = std::chrono::steady_clock;

/// fp16 loss scaling: skipped steps in a row that end training (the scale
/// has halved as often: 2^16 becomes 2^-34).
constexpr int64_t kMaxSkippedInARow = 50;

/// The batches a reader thread chosen for a shuffled run lays out ahead
/// (TrainOptions::kPrefetchAuto): two let it fall a step behind (multi-hot,
/// 0.09 ms a step: input 1.7-1.9% against 2.3% with one).
constexpr int kAutoPrefetchBatches = 2;

/// Steps over which a shuffled run whose threads take every core follows
/// its kernels' choice of threads (a reader thread while none takes every
/// core, the step's threads otherwise) before it keeps what it has:
/// cpu::ThreadChoice measures again in windows starting at 4x the run that
/// ended the last (first choices by the 26th run, second by the 114th,
/// third by the 466th, fourth by about the 1,900th).
constexpr int64_t kStepsFollowingKernels = 2000;

/// "precision: bf16 matrix products (N GEMM calls a step, C input
/// conversions, K inputs rounded in kernels), HOW[; V convolutions in
/// bf16|f32 (...)]\n" for a train step with 16-bit products or convolutions
/// (kilnc --precision); "" otherwise. A tensor several products read (one
/// copy slot) is converted once; an input of the product's 16-bit type was
/// rounded by the kernel that computed it. Of the convolutions asked in
/// bf16, `runningInBF16` run oneDNN's bf16 kernels (the session's
/// Convolution::bf16(): where the runtime takes the CPU's bf16 instructions
/// and oneDNN has a blocked bf16 kernel for the shape), the others f32.
/// Where it takes them, `emulatedProducts` of the products still run in
/// f32 (LowPrecisionGemm::native(): shapes oneDNN has no fast or safe
/// kernel for).
std::string precisionLine(const artifact::VerifiedArtifact &artifact, int64_t runningInBF16,
                          int64_t emulatedProducts) {
  const artifact::Program *program = artifact.findProgram("train_step");
  if (!program || !program->instructions())
    return "";
  int64_t calls = 0, conversions = 0, roundedInKernels = 0;
  std::set<int32_t> filledSlots;
  auto precision = cpu::GemmPrecision::F32;
  int64_t convolutions = 0;
  for (size_t i = 0; i < program->instructions()->size(); ++i) {
    if (program->instructions_type()->Get(i) == artifact::Instruction_Convolution)
      convolutions += program->instructions()->GetAs<artifact::Convolution>(i)->precision() ==
                      artifact::DType_BF16;
    const artifact::Gemm *gemm = exec::lowPrecisionProduct(*program, i);
    if (!gemm)
      continue;
    cpu::GemmPrecision of = exec::gemmShapeOf(*gemm).precision;
    ++calls;
    for (auto [input, slot] : {std::pair{gemm->a(), gemm->a_copy()},
                               std::pair{gemm->b(), gemm->b_copy()}}) {
      if (artifact.root().buffers()->Get(input)->dtype() != artifact::DType_F32)
        ++roundedInKernels;
      else
        conversions += slot < 0 || filledSlots.insert(slot).second;
    }
    precision = of;
  }
  if (!calls && !convolutions)
    return "";
  std::string line = "precision: ";
  if (calls)
    line += std::string(precision == cpu::GemmPrecision::BF16 ? "bf16" : "fp16") +
            " matrix products (" + std::to_string(calls) + " GEMM calls a step, " +
            std::to_string(conversions) + " input conversions, " +
            std::to_string(roundedInKernels) + " inputs rounded in kernels), " +
            cpu::lowPrecisionGemmPath(precision);
  if (calls && emulatedProducts && cpu::hasNativeGemm(precision) &&
      cpu::nativeLowPrecisionAllowed())
    line += ", " + std::to_string(emulatedProducts) + " of them emulated in f32 (shapes oneDNN "
            "has no fast or safe bf16 kernel for)";
  if (convolutions) {
    line += std::string(calls ? "; " : "") + std::to_string(convolutions) + " convolutions ";
    if (!cpu::convolutionsInBF16())
      line += "in f32 (asked in bf16; this CPU has no bf16 instructions, or they are slower than "
              "f32 or turned off)";
    else if (runningInBF16 == convolutions)
      line += "in bf16";
    else
      line += "asked in bf16: " + std::to_string(runningInBF16) + " in bf16, " +
              std::to_string(convolutions - runningInBF16) +
              " in f32 (oneDNN has no blocked bf16 kernel for their shapes, or "
              "KILN_CONV_LAYOUT=plain)";
  }
  return line + "\n";
}

/// Train steps --profile leaves untimed: the first runs measure the threads
/// of each matrix product and row-parallel kernel (ThreadChoice: warm-up,
/// then each group's first window).
constexpr int64_t kProfileWarmRuns = cpu::ThreadChoice::kFirstWindowsEnd;

/// Tags of the collectives the loop makes itself, apart from the
/// artifact's buckets (which count up from 0).
constexpr uint32_t kBroadcastTag = 0x7fff0000;
constexpr uint32_t kLossTag = 0x7fff0001;
constexpr uint32_t kFinishTag = 0x7fff0002;

/// What every replica of a process shares: the loaded artifact and data,
/// and for a parameter-server artifact what the servers hold (and the
/// servers themselves when they run in this process).
struct Prepared {
  std::shared_ptr<const exec::Executable> executable;
  std::shared_ptr<const data::Dataset> trainData, evalData;
  std::unique_ptr<ps::PsModel> psModel;
  std::vector<std::unique_ptr<ps::ParameterServer>> localServers;
};

/// Reads the servers' part of a parameter-server artifact and starts the
/// in-process servers when the options name no cluster's.
bool prepareParameterServers(const TrainOptions &options, Prepared &prepared,
                             std::string &error) {
  const artifact::VerifiedArtifact &artifact = prepared.executable->artifact();
  if (!ps::usesParameterServers(artifact)) {
    if (!options.ps.addresses.empty()) {
      error = options.artifact + ": error: the cluster has ps tasks, but the artifact keeps no "
              "variables on parameter servers (kilnc --train --strategy=parameter-server)";
      return false;
    }
    if (options.ps.requested)
      error = options.artifact + ": error: the artifact keeps no variables on parameter servers "
              "(kilnc --train --strategy=parameter-server), so --ps, --sync, --async, "
              "--staleness, --admit-after, --evict, --ps-report, --compress and --no-prefetch do not "
              "apply";
    return !options.ps.requested;
  }
  prepared.psModel = std::make_unique<ps::PsModel>();
  if (!ps::readPsModel(artifact, *prepared.psModel, error))
    return false;
  if (!options.ps.addresses.empty())
    return true;
  // In-process servers serve this process's replicas only: the workers of
  // a cluster would each train on servers of their own.
  if (options.group.worldSize > options.group.localReplicas) {
    error = options.artifact + ": error: the artifact keeps its variables on parameter servers, "
            "but the cluster has no ps tasks: give TF_CONFIG's cluster a \"ps\" list (kiln "
            "launch --ps N)";
    return false;
  }
  int workers = options.group.worldSize;
  for (int s = 0; s < options.ps.localServers; ++s) {
    ps::ServerOptions server;
    server.index = s;
    server.servers = options.ps.localServers;
    server.workers = workers;
    server.mode = options.ps.async ? ps::SyncMode::Async : ps::SyncMode::Sync;
    server.staleness = options.ps.staleness;
    server.staleWait = ps::staleWaitWithin(options.ps.deadline);
    server.hashPolicy = {options.ps.admitAfter, options.ps.evictTtl, options.ps.maxRows};
    prepared.localServers.push_back(
        std::make_unique<ps::ParameterServer>(*prepared.psModel, server));
    if (!options.restore.empty() && !prepared.localServers.back()->restore(options.restore, error))
      return false;
  }
  return true;
}

/// Loads the artifact and the data files and checks they fit the group.
bool prepare(const TrainOptions &options, Prepared &prepared, std::string &error) {
  prepared.executable = exec::Executable::load(options.artifact, error);
  TrainingModel model;
  if (!prepared.executable || !model.describe(prepared.executable, options.artifact, error))
    return false;
  const ReplicaGroup &group = options.group;
  bool parameterServers = ps::usesParameterServers(prepared.executable->artifact());
  if (group.worldSize > 1 && !model.dataParallel() && !parameterServers) {
    error = options.artifact + ": error: the artifact was not compiled for data-parallel "
            "training (kilnc --train --strategy=data-parallel, or parameter-server), so it "
            "cannot run as one of " +
            std::to_string(group.worldSize) + " replicas";
    return false;
  }
  if (!prepareParameterServers(options, prepared, error))
    return false;
  data::ReadOptions read{options.skipBadRows};
  if (!model.loadData(options.data, read, prepared.trainData, error) ||
      (!options.evalData.empty() &&
       !model.loadData(options.evalData, read, prepared.evalData, error)))
    return false;
  int64_t global = model.batchSize() * group.worldSize;
  if (group.worldSize > 1 && prepared.trainData->rows < global) {
    error = options.data + ": error: " + std::to_string(prepared.trainData->rows) +
            " rows, fewer than one global batch of " + std::to_string(global) + " (" +
            std::to_string(group.worldSize) + " replicas x batch " +
            std::to_string(model.batchSize()) + ")";
    return false;
  }
  return true;
}

/// One replica's run; each method returns false after setting `error`.
/// Rank 0 (the only rank of a one-process run) is the chief: it alone
/// restores, logs, evaluates and saves.
class Trainer {
public:
  Trainer(const TrainOptions &options, std::ostream &out, TrainingObserver *observer,
          int rank = 0, std::shared_ptr<collective::Collective> group = nullptr)
      : options(options), out(out), observer(observer), rank(rank), group(std::move(group)) {}

  bool run(const Prepared &prepared, std::string &error);
  /// After run(): waits for every replica to be done with the collectives.
  bool finish(std::string &error);

private:
  bool chief() const { return rank == 0; }
  int worldSize() const { return group ? group->size() : 1; }
  /// Gives every replica the chief's variables and step (after init or
  /// restore), so all start from the same state.
  bool broadcastState(std::string &error);
  bool openLogs(std::string &error);
  /// Queues `fields` (the step first) for --metrics-out and --logdir.
  bool writeMetrics(int64_t step, std::vector<std::pair<std::string, double>> fields,
                    std::string &error);
  bool restore(std::string &error);
  /// One update: the batch (or each micro-batch) through the model, then
  /// the optimizer; `loss` is the mean over the micro-batches.
  bool step(data::BatchReader &reader, double &loss, double &lr, std::string &error);
  /// While readerFollowsKernels, after step `step`: where the kernels'
  /// threads leave a core free (each has chosen, and none takes every
  /// core), `reader` becomes one that reads ahead with `batches` on a
  /// thread of its own there; where they stop doing so, one that writes
  /// each batch on the step's threads again. The same batches either way.
  bool followKernelThreads(std::unique_ptr<data::BatchReader> &reader,
                           data::BatchOptions batches, int64_t step, std::string &error);
  /// The input line's words for a reader that followed the kernels'
  /// threads (readerFromStep set), in a run to step `last`.
  std::string readerAfterKernelsChose(int64_t last) const;
  bool save(int64_t step, std::string &error);
  /// With parameter servers: has each write its part into the step's
  /// directory and adds the files to `request`.
  bool saveServerParts(checkpoint::SaveRequest &request, std::string &error);
  bool evaluate(int64_t step, std::string &error);
  /// --ps-report: every server's statistics, from the chief.
  bool printServerReport(std::string &error);
  /// Connects this replica, as worker `rank`, to the parameter servers.
  bool connectParameterServers(const Prepared &prepared, std::string &error);

  const TrainOptions &options;
  std::ostream &out;
  TrainingObserver *observer;
  TrainingModel model;
  std::unique_ptr<exec::Session> session;
  std::shared_ptr<const data::Dataset> trainData, evalData;
  metrics::MetricsJsonl jsonl;
  std::optional<metrics::EventWriter> events;
  /// Writes jsonl and events off the step's path; declared after them, so
  /// it finishes its writes before they close.
  std::optional<metrics::BackgroundWriter> writer;
  int rank;
  std::shared_ptr<collective::Collective> group;
  int64_t startStep = 0;
  int64_t lastSaved = -1;
  const ps::PsModel *psModel = nullptr;
  std::unique_ptr<ps::ParameterClient> parameters;
  /// Async parameter servers: the batches one step ahead, whose first pulls
  /// each step sends before it computes.
  std::unique_ptr<data::BatchReader> lookahead;
  /// Seconds the steps spent taking their batches from the reader (waiting
  /// for its prefetch thread) and binding them to the feeds.
  double inputSeconds = 0;
  /// Batches the reader lays out ahead (--prefetch, else chosen), and
  /// whether its thread has a core no step thread uses.
  int prefetchBatches = 0;
  bool readerHasCore = false;
  /// A shuffled run whose threads take every core (the default reader
  /// choice, one process): whether the reader still follows the kernels'
  /// threads, and the steps a reader thread read ahead on a core they left
  /// free: from readerFromStep (0: none did) for readerSteps steps.
  bool readerFollowsKernels = false;
  int64_t readerFromStep = 0, readerSteps = 0;
  TrainingModel::FeedCounts feedCounts;
  /// fp16 loss scaling: the scale after the last step, whether it skipped
  /// its update, and how many steps did (in all, and in a row).
  double lossScale = 0;
  bool skipped = false;
  /// Whether any worker skipped the last step (its mean loss may be
  /// infinite though this worker's update went through).
  bool anySkipped = false;
  int64_t skippedSteps = 0, skippedInARow = 0;
};

bool Trainer::connectParameterServers(const Prepared &prepared, std::string &error) {
  psModel = prepared.psModel.get();
  if (!psModel)
    return true;
  std::vector<std::unique_ptr<ps::ServerLink>> links;
  const std::vector<std::string> &addresses = options.ps.addresses;
  for (size_t s = 0; s < prepared.localServers.size(); ++s)
    links.push_back(ps::makeLocalServerLink(*prepared.localServers[s], "ps:" + std::to_string(s)));
  for (size_t s = 0; s < addresses.size(); ++s)
    links.push_back(ps::makeGrpcServerLink(
        addresses[s], "ps:" + std::to_string(s), options.ps.token,
        {options.ps.tlsCert, options.ps.tlsKey, options.ps.tlsCa}, options.ps.deadline));
  parameters = std::make_unique<ps::ParameterClient>(*psModel, std::move(links), rank,
                                                     worldSize());
  parameters->setCompression(options.ps.compressFp16);
  std::string problem;
  if (!parameters->connect(options.ps.deadline, problem)) {
    error = options.artifact + ": error: " + problem;
    return false;
  }
  session->setParameters(parameters.get());
  return true;
}

bool Trainer::broadcastState(std::string &error) {
  int64_t steps[2] = {startStep, lastSaved};
  std::string problem;
  if (!group->broadcast(steps, sizeof(steps), 0, kBroadcastTag, problem) ||
      !group->broadcast(session->stateData(), session->stateBytes(), 0, kBroadcastTag,
                        problem)) {
    error = options.artifact + ": error: cannot share the initial variables: " + problem;
    return false;
  }
  startStep = steps[0];
  lastSaved = steps[1];
  return true;
}

bool Trainer::openLogs(std::string &error) {
  if (!options.metricsOut.empty() && !jsonl.open(options.metricsOut, error))
    return false;
  if (!options.logdir.empty()) {
    events.emplace();
    if (!events->open(options.logdir, error))
      return false;
  }
  if (!options.metricsOut.empty() || events)
    writer.emplace();
  return true;
}

bool Trainer::writeMetrics(int64_t step, std::vector<std::pair<std::string, double>> fields,
                           std::string &error) {
  if (!writer)
    return true;
  return writer->post(
      [this, step, fields = std::move(fields)](std::string &failure) {
        if (!options.metricsOut.empty() && !jsonl.write(fields, failure))
          return false;
        if (events)
          for (size_t i = 1; i < fields.size(); ++i) // fields[0] is the step.
            if (!events->scalar(fields[i].first, step, fields[i].second, failure))
              return false;
        return true;
      },
      error);
}

bool Trainer::restore(std::string &error) {
  checkpoint::Checkpoint loaded;
  // With parameter servers the chief reads its own files; each server
  // restored its part before serving.
  std::string note;
  if (!checkpoint::loadCheckpoint(options.restore, loaded, error,
                                  parameters ? ps::isChiefFile : nullptr) ||
      !model.restoreVariables(*session, loaded, note, error))
    return false;
  startStep = loaded.step;
  lastSaved = loaded.step;
  out << "restored " << loaded.path << " at step " << loaded.step << note << "\n";
  return true;
}

bool Trainer::followKernelThreads(std::unique_ptr<data::BatchReader> &reader,
                                  data::BatchOptions batches, int64_t step, std::string &error) {
  readerFollowsKernels = step - startStep < kStepsFollowingKernels;
  int threads = 0, batchThreads = 0;
  if (session->threadsInUse(kTrainProgram, threads, error) ||
      session->threadsInUse(model.batchProgram(), batchThreads, error))
    return false;
  // 0: a kernel has yet to choose. Their first choices, from three short
  // trials each way, may take all threads where later ones do not; and a
  // later window may take them again.
  bool coreFree =
      threads > 0 && batchThreads > 0 && std::max(threads, batchThreads) < cpu::usableCores();
  if (coreFree == (reader->prefetch() > 0))
    return true;
  batches.prefetch = coreFree ? kAutoPrefetchBatches : 0;
  batches.pollForFreeSlots = coreFree;
  auto next = std::make_unique<data::BatchReader>(trainData, batches);
  next->start(reader->nextIndex()); // The same batches from where the last left off.
  reader = std::move(next);
  if (coreFree && !readerFromStep)
    readerFromStep = step + 1;
  return true;
}

std::string Trainer::readerAfterKernelsChose(int64_t last) const {
  std::string ahead = std::to_string(kAutoPrefetchBatches) + " ahead on a thread of its own";
  if (readerSteps == last - readerFromStep + 1)
    return ahead + " from step " + std::to_string(readerFromStep) +
           " on a core the step's kernels left free (none took every core), chosen for "
           "--shuffle";
  return ahead + " in " + std::to_string(readerSteps) + " steps from step " +
         std::to_string(readerFromStep) +
         " where the step's kernels left a core free, the other steps' batches written into "
         "the feeds by the step's thread; chosen for --shuffle";
}

bool Trainer::step(data::BatchReader &reader, double &loss, double &lr, std::string &error) {
  // Without accumulation the batch program is train_step itself.
  const char *batchProgram = model.batchProgram();
  bool accumulating = model.accumulateSteps() > 1;
  // fp16 with parameter servers: the step pushes its gradients times the
  // scale it starts from, which the servers divide by.
  float scaleUsed = 0;
  if (parameters && model.lossScaling()) {
    if (!model.lossScaleNow(*session, scaleUsed, error))
      return false;
    parameters->setGradientScale(scaleUsed);
  }
  double sum = 0;
  for (int64_t micro = 0; micro < model.accumulateSteps(); ++micro) {
    double microLoss = 0;
    Clock::time_point inputBegin = Clock::now();
    bool bound = model.bindBatch(*session, batchProgram, reader, error, &feedCounts);
    inputSeconds += std::chrono::duration<double>(Clock::now() - inputBegin).count();
    if (!bound ||
        (lookahead && parameters->currentStep() < options.steps &&
         !model.prefetchBatch(*session, batchProgram, lookahead->next(), error)) ||
        !(accumulating ? model.runAccumulateStep(*session, error)
                       : model.runTrainStep(*session, error)) ||
        !model.readScalar(*session, batchProgram, model.lossName(), microLoss, error))
      return false;
    sum += microLoss;
  }
  loss = sum / static_cast<double>(model.accumulateSteps());
  if (!(!accumulating || model.runTrainStep(*session, error)))
    return false;
  double skippedFlag = 0;
  if (model.lossScaling() &&
      (!model.readScalar(*session, kTrainProgram, "loss_scale", lossScale, error) ||
       !model.readScalar(*session, kTrainProgram, "skipped_step", skippedFlag, error)))
    return false;
  skipped = skippedFlag != 0;
  if (parameters) {
    // The servers apply the update; the rate is theirs for this step. fp16
    // gradients that are not finite are not sent: a skip marker is, and in
    // sync mode another worker's skips the step here too (the servers'
    // optimizer steps are the steps less those skipped).
    if (skipped)
      parameters->skipStep();
    std::string problem;
    if (!parameters->finishStep(problem)) {
      error = options.artifact + ": error: " + problem;
      return false;
    }
    // Skipped though this step found its gradients finite: sync servers
    // skipped it for another worker's, or they overflowed f16 on the wire.
    bool ownSkip = skipped;
    skipped = parameters->stepSkipped();
    if (skipped && !ownSkip && model.lossScaling() &&
        !model.followSkippedStep(*session, scaleUsed, lossScale, error))
      return false;
    // Sync: step s was the servers' optimizer step s - (steps skipped), and
    // a skipped one reports the rate its update would have had; async: the
    // worker's own step (the servers count no skipped steps there).
    int64_t serverSkips = parameters->skippedSteps();
    int64_t optimizerStep = parameters->currentStep() - 1 - serverSkips;
    if (skipped && serverSkips > 0)
      ++optimizerStep;
    lr = psModel->optimizer.learningRateAt(optimizerStep);
  } else if (!model.readScalar(*session, kTrainProgram, "learning_rate", lr, error)) {
    return false;
  }
  // Without accumulation a data-parallel train_step's loss is already the
  // mean over every replica (it rides in the first gradient bucket); with it,
  // or with parameter servers, average here.
  // With the loss, whether any worker skipped the step (async parameter
  // servers: another worker's loss may have overflowed where this one's
  // update went through).
  anySkipped = skipped;
  if ((accumulating || parameters) && worldSize() > 1) {
    float totals[2] = {static_cast<float>(loss), skipped ? 1.0f : 0.0f};
    std::string problem;
    if (!group->allReduceSum(totals, 2, kLossTag, problem)) {
      error = options.artifact + ": error: " + problem;
      return false;
    }
    loss = totals[0] / worldSize();
    anySkipped = totals[1] > 0;
  }
  return true;
}

bool Trainer::save(int64_t step, std::string &error) {
  if (!chief() || options.saveDir.empty() || step == lastSaved)
    return true;
  std::vector<std::vector<uint8_t>> storage;
  checkpoint::SaveRequest request;
  if (!model.checkpointRequest(*session, step, storage, request, error))
    return false;
  request.directory = options.saveDir;
  request.keep = options.keep;
  if (parameters && !saveServerParts(request, error))
    return false;
  if (!checkpoint::saveCheckpoint(request, error))
    return false;
  lastSaved = step;
  if (observer)
    observer->checkpointSaved(step);
  return true;
}

bool Trainer::saveServerParts(checkpoint::SaveRequest &request, std::string &error) {
  // In sync mode every server has applied this step and none the next: the
  // chief has not pushed it yet.
  std::string path, problem;
  std::vector<ps::ShardSaveReply> replies;
  if (!checkpoint::beginCheckpoint(request.directory, request.step, path, error))
    return false;
  if (!parameters->save(path, request.step, replies, problem)) {
    error = options.artifact + ": error: " + problem;
    return false;
  }
  for (size_t s = 0; s < replies.size(); ++s) {
    checkpoint::ExternalShard shard{replies[s].file(), {}};
    for (const ps::SavedTensor &tensor : replies[s].tensors()) {
      checkpoint::SavedTensor saved{tensor.name(), checkpoint::DType::F32,
                                    {tensor.shape().begin(), tensor.shape().end()},
                                    tensor.fnv1a64()};
      if (!checkpoint::dtypeFromName(tensor.dtype(), saved.dtype)) {
        error = options.artifact + ": error: ps:" + std::to_string(s) + " saved tensor '" +
                tensor.name() + "' of unknown dtype '" + tensor.dtype() + "'";
        return false;
      }
      shard.tensors.push_back(std::move(saved));
    }
    request.external.push_back(std::move(shard));
    request.data[ps::appliedStepsKey(static_cast<int>(s))] = replies[s].applied_steps();
    if (replies[s].skipped_steps() > 0)
      request.data[ps::skippedStepsKey(static_cast<int>(s))] = replies[s].skipped_steps();
  }
  request.data[ps::kServersKey] = static_cast<int64_t>(replies.size());
  request.data[ps::kAsyncKey] = !replies.empty() && replies[0].async() ? 1 : 0;
  request.begun = true;
  return true;
}

bool Trainer::evaluate(int64_t step, std::string &error) {
  if (!chief() || !evalData)
    return true;
  EvaluationResult result;
  if (!evaluateModel(model, *session, evalData, result, error))
    return false;
  out << "eval at step " << step << ": " << formatEvaluation(result) << "\n";
  return writeMetrics(step, evaluationFields(step, result), error);
}

bool Trainer::run(const Prepared &prepared, std::string &error) {
  if (!model.describe(prepared.executable, options.artifact, error))
    return false;
  session = exec::Session::create(prepared.executable, error);
  if (!session)
    return false;
  session->setCollective(group);
  if (!connectParameterServers(prepared, error))
    return false;
  trainData = prepared.trainData;
  evalData = prepared.evalData;
  if (trainData->skippedRows > 0)
    out << "skipped " << trainData->skippedRows << " bad rows of " << options.data << "\n";
  if (!model.runInit(*session, error))
    return false;
  if (options.profile && session->startProfiling(kTrainProgram, kProfileWarmRuns, error))
    return false;
  if (chief() && !options.restore.empty() && !restore(error))
    return false;
  if (worldSize() > 1 && !broadcastState(error))
    return false;
  if (options.steps <= startStep) {
    out << "nothing to train: the run is at step " << startStep << ", --steps is "
        << options.steps << "\n";
    return true;
  }
  // Refuse an unusable --save directory now, not after the first N steps
  // (the chief's: it alone writes there).
  if (chief() && !options.saveDir.empty() &&
      !checkpoint::checkCheckpointDirectory(options.saveDir, startStep, options.steps, error))
    return false;
  if (chief() && !openLogs(error))
    return false;

  // One process whose threads leave a core free: a reader thread there
  // gathers shuffled batches off the step's path (with a copy in memory
  // and no shuffle, reading in place costs nothing to move).
  // Where they take every core, one may still be free once the step's
  // kernels have measured their threads (multi-hot's all run on one).
  bool oneProcess = worldSize() == 1 && !parameters;
  readerHasCore = oneProcess && cpu::usableCores() > cpu::processThreads();
  bool chooseReader = options.prefetchBatches == TrainOptions::kPrefetchAuto;
  prefetchBatches = !chooseReader ? options.prefetchBatches
                                  : (options.shuffle && readerHasCore ? kAutoPrefetchBatches : 0);
  readerFollowsKernels = chooseReader && options.shuffle && oneProcess && prefetchBatches == 0 &&
                         cpu::usableCores() > 1;
  data::BatchOptions batches{model.batchSize(), options.shuffle, options.seed, prefetchBatches,
                             worldSize(), rank, cpu::availableThreads()};
  batches.pollForFreeSlots = readerHasCore;
  auto reader = std::make_unique<data::BatchReader>(trainData, batches);
  reader->start(startStep * model.accumulateSteps());
  if (parameters && options.ps.async && options.ps.prefetch && model.accumulateSteps() == 1) {
    lookahead = std::make_unique<data::BatchReader>(
        trainData, data::BatchOptions{model.batchSize(), options.shuffle, options.seed, 1,
                                      worldSize(), rank});
    lookahead->start(startStep + 1);
  }
  metrics::ProgressLine progress(options.steps, startStep, chief() ? STDERR_FILENO : -1);
  Clock::time_point begin = Clock::now(), last = begin;
  double loss = 0, lr = 0;
  if (observer)
    observer->trainingStarted(startStep, options.steps);
  for (int64_t step = startStep + 1; step <= options.steps; ++step) {
    Clock::time_point stepBegin = Clock::now();
    if (parameters)
      parameters->beginStep(step);
    if (!this->step(*reader, loss, lr, error))
      return false;
    readerSteps += readerFromStep && reader->prefetch() > 0;
    if (readerFollowsKernels && step < options.steps &&
        !followKernelThreads(reader, batches, step, error))
      return false;
    // Under fp16 loss scaling a step whose gradients overflowed changed
    // nothing (its loss may have overflowed too); too many in a row fail.
    skippedInARow = skipped ? skippedInARow + 1 : 0;
    skippedSteps += skipped;
    if (skippedInARow >= kMaxSkippedInARow) {
      std::ostringstream message; // Default formatting: a scale of 2^-34 is not 0.000000.
      message << options.artifact << ": error: step " << step
              << ": the fp16 gradients were not finite on " << skippedInARow
              << " steps in a row (loss " << loss << ", loss scale now " << lossScale
              << "): values beyond f16's range (65504) in the forward pass? Train with "
                 "--precision=bf16 or fp32";
      error = message.str();
      return false;
    }
    if (!std::isfinite(loss) && !anySkipped) {
      error = options.artifact + ": error: step " + std::to_string(step) + ": loss is " +
              (std::isnan(loss) ? "NaN" : "infinite") + " (lr " + std::to_string(lr) + ")";
      // A loss with an ignore_index has no mean over a batch of ignored labels.
      for (const data::FeedSpec &spec : model.feedSpecs())
        if (std::isnan(loss) && spec.name == model.labelName() && spec.ignoredId)
          error += ": diverged, or every label of the batch is the ignored label " +
                   std::to_string(*spec.ignoredId) + " (no mean, as in PyTorch)";
      return false;
    }
    Clock::time_point now = Clock::now();
    double seconds = std::chrono::duration<double>(now - last).count();
    last = now;
    int64_t examplesPerStep = model.batchSize() * model.accumulateSteps() * worldSize();
    double examplesPerSecond = seconds > 0 ? examplesPerStep / seconds : 0;
    progress.update(step, loss, examplesPerSecond);
    if (observer)
      observer->stepFinished({step, loss, lr, examplesPerStep,
                              std::chrono::duration<double>(now - stepBegin).count(),
                              examplesPerSecond, model.lossScaling(), lossScale, skipped});
    if (!chief())
      continue;
    std::vector<std::pair<std::string, double>> fields = {
        {"step", double(step)},
        {"loss", loss},
        {"learning_rate", lr},
        {"examples_per_second", examplesPerSecond}};
    if (model.lossScaling()) {
      fields.emplace_back("loss_scale", lossScale);
      fields.emplace_back("skipped", skipped ? 1.0 : 0.0);
    }
    if (!writeMetrics(step, std::move(fields), error))
      return false;
    if (options.saveEvery > 0 && step % options.saveEvery == 0 && !save(step, error))
      return false;
    if (options.evalEvery > 0 && step % options.evalEvery == 0 && step != options.steps &&
        !evaluate(step, error))
      return false;
  }
  progress.finish();
  if (!chief())
    return true;
  double total = std::chrono::duration<double>(Clock::now() - begin).count();
  int64_t trained = options.steps - startStep;
  out << "trained steps " << startStep + 1 << ".." << options.steps << ": final loss "
      << loss << ", "
      << static_cast<int64_t>(trained * model.batchSize() * model.accumulateSteps() *
                              worldSize() / total)
      << " examples/s";
  if (parameters) {
    out << " (" << worldSize() << (worldSize() == 1 ? " worker, " : " workers, ")
        << parameters->serverCount() << " parameter server"
        << (parameters->serverCount() == 1 ? "" : "s") << ", "
        << options.ps.modeName() << (lookahead ? ", pulls prefetched" : "") << ")";
  } else if (worldSize() > 1) {
    collective::AllReduceTotals comm = session->allReduceTotals();
    out << " (" << worldSize() << " replicas; all-reduce " << comm.bytes / std::max<uint64_t>(1, trained)
        << " bytes a step, " << comm.commSeconds << " s in the collective, the steps waited "
        << comm.blockedSeconds << " s for it)";
  }
  out << "\n";
  out << "input: " << static_cast<int64_t>(inputSeconds * 1e3 + 0.5) << " ms of "
      << static_cast<int64_t>(total * 1e3 + 0.5) << " ms reading and binding batches ("
      << (total > 0 ? static_cast<int64_t>(inputSeconds / total * 1000 + 0.5) / 10.0 : 0.0)
      << "%, "
      << (readerFromStep ? readerAfterKernelsChose(options.steps)
          : prefetchBatches > 0
              ? std::to_string(prefetchBatches) + " ahead on a thread of its own" +
                    (readerHasCore ? " on a core the step's threads leave free" : "") +
                    (options.prefetchBatches == TrainOptions::kPrefetchAuto
                         ? ", chosen for --shuffle"
                         : "")
              : howFeedsWereBound(feedCounts))
      << ")\n";
  int cores = cpu::usableCores();
  out << "threads: " << cpu::processThreads() << " on " << cores << (cores == 1 ? " core" : " cores");
  if (int affinity = cpu::affinityCores(); affinity > cores)
    out << " (the cgroup's CPU quota; " << affinity << " in the affinity mask)";
  if (options.group.localReplicas > 1)
    out << ", " << cpu::availableThreads() << " a replica";
  exec::ProgramProfile kinds; // What each train_step instruction runs, timed or not.
  if (session->profile(kTrainProgram, kinds, error))
    return false;
  out << "\n" << precisionLine(session->executable().artifact(),
                               exec::countConvolutionsInBF16(kinds),
                               exec::countEmulatedProducts(kinds));
  if (options.profile) {
    exec::ProgramProfile profile;
    if (session->profile(kTrainProgram, profile, error))
      return false;
    out << exec::formatProgramProfile(
        *session->executable().artifact().findProgram(kTrainProgram), kTrainProgram, profile,
        static_cast<size_t>(options.profileSlowest));
  }
  if (model.lossScaling())
    out << "loss scaling: " << skippedSteps << " of " << trained
        << " steps skipped (gradients not finite), loss scale now " << lossScale << "\n";
  if (parameters && options.ps.report && !printServerReport(error))
    return false;
  if (writer && !writer->drain(error))
    return false;
  if (events && !events->flush(error))
    return false;
  return save(options.steps, error) && evaluate(options.steps, error) &&
         (!writer || writer->drain(error));
}

bool Trainer::printServerReport(std::string &error) {
  std::vector<ps::StatsReply> replies;
  std::string problem;
  if (!parameters->stats(replies, problem)) {
    error = options.artifact + ": error: " + problem;
    return false;
  }
  for (const ps::StatsReply &reply : replies)
    out << ps::formatServerReport(reply);
  if (lookahead)
    out << "worker " << rank << ": " << parameters->prefetchHits()
        << " steps took prefetched pulls, " << parameters->prefetchMisses()
        << " prefetches went unused\n";
  return true;
}

bool Trainer::finish(std::string &error) {
  // No replica closes its connections while another still reads from them.
  std::string problem;
  if (worldSize() > 1 && !group->barrier(kFinishTag, problem)) {
    error = options.artifact + ": error: " + problem;
    return false;
  }
  return true;
}

/// The name of rank `rank` in errors.
std::string describe(const ReplicaGroup &group, int rank) {
  std::string name = group.describeRank ? group.describeRank(rank) : "";
  return name.empty() ? "rank " + std::to_string(rank) : name;
}

/// Runs this process's replicas of a data-parallel job, one thread each.
/// The first replica to fail gives the error; its collective closing makes
/// the others fail soon after, instead of waiting out the timeout.
bool runReplicas(const TrainOptions &options, const Prepared &prepared, std::ostream &out,
                 TrainingObserver *observer, std::string &error) {
  const ReplicaGroup &group = options.group;
  if (!group.store) {
    error = "kiln: error: a data-parallel run needs a rendezvous store";
    return false;
  }
  std::mutex mutex;
  std::string firstError;
  bool firstIsConsequence = false;
  std::ostream quiet(nullptr);
  auto replica = [&](int rank) {
    std::string problem;
    try {
      collective::GlooOptions gloo = group.gloo;
      gloo.rank = rank;
      gloo.size = group.worldSize;
      std::shared_ptr<collective::Collective> collective =
          collective::connectCollective(*group.store, gloo, problem);
      if (collective) {
        Trainer trainer(options, rank == 0 ? out : quiet, rank == 0 ? observer : nullptr, rank,
                        std::move(collective));
        if (trainer.run(prepared, problem) && trainer.finish(problem))
          return;
      }
    } catch (const std::exception &e) {
      problem = "kiln: error: " + std::string(e.what());
    }
    // A member that failed breaks the group, and the others then fail
    // saying so: report the cause, whichever replica saw it first. The
    // in-process parameter servers stop too: the others would wait there
    // for its pushes (sync) or for it to catch up (--staleness) forever.
    for (const std::unique_ptr<ps::ParameterServer> &server : prepared.localServers)
      server->shutdown(describe(group, rank) + " failed");
    bool consequence = failedBecauseAnotherDid(problem);
    std::lock_guard<std::mutex> lock(mutex);
    if (firstError.empty() || (firstIsConsequence && !consequence)) {
      firstError = problem.rfind("kiln", 0) == 0 || problem.find(": error: ") != std::string::npos
                       ? problem
                       : "kiln: error: " + describe(group, rank) + ": " + problem;
      firstIsConsequence = consequence;
    }
  };
  cpu::shareThreadsAmong(group.localReplicas);
  std::vector<std::thread> threads;
  std::string unstarted;
  for (int i = 1; i < group.localReplicas && unstarted.empty(); ++i) {
    try {
      threads.emplace_back(replica, group.firstRank + i);
    } catch (const std::system_error &e) {
      // The started replicas fail at the rendezvous, waiting for it.
      unstarted = "kiln: error: cannot start a thread for " +
                  describe(group, group.firstRank + i) + ": " + e.what();
    }
  }
  if (unstarted.empty())
    replica(group.firstRank);
  for (std::thread &thread : threads)
    thread.join();
  error = unstarted.empty() ? firstError : unstarted;
  return error.empty();
}

} // namespace

bool failedBecauseAnotherDid(const std::string &problem) {
  return problem.find("another member failed or left the group") != std::string::npos ||
         problem.find("the parameter server is stopping") != std::string::npos;
}

int runTraining(const TrainOptions &options, std::ostream &out, std::ostream &err,
                TrainingObserver *observer) {
  std::string error;
  bool ok = false;
  try {
    Prepared prepared;
    if (prepare(options, prepared, error)) {
      if (options.group.worldSize > 1)
        ok = runReplicas(options, prepared, out, observer, error);
      else
        ok = Trainer(options, out, observer).run(prepared, error);
    }
  } catch (const std::exception &e) {
    error = "kiln: error: " + std::string(e.what());
  }
  if (ok)
    return 0;
  if (options.group.explainFailure)
    error = options.group.explainFailure(error);
  err << error << "\n";
  return 1;
}

} // namespace kiln::train
