//===- GrpcSetup.h - How Kiln's gRPC servers and channels are set up -*- C++ -*-===//
//
// One place for the settings every Kiln service (the coordinator, the
// parameter servers) and its clients share, chosen deliberately rather than
// left at gRPC's defaults: message limits per service, keepalive pings every
// 10 s, no SO_REUSEPORT (a port in use is an error, not a shared port), TLS
// from PEM contents when given, quick reconnects, and the cluster token
// checked on every call.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CLUSTER_GRPCSETUP_H
#define KILN_RUNTIME_CLUSTER_GRPCSETUP_H

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

namespace kiln::cluster {

/// PEM contents (not paths) for TLS; all empty: plaintext.
struct TlsFiles {
  std::string cert, key, ca;
  bool enabled() const { return !cert.empty() || !ca.empty(); }
};

/// The metadata entry carrying the cluster token.
constexpr const char *kTokenMetadataKey = "kiln-cluster-token";

/// The longest wait between two attempts to reach a peer that is not up
/// yet (a coordinator, a parameter server), and the longest gRPC reconnect
/// backoff of a channel: tasks start together, and a peer a moment late
/// should not cost seconds.
constexpr std::chrono::milliseconds kRetryBackoffLimit{250};

/// Adds a listening port on `address` with Kiln's settings to `builder`;
/// `port` is set to the bound port once the server is built (0 on failure).
void configureServer(grpc::ServerBuilder &builder, const std::string &address,
                     const TlsFiles &tls, int maxMessageBytes, int *port);

/// Why a server configured so did not start, for its error line: gRPC says
/// no more than that it did not.
std::string whyNotServing(const TlsFiles &tls);

/// A channel to `address` with Kiln's settings.
std::shared_ptr<grpc::Channel> makeChannel(const std::string &address, const TlsFiles &tls,
                                           int maxMessageBytes);

/// The status a call without the right token is answered with, or OK.
grpc::Status checkToken(const grpc::CallbackServerContext &context, const std::string &token);

/// Stops gRPC's own log lines (its failures reach kiln's errors through
/// the calls' statuses): one error line per failure. Idempotent.
void quietGrpcLogs();

} // namespace kiln::cluster

#endif // KILN_RUNTIME_CLUSTER_GRPCSETUP_H
