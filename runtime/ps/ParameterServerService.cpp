//===- ParameterServerService.cpp - A parameter server over gRPC ----------===//

#include "runtime/ps/ParameterServerService.h"

#include "proto/kiln/ps.grpc.pb.h"

namespace kiln::ps {
namespace {

grpc::Status toGrpc(const CallStatus &status) {
  switch (status.code) {
  case CallStatus::Code::Ok:
    return grpc::Status::OK;
  case CallStatus::Code::InvalidArgument:
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, status.message);
  case CallStatus::Code::FailedPrecondition:
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, status.message);
  case CallStatus::Code::DeadlineExceeded:
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, status.message);
  case CallStatus::Code::Unavailable:
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, status.message);
  }
  return grpc::Status(grpc::StatusCode::INTERNAL, status.message);
}

} // namespace

class ParameterServerService::Impl : public ParameterService::CallbackService {
public:
  Impl(ParameterServer &server, std::string token)
      : server_(server), token_(std::move(token)) {}

  std::unique_ptr<grpc::Server> grpcServer;

  void stop() {
    server_.shutdown();
    if (grpcServer)
      grpcServer->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  }

private:
  /// The reactor of a call refused for its token, or null.
  grpc::ServerUnaryReactor *refused(grpc::CallbackServerContext *context) {
    grpc::Status status = cluster::checkToken(*context, token_);
    if (status.ok())
      return nullptr;
    grpc::ServerUnaryReactor *reactor = context->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }

  grpc::ServerUnaryReactor *Hello(grpc::CallbackServerContext *context,
                                  const HelloRequest *request, HelloReply *reply) override {
    if (auto *reactor = refused(context))
      return reactor;
    grpc::ServerUnaryReactor *reactor = context->DefaultReactor();
    reactor->Finish(toGrpc(server_.hello(*request, *reply)));
    return reactor;
  }

  grpc::ServerUnaryReactor *Pull(grpc::CallbackServerContext *context,
                                 const PullRequest *request, PullReply *reply) override {
    if (auto *reactor = refused(context))
      return reactor;
    grpc::ServerUnaryReactor *reactor = context->DefaultReactor();
    server_.pull(*request, reply, [reactor](CallStatus status) { reactor->Finish(toGrpc(status)); });
    return reactor;
  }

  grpc::ServerUnaryReactor *Push(grpc::CallbackServerContext *context,
                                 const PushRequest *request, PushReply *reply) override {
    if (auto *reactor = refused(context))
      return reactor;
    grpc::ServerUnaryReactor *reactor = context->DefaultReactor();
    server_.push(*request, reply, [reactor](CallStatus status) { reactor->Finish(toGrpc(status)); });
    return reactor;
  }

  grpc::ServerUnaryReactor *Stats(grpc::CallbackServerContext *context, const StatsRequest *,
                                  StatsReply *reply) override {
    if (auto *reactor = refused(context))
      return reactor;
    server_.stats(*reply);
    grpc::ServerUnaryReactor *reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerUnaryReactor *Save(grpc::CallbackServerContext *context,
                                 const ShardSaveRequest *request,
                                 ShardSaveReply *reply) override {
    if (auto *reactor = refused(context))
      return reactor;
    grpc::ServerUnaryReactor *reactor = context->DefaultReactor();
    reactor->Finish(toGrpc(server_.save(*request, *reply)));
    return reactor;
  }

  ParameterServer &server_;
  std::string token_;
};

ParameterServerService::ParameterServerService(std::unique_ptr<Impl> impl, int port)
    : impl_(std::move(impl)), port_(port) {}

ParameterServerService::~ParameterServerService() { impl_->stop(); }

std::unique_ptr<ParameterServerService>
ParameterServerService::start(ParameterServer &server, const ServiceOptions &options,
                              std::string &error) {
  auto impl = std::make_unique<Impl>(server, options.token);
  grpc::ServerBuilder builder;
  int port = 0;
  cluster::configureServer(builder, options.listenAddress, options.tls, kMaxPsMessageBytes,
                           &port);
  builder.RegisterService(impl.get());
  impl->grpcServer = builder.BuildAndStart();
  if (!impl->grpcServer || port == 0) {
    error = "cannot serve the parameter server on " + options.listenAddress +
            cluster::whyNotServing(options.tls);
    return nullptr;
  }
  return std::unique_ptr<ParameterServerService>(
      new ParameterServerService(std::move(impl), port));
}

} // namespace kiln::ps
