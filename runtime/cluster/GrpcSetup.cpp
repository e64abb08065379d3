//===- GrpcSetup.cpp - How Kiln's gRPC servers and channels are set up ----===//

#include "runtime/cluster/GrpcSetup.h"

#include <grpc/support/log.h>

namespace kiln::cluster {
namespace {

/// Equal strings, in time independent of where they differ.
bool sameSecret(const std::string &a, const std::string &b) {
  unsigned char diff = a.size() != b.size();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

void dropLogLine(gpr_log_func_args *) {}

} // namespace

void quietGrpcLogs() {
  static bool done = [] {
    gpr_set_log_function(dropLogLine);
    return true;
  }();
  (void)done;
}

void configureServer(grpc::ServerBuilder &builder, const std::string &address,
                     const TlsFiles &tls, int maxMessageBytes, int *port) {
  quietGrpcLogs();
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (tls.enabled()) {
    grpc::SslServerCredentialsOptions ssl(
        tls.ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                       : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = tls.ca;
    ssl.pem_key_cert_pairs.push_back({tls.key, tls.cert});
    credentials = grpc::SslServerCredentials(ssl);
  }
  builder.AddListeningPort(address, credentials, port);
  builder.SetMaxReceiveMessageSize(maxMessageBytes);
  builder.SetMaxSendMessageSize(maxMessageBytes);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
}

std::string whyNotServing(const TlsFiles &tls) {
  return tls.enabled() ? " (the port is in use, the address is not this host's, or the TLS "
                         "certificate and key are not valid PEM that belong together)"
                       : " (the port is in use, or the address is not this host's)";
}

std::shared_ptr<grpc::Channel> makeChannel(const std::string &address, const TlsFiles &tls,
                                           int maxMessageBytes) {
  quietGrpcLogs();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(maxMessageBytes);
  args.SetMaxSendMessageSize(maxMessageBytes);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Reconnect quickly while waiting for a peer to come up.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, static_cast<int>(kRetryBackoffLimit.count()));
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (tls.enabled()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = tls.ca;
    ssl.pem_private_key = tls.key;
    ssl.pem_cert_chain = tls.cert;
    credentials = grpc::SslCredentials(ssl);
  }
  return grpc::CreateCustomChannel(address, credentials, args);
}

grpc::Status checkToken(const grpc::CallbackServerContext &context, const std::string &token) {
  auto entry = context.client_metadata().find(kTokenMetadataKey);
  std::string given = entry == context.client_metadata().end()
                          ? std::string()
                          : std::string(entry->second.data(), entry->second.size());
  if (sameSecret(given, token))
    return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                      given.empty() ? "no cluster token (KILN_CLUSTER_TOKEN)"
                                    : "wrong cluster token (KILN_CLUSTER_TOKEN)");
}

} // namespace kiln::cluster
