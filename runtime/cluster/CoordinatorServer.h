//===- CoordinatorServer.h - The chief's coordinator service ----*- C++ -*-===//
//
// The gRPC service (proto/kiln/coordinator.proto) the coordinator task of a
// cluster runs: it knows the cluster spec, admits only tasks of it that
// present the cluster token and the chief's artifact, keeps the key-value
// store the replicas meet in, and tracks every task's heartbeats, failure
// notices and departure, so a task can name the one that was lost.
//
// gRPC is set up as GrpcSetup.h says, with the callback API and a 4 MiB
// message limit (the store holds addresses, not tensors).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CLUSTER_COORDINATORSERVER_H
#define KILN_RUNTIME_CLUSTER_COORDINATORSERVER_H

#include "runtime/cluster/ClusterSpec.h"
#include "runtime/cluster/GrpcSetup.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace kiln::cluster {

struct CoordinatorOptions {
  ClusterSpec spec;
  /// "host:port" to listen on (the coordinator task's address; its host may
  /// be 0.0.0.0 to listen on every interface).
  std::string listenAddress;
  std::string token;
  uint64_t artifactChecksum = 0;
  int replicasPerTask = 1;
  TlsFiles tls;
  /// The chief's flags every training task must share (RegisterRequest).
  std::map<std::string, std::string> settings;
};

class CoordinatorServer {
public:
  /// Starts serving; null with `error` set when the address cannot be
  /// bound (in use, not this host's).
  static std::unique_ptr<CoordinatorServer> start(const CoordinatorOptions &options,
                                                  std::string &error);
  /// Shuts the server down, failing calls still open after a second.
  ~CoordinatorServer();

  /// Waits until every other training task has left (failed ones too, once
  /// they have asked which task caused their failure) or stopped sending
  /// heartbeats, or `timeout` passes: a task still to register is waited
  /// for, so that a chief that fails early still answers the tasks that
  /// start after it (they fail too, with their own error line).
  void waitForOthers(std::chrono::milliseconds timeout);

  class Impl;

private:
  explicit CoordinatorServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// A task with no heartbeat for this long counts as lost.
constexpr std::chrono::milliseconds kHeartbeatLostAfter{3000};
constexpr std::chrono::milliseconds kHeartbeatInterval{500};
/// How often a parameter server or an evaluator asks whether training is
/// over, and how long the coordinator keeps answering after it is (a few of
/// those questions).
constexpr std::chrono::milliseconds kTrainingPollInterval{250};
constexpr std::chrono::milliseconds kParameterServerLinger{1500};

} // namespace kiln::cluster

#endif // KILN_RUNTIME_CLUSTER_COORDINATORSERVER_H
