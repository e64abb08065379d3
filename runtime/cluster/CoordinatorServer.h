//===- CoordinatorServer.h - The chief's coordinator service ----*- C++ -*-===//
//
// The gRPC service (proto/kiln/coordinator.proto) the coordinator task of a
// cluster runs: it knows the cluster spec, admits only tasks of it that
// present the cluster token and the chief's artifact, keeps the key-value
// store the replicas meet in, and tracks every task's heartbeats, failure
// notices and departure, so a task can name the one that was lost.
//
// gRPC is set up deliberately: the callback API, a 4 MiB receive limit (the
// store holds addresses, not tensors), keepalive pings every 10 s, no
// SO_REUSEPORT (a port in use is an error, not a shared port), and TLS from
// PEM files when given.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CLUSTER_COORDINATORSERVER_H
#define KILN_RUNTIME_CLUSTER_COORDINATORSERVER_H

#include "runtime/cluster/ClusterSpec.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace kiln::cluster {

/// PEM contents (not paths) for TLS; all empty: plaintext.
struct TlsFiles {
  std::string cert, key, ca;
  bool enabled() const { return !cert.empty() || !ca.empty(); }
};

struct CoordinatorOptions {
  ClusterSpec spec;
  /// "host:port" to listen on (the coordinator task's address; its host may
  /// be 0.0.0.0 to listen on every interface).
  std::string listenAddress;
  std::string token;
  uint64_t artifactChecksum = 0;
  int replicasPerTask = 1;
  TlsFiles tls;
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

/// Stops gRPC's own log lines (its failures reach kiln's errors through
/// the calls' statuses): one error line per failure. Idempotent.
void quietGrpcLogs();

/// The metadata entry carrying the cluster token.
constexpr const char *kTokenMetadataKey = "kiln-cluster-token";
/// A task with no heartbeat for this long counts as lost.
constexpr std::chrono::milliseconds kHeartbeatLostAfter{3000};
constexpr std::chrono::milliseconds kHeartbeatInterval{500};

} // namespace kiln::cluster

#endif // KILN_RUNTIME_CLUSTER_COORDINATORSERVER_H
