//===- ParameterServerService.h - A parameter server over gRPC --*- C++ -*-===//
//
// Serves a ParameterServer as proto/kiln/ps.proto's service with the
// callback API: a pull or push that has to wait (a sync step not yet
// complete, bounded staleness) keeps its reactor and is finished when the
// server completes it, so no gRPC thread blocks. Every call must carry the
// cluster token. Messages up to 256 MiB: one request carries a step's
// tensors for the server, and a large dense shard travels whole.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PS_PARAMETERSERVERSERVICE_H
#define KILN_RUNTIME_PS_PARAMETERSERVERSERVICE_H

#include "runtime/cluster/GrpcSetup.h"
#include "runtime/ps/ParameterServer.h"

#include <memory>
#include <string>

namespace kiln::ps {

/// The largest request or reply of the service.
constexpr int kMaxPsMessageBytes = 256 << 20;

struct ServiceOptions {
  std::string listenAddress; ///< "host:port"; port 0 picks a free one.
  std::string token;
  cluster::TlsFiles tls;
};

class ParameterServerService {
public:
  /// Starts serving `server` (which must outlive the service); null with
  /// `error` set when the address cannot be bound.
  static std::unique_ptr<ParameterServerService> start(ParameterServer &server,
                                                       const ServiceOptions &options,
                                                       std::string &error);
  /// Fails the waiting calls, then shuts the server down.
  ~ParameterServerService();

  int port() const { return port_; }

  class Impl;

private:
  ParameterServerService(std::unique_ptr<Impl> impl, int port);
  std::unique_ptr<Impl> impl_;
  int port_;
};

} // namespace kiln::ps

#endif // KILN_RUNTIME_PS_PARAMETERSERVERSERVICE_H
