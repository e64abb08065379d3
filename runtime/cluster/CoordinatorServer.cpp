//===- CoordinatorServer.cpp - The chief's coordinator service ------------===//

#include "runtime/cluster/CoordinatorServer.h"

#include "proto/kiln/coordinator.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <map>
#include <mutex>

namespace kiln::cluster {

using Clock = std::chrono::steady_clock;

namespace {

/// What the coordinator knows of one task.
struct TaskState {
  bool registered = false;
  bool left = false;
  Clock::time_point lastHeartbeat{};
  bool heartbeatSeen = false;
  std::string failure;
  std::string refused; ///< Why its last registration was refused.
};

} // namespace

class CoordinatorServer::Impl : public Coordinator::CallbackService {
public:
  explicit Impl(const CoordinatorOptions &options) : options_(options) {
    for (const TaskId &task : options.spec.trainingTasks())
      tasks_[task.name()];
  }

  std::unique_ptr<grpc::Server> server;

  void waitForOthers(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    std::string self = options_.spec.coordinatorTask().name();
    auto done = [&] {
      for (const auto &[name, state] : tasks_) {
        // A failed task still asks who caused it before it leaves.
        if (name == self || state.left)
          continue;
        bool lost = state.heartbeatSeen && Clock::now() - state.lastHeartbeat > kHeartbeatLostAfter;
        if (!lost)
          return false; // Still to register, or training.
      }
      return true;
    };
    Clock::time_point deadline = Clock::now() + timeout;
    while (!done() && Clock::now() < deadline)
      changed_.wait_for(lock, std::chrono::milliseconds(100));
    // Parameter servers and evaluators poll for the end of training: answer
    // them a while.
    auto polls = [&](const char *type) {
      auto it = options_.spec.tasks.find(type);
      return it != options_.spec.tasks.end() && !it->second.empty();
    };
    if (polls("ps") || polls("evaluator")) {
      Clock::time_point until = Clock::now() + kParameterServerLinger;
      while (Clock::now() < until)
        changed_.wait_until(lock, until);
    }
  }

private:
  /// Checks the token; on a mismatch finishes the call and returns null.
  grpc::ServerUnaryReactor *checked(grpc::CallbackServerContext *context) {
    grpc::Status status = checkToken(*context, options_.token);
    return status.ok() ? nullptr : finish(context, status);
  }

  grpc::ServerUnaryReactor *finish(grpc::CallbackServerContext *context, grpc::Status status) {
    grpc::ServerUnaryReactor *reactor = context->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }

  /// The state of `task`, or null when the spec has no such training task.
  TaskState *find(const Task &task) {
    auto it = tasks_.find(task.type() + ":" + std::to_string(task.index()));
    return it == tasks_.end() ? nullptr : &it->second;
  }

  grpc::ServerUnaryReactor *Register(grpc::CallbackServerContext *context,
                                     const RegisterRequest *request, RegisterReply *) override {
    if (auto *refused = checked(context))
      return refused;
    std::string name = request->task().type() + ":" + std::to_string(request->task().index());
    std::lock_guard<std::mutex> lock(mutex_);
    TaskState *state = find(request->task());
    if (!state)
      return finish(context, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                          name + " is not a training task of the cluster spec"));
    // Refused: the task hears why, and so do the others' rendezvous waits.
    auto refuse = [&](const std::string &why) {
      state->refused = why;
      return finish(context, grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, why));
    };
    if (request->artifact_checksum() != options_.artifactChecksum) {
      char text[64];
      std::snprintf(text, sizeof(text), "%016llx, the chief's is %016llx",
                    static_cast<unsigned long long>(request->artifact_checksum()),
                    static_cast<unsigned long long>(options_.artifactChecksum));
      return refuse(name + " runs another artifact (checksum " + text + ")");
    }
    if (request->replicas() != options_.replicasPerTask)
      return refuse(name + " runs " + std::to_string(request->replicas()) +
                    " replicas, the chief " + std::to_string(options_.replicasPerTask));
    for (const auto &[flag, chiefs] : options_.settings) {
      auto given = request->settings().find(flag);
      std::string theirs = given == request->settings().end() ? "" : given->second;
      if (theirs != chiefs)
        return refuse(name + " was started with " + flag + " " +
                      (theirs.empty() ? "(none)" : theirs) + ", the chief with " + flag + " " +
                      (chiefs.empty() ? "(none)" : chiefs));
    }
    state->refused.clear();
    state->registered = true;
    state->lastHeartbeat = Clock::now();
    state->heartbeatSeen = true;
    changed_.notify_all();
    return finish(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor *Heartbeat(grpc::CallbackServerContext *context,
                                      const HeartbeatRequest *request, HeartbeatReply *) override {
    if (auto *refused = checked(context))
      return refused;
    std::lock_guard<std::mutex> lock(mutex_);
    if (TaskState *state = find(request->task())) {
      state->lastHeartbeat = Clock::now();
      state->heartbeatSeen = true;
    }
    return finish(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor *Set(grpc::CallbackServerContext *context, const SetRequest *request,
                                SetReply *) override {
    if (auto *refused = checked(context))
      return refused;
    std::lock_guard<std::mutex> lock(mutex_);
    store_[request->key()] = request->value();
    return finish(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor *Get(grpc::CallbackServerContext *context, const GetRequest *request,
                                GetReply *reply) override {
    if (auto *refused = checked(context))
      return refused;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = store_.find(request->key());
    reply->set_found(it != store_.end());
    if (it != store_.end())
      reply->set_value(it->second);
    return finish(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor *ReportFailure(grpc::CallbackServerContext *context,
                                          const FailureNotice *request, FailureReply *) override {
    if (auto *refused = checked(context))
      return refused;
    std::lock_guard<std::mutex> lock(mutex_);
    if (TaskState *state = find(request->task()))
      if (state->failure.empty())
        state->failure = request->error().empty() ? "failed" : request->error();
    changed_.notify_all();
    return finish(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor *Status(grpc::CallbackServerContext *context,
                                   const StatusRequest *, StatusReply *reply) override {
    if (auto *refused = checked(context))
      return refused;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const TaskId &id : options_.spec.trainingTasks()) {
      const TaskState &state = tasks_[id.name()];
      TaskStatus *status = reply->add_tasks();
      status->mutable_task()->set_type(id.type);
      status->mutable_task()->set_index(id.index);
      status->set_registered(state.registered);
      status->set_left(state.left);
      status->set_seconds_since_heartbeat(
          state.heartbeatSeen
              ? std::chrono::duration<double>(Clock::now() - state.lastHeartbeat).count()
              : -1);
      status->set_failure(state.failure);
      status->set_address(options_.spec.address(id));
      status->set_refused(state.refused);
    }
    return finish(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor *Leave(grpc::CallbackServerContext *context,
                                  const LeaveRequest *request, LeaveReply *) override {
    if (auto *refused = checked(context))
      return refused;
    std::lock_guard<std::mutex> lock(mutex_);
    if (TaskState *state = find(request->task()))
      state->left = true;
    changed_.notify_all();
    return finish(context, grpc::Status::OK);
  }

  CoordinatorOptions options_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, TaskState> tasks_;
  std::map<std::string, std::string> store_;
};

CoordinatorServer::CoordinatorServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CoordinatorServer::~CoordinatorServer() {
  if (impl_ && impl_->server)
    impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

void CoordinatorServer::waitForOthers(std::chrono::milliseconds timeout) {
  impl_->waitForOthers(timeout);
}

std::unique_ptr<CoordinatorServer> CoordinatorServer::start(const CoordinatorOptions &options,
                                                            std::string &error) {
  auto impl = std::make_unique<Impl>(options);
  grpc::ServerBuilder builder;
  int port = 0;
  // The store holds addresses, not tensors.
  configureServer(builder, options.listenAddress, options.tls, 4 << 20, &port);
  builder.RegisterService(impl.get());
  impl->server = builder.BuildAndStart();
  if (!impl->server || port == 0) {
    error = "cannot serve the coordinator on " + options.listenAddress +
            whyNotServing(options.tls);
    return nullptr;
  }
  return std::unique_ptr<CoordinatorServer>(new CoordinatorServer(std::move(impl)));
}

} // namespace kiln::cluster
