//===- ServeCommand.cpp - kiln serve: one task of a cluster ---------------===//
//
// The order of a task's life: read the cluster spec and the token; the
// coordinator task starts the coordinator; every task registers with it
// (the artifact's checksum and replica count must match the chief's),
// starts heartbeats, and trains its replicas, which meet through the
// coordinator's store. At the end the task leaves, and the coordinator task
// waits for the others to leave before it stops serving. A failure is
// reported to the coordinator; a task whose collective failed because a peer
// went away asks the coordinator which task that was and names it.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln/ServeCommand.h"

#include "runtime/artifact/VerifiedArtifact.h"
#include "runtime/cluster/ClusterSpec.h"
#include "runtime/cluster/CoordinatorClient.h"
#include "runtime/cluster/CoordinatorServer.h"
#include "runtime/ps/ArtifactPsModel.h"
#include "runtime/ps/ParameterServerService.h"
#include "runtime/ps/ShardReport.h"
#include "runtime/support/PrintableText.h"
#include "runtime/train/CheckpointEvaluator.h"
#include "runtime/train/TrainingLoop.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

namespace kiln::tool {
namespace {

/// How long a task whose collective failed waits for the coordinator to
/// see which peer stopped: longer than a heartbeat takes to count as lost.
constexpr std::chrono::milliseconds kExplainPatience =
    cluster::kHeartbeatLostAfter + std::chrono::milliseconds(2000);

/// The most a cluster spec or PEM file may hold: far above any real one,
/// and a bound on what a wrong path (/dev/zero) can make kiln read.
constexpr uintmax_t kMaxConfigFileBytes = 16 << 20;

/// Reads the file `path` given as `flag`: a regular file or a pipe (a
/// shell's `<(...)`), at most kMaxConfigFileBytes and, with `nonEmpty`, not
/// empty.
bool readFile(const std::string &path, const char *flag, std::string &text, std::string &error,
              bool nonEmpty = false) {
  std::string named = "kiln: error: " + std::string(flag) + " " + printableText(path) + ": ";
  std::error_code ec;
  std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    error = named + "cannot read the file";
    return false;
  }
  if (!std::filesystem::is_regular_file(status) && !std::filesystem::is_fifo(status)) {
    error = named + (std::filesystem::is_directory(status) ? "is a directory" : "is not a file");
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = named + "cannot read the file";
    return false;
  }
  // In pieces, to one byte past the limit: a pipe has no size to check
  // first, and a file of a few KB needs no 16 MiB buffer.
  text.clear();
  char piece[64 << 10];
  while (text.size() <= kMaxConfigFileBytes && in.read(piece, sizeof piece).gcount() > 0)
    text.append(piece, static_cast<size_t>(in.gcount()));
  if (in.bad()) {
    error = named + "cannot read the file";
    return false;
  }
  if (text.size() > kMaxConfigFileBytes) {
    error = named + "holds more than the " + std::to_string(kMaxConfigFileBytes >> 20) +
            " MiB such a file may";
    return false;
  }
  if (nonEmpty && text.empty()) {
    error = named + "the file is empty";
    return false;
  }
  return true;
}

/// Reads a PEM file given as `flag` that must hold a `-----BEGIN {what}`
/// block ("CERTIFICATE", "PRIVATE KEY": also matches "RSA PRIVATE KEY"),
/// among any others (a key and its certificate in one file).
bool readPem(const std::string &path, const char *flag, const char *what, std::string &text,
             std::string &error) {
  if (!readFile(path, flag, text, error, /*nonEmpty=*/true))
    return false;
  const std::string marker = "-----BEGIN ";
  for (size_t label = text.find(marker); label != std::string::npos;
       label = text.find(marker, label + marker.size())) {
    size_t end = text.find("-----", label + marker.size());
    if (end == std::string::npos)
      break;
    if (text.substr(label + marker.size(), end - label - marker.size()).find(what) !=
        std::string::npos)
      return true;
  }
  error = "kiln: error: " + std::string(flag) + " " + printableText(path) +
          ": not a PEM file holding a " + what + " (no '-----BEGIN " + what + "-----' line)";
  return false;
}

/// The spec from --cluster or TF_CONFIG, and this task from --task or the
/// spec.
bool loadSpec(const ServeOptions &options, cluster::ClusterSpec &spec, std::string &error) {
  std::string text, origin;
  if (!options.clusterFile.empty()) {
    if (!readFile(options.clusterFile, "--cluster", text, error))
      return false;
    origin = options.clusterFile;
  } else if (const char *env = std::getenv("TF_CONFIG")) {
    text = env;
    origin = "TF_CONFIG";
  } else {
    error = "kiln: error: kiln serve needs a cluster spec: --cluster FILE.json or the "
            "TF_CONFIG variable";
    return false;
  }
  if (!cluster::parseClusterSpec(text, origin, spec, error))
    return false;
  if (!options.task.empty()) {
    cluster::TaskId task;
    if (!cluster::parseTaskId(options.task, task)) {
      error = "kiln: error: --task '" + options.task + "': expected TYPE:INDEX, such as worker:1";
      return false;
    }
    auto it = spec.tasks.find(task.type);
    if (it == spec.tasks.end() || task.index >= static_cast<int>(it->second.size())) {
      error = "kiln: error: --task " + options.task + ": " + origin + " has no such task";
      return false;
    }
    spec.task = task;
  }
  if (spec.task.type.empty()) {
    error = "kiln: error: " + origin + " names no task: give --task TYPE:INDEX";
    return false;
  }
  return true;
}

/// The longest cluster token: gRPC sends it in every call's headers, whose
/// whole size it limits (8 KiB by default).
constexpr size_t kMaxTokenBytes = 1024;

/// Whether `token` can travel as a gRPC header value: printable ASCII (a
/// tab, a newline or a byte above 0x7e made gRPC abort the process).
bool checkToken(const std::string &token, std::string &error) {
  if (token.size() > kMaxTokenBytes) {
    error = "kiln: error: KILN_CLUSTER_TOKEN holds " + std::to_string(token.size()) +
            " bytes; at most " + std::to_string(kMaxTokenBytes);
    return false;
  }
  for (size_t i = 0; i < token.size(); ++i) {
    auto byte = static_cast<unsigned char>(token[i]);
    if (byte < 0x20 || byte > 0x7e) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", byte);
      error = "kiln: error: KILN_CLUSTER_TOKEN holds the byte " + std::string(hex) +
              " at offset " + std::to_string(i) +
              ": a token must be printable ASCII (it travels in gRPC headers)";
      return false;
    }
  }
  return true;
}

/// The three PEM files, when given (the command line gives all or none).
bool loadTls(const ServeOptions &options, cluster::TlsFiles &tls, std::string &error) {
  return (options.tlsCert.empty() ||
          readPem(options.tlsCert, "--tls-cert", "CERTIFICATE", tls.cert, error)) &&
         (options.tlsKey.empty() ||
          readPem(options.tlsKey, "--tls-key", "PRIVATE KEY", tls.key, error)) &&
         (options.tlsCa.empty() ||
          readPem(options.tlsCa, "--tls-ca", "CERTIFICATE", tls.ca, error));
}

/// Prints `error` as one line: as it is when it names its source ("FILE:
/// error: ..."), else as kiln's.
int fail(const std::string &error) {
  bool named = error.rfind("kiln", 0) == 0 || error.find(": error: ") != std::string::npos;
  std::cerr << printableText(named ? error : "kiln: error: " + error) << "\n";
  return 1;
}

/// How a task that does not train (ps, evaluator) follows the training: it
/// asks the coordinator, which may start after it and stops answering a
/// moment after the end.
class TrainingWatch {
public:
  enum class State {
    Training,   ///< Still going.
    Finished,   ///< Every training task has left.
    Failed,     ///< A task failed: `why` says which and how.
    Unanswered, ///< This question went unanswered (`why`); within patience.
    Lost,       ///< No answer for longer than the patience: `why`.
  };

  TrainingWatch(const cluster::ClusterSpec &spec, const std::string &token,
                const cluster::TlsFiles &tls, double patienceSeconds)
      : coordinator_(spec.coordinatorTask()),
        client_(spec.address(coordinator_), coordinator_, spec.task, token, tls),
        patience_(static_cast<int64_t>(patienceSeconds * 1000)) {}

  State poll(std::string &why) {
    bool finished = false;
    std::string failure;
    if (client_.trainingStatus(finished, failure, why)) {
      answered_ = true;
      lastAnswer_ = std::chrono::steady_clock::now();
      why = failure;
      return !failure.empty() ? State::Failed : finished ? State::Finished : State::Training;
    }
    if (std::chrono::steady_clock::now() - lastAnswer_ <= patience_)
      return State::Unanswered;
    if (answered_)
      why += " (it stopped before training ended)";
    return State::Lost;
  }

  /// Whether the coordinator has answered at least once.
  bool answered() const { return answered_; }

private:
  cluster::TaskId coordinator_;
  cluster::CoordinatorClient client_;
  std::chrono::milliseconds patience_;
  std::chrono::steady_clock::time_point lastAnswer_ = std::chrono::steady_clock::now();
  bool answered_ = false;
};

/// "m.jsonl" -> "m-eval.jsonl": the evaluator's metrics beside the chief's.
std::string evaluatorMetrics(const std::string &path) {
  if (path.empty())
    return path;
  size_t dot = path.rfind('.');
  size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return path + "-eval";
  return path.substr(0, dot) + "-eval" + path.substr(dot);
}

/// An evaluator task (TensorFlow's SidecarEvaluator): evaluates each new
/// checkpoint the chief commits to --save DIR on --eval-data, until the
/// last step's or the end of training (the coordinator says).
int serveEvaluator(const ServeOptions &options, const cluster::ClusterSpec &spec,
                   const std::string &token, const cluster::TlsFiles &tls) {
  const train::TrainOptions &training = options.training;
  if (training.saveDir.empty() || training.evalData.empty())
    return fail("kiln: error: task " + spec.task.name() +
                ": an evaluator needs the training's checkpoint directory (--save DIR) and "
                "--eval-data FILE");
  TrainingWatch watch(spec, token, tls, options.connectSeconds);
  train::EvaluatorOptions evaluator;
  evaluator.artifact = training.artifact;
  evaluator.evalData = training.evalData;
  evaluator.checkpoints = training.saveDir;
  evaluator.metricsOut = evaluatorMetrics(training.metricsOut);
  evaluator.lastStep = training.steps;
  // Over when the coordinator says so, stops answering after it has (it
  // lingers a moment after the end), or never answers within
  // --connect-timeout.
  evaluator.trainingOver = [&] {
    std::string why;
    TrainingWatch::State state = watch.poll(why);
    return state != TrainingWatch::State::Training &&
           (state != TrainingWatch::State::Unanswered || watch.answered());
  };
  std::string error;
  std::cout << spec.task.name() << ": following " << training.saveDir << std::endl;
  if (!train::runCheckpointEvaluator(evaluator, std::cout, error))
    return fail(spec.task.name() + ": " + error);
  return 0;
}

/// A ps task: serves its shards until every training task has left.
int serveParameterServer(const ServeOptions &options, const cluster::ClusterSpec &spec,
                         const std::string &token, const cluster::TlsFiles &tls,
                         const artifact::VerifiedArtifact &artifact) {
  std::string error;
  ps::PsModel model;
  if (!ps::readPsModel(artifact, model, error))
    return fail(error);
  if (model.variables.empty())
    return fail(artifact.path() + ": error: the artifact keeps no variables on parameter "
                                  "servers (kilnc --train --strategy=parameter-server)");
  const train::TrainOptions &training = options.training;
  ps::ServerOptions server;
  server.index = spec.task.index;
  server.servers = static_cast<int>(spec.tasks.at("ps").size());
  server.workers = static_cast<int>(spec.trainingTasks().size()) * training.group.localReplicas;
  server.mode = training.ps.async ? ps::SyncMode::Async : ps::SyncMode::Sync;
  server.staleness = training.ps.staleness;
  server.staleWait = ps::staleWaitWithin(training.ps.deadline);
  server.hashPolicy = {training.ps.admitAfter, training.ps.evictTtl, training.ps.maxRows};
  ps::ParameterServer parameters(model, server);
  // Its part of the checkpoint, before any worker can pull.
  if (!training.restore.empty() && !parameters.restore(training.restore, error))
    return fail(spec.task.name() + ": " + error);
  ps::ServiceOptions service{spec.address(spec.task), token, tls};
  std::unique_ptr<ps::ParameterServerService> serving =
      ps::ParameterServerService::start(parameters, service, error);
  if (!serving)
    return fail(spec.task.name() + ": " + error);
  std::cout << spec.task.name() << ": serving " << model.variables.size()
            << " variables for " << server.workers << " workers ("
            << training.ps.modeName() << ") on "
            << service.listenAddress << std::endl;

  // Until the coordinator says every training task has left.
  TrainingWatch watch(spec, token, tls, options.connectSeconds);
  for (;;) {
    std::string why;
    TrainingWatch::State state = watch.poll(why);
    if (state == TrainingWatch::State::Finished)
      break;
    if (state == TrainingWatch::State::Failed) {
      // Workers waiting on this server learn why it stops.
      parameters.shutdown(why);
      fail(spec.task.name() + ": stopping: " + why);
      return kExitAnotherTaskFailed;
    }
    if (state == TrainingWatch::State::Lost)
      return fail(spec.task.name() + ": " + why);
    std::this_thread::sleep_for(cluster::kTrainingPollInterval);
  }
  ps::StatsReply stats;
  parameters.stats(stats);
  int64_t rows = 0, bytes = 0;
  for (const ps::VariableStats &variable : stats.variables()) {
    rows += variable.rows();
    bytes += variable.bytes();
  }
  std::cout << spec.task.name() << ": done after " << stats.applied_steps() << " updates"
            << ps::skippedUpdatesNote(stats) << "; held "
            << rows << " rows, " << bytes << " bytes; " << stats.pull_requests() << " pulls, "
            << stats.push_requests() << " pushes" << std::endl;
  return 0;
}

} // namespace

int serveCommand(const ServeOptions &options) {
  std::string error;
  cluster::ClusterSpec spec;
  cluster::TlsFiles tls;
  if (!loadSpec(options, spec, error) || !loadTls(options, tls, error))
    return fail(error);
  const char *token = std::getenv("KILN_CLUSTER_TOKEN");
  if (!token || !*token)
    return fail("kiln: error: KILN_CLUSTER_TOKEN is not set: every task of a cluster needs the "
                "same token (kiln launch makes one)");
  if (!checkToken(token, error))
    return fail(error);
  std::unique_ptr<artifact::VerifiedArtifact> artifact =
      artifact::VerifiedArtifact::load(options.training.artifact, error);
  if (!artifact)
    return fail(error);
  if (spec.task.type == "ps")
    return serveParameterServer(options, spec, token, tls, *artifact);
  if (spec.task.type == "evaluator")
    return serveEvaluator(options, spec, token, tls);

  cluster::TaskId coordinatorTask = spec.coordinatorTask();
  const std::string &coordinatorAddress = spec.address(coordinatorTask);
  int replicas = options.training.group.localReplicas;
  // What every training task must agree on: its last step and its batches
  // (the seed orders them only when shuffled).
  const train::TrainOptions &own = options.training;
  std::map<std::string, std::string> settings = {{"--steps", std::to_string(own.steps)},
                                                 {"--shuffle", own.shuffle ? "on" : "off"}};
  if (own.shuffle)
    settings["--seed"] = std::to_string(own.seed);
  std::unique_ptr<cluster::CoordinatorServer> server;
  if (spec.task == coordinatorTask) {
    cluster::CoordinatorOptions serverOptions{spec,     coordinatorAddress, token,
                                              artifact->checksum(), replicas, tls,
                                              settings};
    server = cluster::CoordinatorServer::start(serverOptions, error);
    if (!server)
      return fail(coordinatorTask.name() + ": " + error);
  }
  auto client = std::make_shared<cluster::CoordinatorClient>(
      coordinatorAddress, coordinatorTask, spec.task, token, tls);
  client->onLongWait([self = spec.task.name()](const std::string &line) {
    std::cerr << printableText(self + ": " + line) << std::endl;
  });
  auto patience = std::chrono::milliseconds(static_cast<int64_t>(options.connectSeconds * 1000));
  if (!client->registerTask(artifact->checksum(), replicas, patience, error, settings))
    return fail(spec.task.name() + ": " + error);
  client->startHeartbeats();

  train::TrainOptions training = options.training;
  std::vector<cluster::TaskId> trainers = spec.trainingTasks();
  train::ReplicaGroup &group = training.group;
  group.worldSize = static_cast<int>(trainers.size()) * replicas;
  group.firstRank = spec.trainingOrdinal(spec.task) * replicas;
  group.localReplicas = replicas;
  group.store = client;
  int port = 0;
  cluster::splitAddress(spec.address(spec.task), group.gloo.hostname, port);
  group.gloo.prefix = "gloo";
  // The others may start as late as this task waits for the chief.
  group.gloo.rendezvousTimeout = patience;
  group.describeRank = [trainers, replicas](int rank) {
    return trainers[rank / replicas].name() +
           (replicas > 1 ? " replica " + std::to_string(rank % replicas) : "");
  };
  auto anotherFailed = std::make_shared<std::atomic<bool>>(false);
  group.explainFailure = [client, anotherFailed,
                          self = spec.task](const std::string &problem) {
    client->reportFailure(problem);
    if (train::failedBecauseAnotherDid(problem))
      *anotherFailed = true; // Named by the message, or explained below.
    if (!collective::isCollectiveFailure(problem))
      return problem;
    std::string cause = client->explainLoss(kExplainPatience);
    if (cause.empty())
      return problem;
    *anotherFailed = true;
    std::string detail = problem.rfind("kiln: error: ", 0) == 0 ? problem.substr(13) : problem;
    if (detail.rfind(self.name() + ": ", 0) == 0)
      detail = detail.substr(self.name().size() + 2);
    return "kiln: error: " + cause + "; " + self.name() + " stopped: " + detail;
  };
  auto servers = spec.tasks.find("ps");
  if (servers != spec.tasks.end())
    training.ps.addresses = servers->second;
  training.ps.token = token;
  training.ps.tlsCert = tls.cert;
  training.ps.tlsKey = tls.key;
  training.ps.tlsCa = tls.ca;
  int status = train::runTraining(training, std::cout, std::cerr);
  if (status != 0 && *anotherFailed)
    status = kExitAnotherTaskFailed;
  client->leave();
  // After a failure, a task that never registers is not waited for long.
  if (server)
    server->waitForOthers(std::chrono::seconds(status == 0 ? 60 : 15));
  return status;
}

} // namespace kiln::tool
