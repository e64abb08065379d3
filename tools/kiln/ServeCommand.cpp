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
#include "runtime/support/PrintableText.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace kiln::tool {
namespace {

/// How long a task whose collective failed waits for the coordinator to
/// see which peer stopped: longer than a heartbeat takes to count as lost.
constexpr std::chrono::milliseconds kExplainPatience =
    cluster::kHeartbeatLostAfter + std::chrono::milliseconds(2000);

bool readFile(const std::string &path, const char *flag, std::string &text,
              std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "kiln: error: " + std::string(flag) + " " + path + ": cannot read the file";
    return false;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return true;
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
  if (spec.trainingOrdinal(spec.task) < 0) {
    error = "kiln: error: task " + spec.task.name() +
            ": only chief and worker tasks train data-parallel (parameter servers and "
            "evaluators come with parameter-server training)";
    return false;
  }
  return true;
}

bool loadTls(const ServeOptions &options, cluster::TlsFiles &tls, std::string &error) {
  return (options.tlsCert.empty() || readFile(options.tlsCert, "--tls-cert", tls.cert, error)) &&
         (options.tlsKey.empty() || readFile(options.tlsKey, "--tls-key", tls.key, error)) &&
         (options.tlsCa.empty() || readFile(options.tlsCa, "--tls-ca", tls.ca, error));
}

/// Prints `error` as one line: as it is when it names its source ("FILE:
/// error: ..."), else as kiln's.
int fail(const std::string &error) {
  bool named = error.rfind("kiln", 0) == 0 || error.find(": error: ") != std::string::npos;
  std::cerr << printableText(named ? error : "kiln: error: " + error) << "\n";
  return 1;
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
  std::unique_ptr<artifact::VerifiedArtifact> artifact =
      artifact::VerifiedArtifact::load(options.training.artifact, error);
  if (!artifact)
    return fail(error);

  cluster::TaskId coordinatorTask = spec.coordinatorTask();
  const std::string &coordinatorAddress = spec.address(coordinatorTask);
  int replicas = options.training.group.localReplicas;
  std::unique_ptr<cluster::CoordinatorServer> server;
  if (spec.task == coordinatorTask) {
    cluster::CoordinatorOptions serverOptions{spec, coordinatorAddress, token,
                                              artifact->checksum(), replicas, tls};
    server = cluster::CoordinatorServer::start(serverOptions, error);
    if (!server)
      return fail(coordinatorTask.name() + ": " + error);
  }
  auto client = std::make_shared<cluster::CoordinatorClient>(
      coordinatorAddress, coordinatorTask, spec.task, token, tls);
  auto patience = std::chrono::milliseconds(static_cast<int64_t>(options.connectSeconds * 1000));
  if (!client->registerTask(artifact->checksum(), replicas, patience, error))
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
  group.explainFailure = [client, self = spec.task](const std::string &problem) {
    client->reportFailure(problem);
    if (!collective::isCollectiveFailure(problem))
      return problem;
    std::string cause = client->explainLoss(kExplainPatience);
    if (cause.empty())
      return problem;
    std::string detail = problem.rfind("kiln: error: ", 0) == 0 ? problem.substr(13) : problem;
    if (detail.rfind(self.name() + ": ", 0) == 0)
      detail = detail.substr(self.name().size() + 2);
    return "kiln: error: " + cause + "; " + self.name() + " stopped: " + detail;
  };
  int status = train::runTraining(training, std::cout, std::cerr);
  client->leave();
  // After a failure, a task that never registers is not waited for long.
  if (server)
    server->waitForOthers(std::chrono::seconds(status == 0 ? 60 : 15));
  return status;
}

} // namespace kiln::tool
