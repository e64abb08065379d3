//===- CoordinatorClient.cpp - A task's link to the coordinator -----------===//

#include "runtime/cluster/CoordinatorClient.h"

#include "proto/kiln/coordinator.grpc.pb.h"
#include "runtime/cluster/GrpcSetup.h"
#include "runtime/collective/Collective.h"

#include <grpcpp/grpcpp.h>

#include <cstdio>

namespace kiln::cluster {

using Clock = std::chrono::steady_clock;

namespace {

/// The deadline of an ordinary call.
constexpr std::chrono::milliseconds kCallDeadline{5000};

void setTask(Task &out, const TaskId &task) {
  out.set_type(task.type);
  out.set_index(task.index);
}

} // namespace

class CoordinatorClient::Stub {
public:
  Stub(const std::string &address, const TlsFiles &tls)
      : stub(Coordinator::NewStub(makeChannel(address, tls, 4 << 20))) {}

  /// A context with the token and a deadline `deadline` from now.
  std::unique_ptr<grpc::ClientContext> context(const std::string &token,
                                               std::chrono::milliseconds deadline = kCallDeadline) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata(kTokenMetadataKey, token);
    context->set_deadline(std::chrono::system_clock::now() + deadline);
    return context;
  }

  std::unique_ptr<Coordinator::Stub> stub;
};

CoordinatorClient::CoordinatorClient(std::string address, TaskId coordinator, TaskId self,
                                     std::string token, const TlsFiles &tls)
    : address_(std::move(address)), coordinator_(std::move(coordinator)), self_(std::move(self)),
      token_(std::move(token)), stub_((quietGrpcLogs(), std::make_unique<Stub>(address_, tls))) {}

CoordinatorClient::~CoordinatorClient() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (heartbeats_.joinable())
    heartbeats_.join();
}

bool CoordinatorClient::registerTask(uint64_t artifactChecksum, int replicas,
                                     std::chrono::milliseconds patience, std::string &error,
                                     const std::map<std::string, std::string> &settings) {
  RegisterRequest request;
  setTask(*request.mutable_task(), self_);
  request.set_artifact_checksum(artifactChecksum);
  request.set_replicas(replicas);
  for (const auto &[flag, value] : settings)
    (*request.mutable_settings())[flag] = value;
  Clock::time_point deadline = Clock::now() + patience;
  std::chrono::milliseconds backoff{100};
  for (int attempt = 1;; ++attempt) {
    RegisterReply reply;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto context = stub_->context(
        token_, std::max(std::chrono::milliseconds(100), std::min(left, kCallDeadline)));
    grpc::Status status = stub_->stub->Register(context.get(), request, &reply);
    if (status.ok())
      return true;
    bool retry = status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                 status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
    if (!retry) {
      error = coordinator_.name() + " at " + address_ + " refused " + self_.name() + ": " +
              status.error_message();
      return false;
    }
    if (Clock::now() + backoff >= deadline) {
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%.1f",
                    std::chrono::duration<double>(patience).count());
      error = "cannot reach the coordinator " + coordinator_.name() + " at " + address_ +
              " (" + std::to_string(attempt) + (attempt == 1 ? " attempt" : " attempts") +
              " in " + seconds + " s): " + status.error_message();
      return false;
    }
    std::this_thread::sleep_for(backoff);
    // Loopback attempts are cheap; a long backoff only delays the start
    // (up to 2 s between attempts made workers wait 1.5-5 s for a chief
    // that came up a moment late).
    backoff = std::min(backoff * 2, kRetryBackoffLimit);
  }
}

void CoordinatorClient::startHeartbeats() {
  if (!heartbeats_.joinable())
    heartbeats_ = std::thread([this] { heartbeatLoop(); });
}

void CoordinatorClient::heartbeatLoop() {
  HeartbeatRequest request;
  setTask(*request.mutable_task(), self_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_.wait_for(lock, kHeartbeatInterval, [&] { return stopping_; })) {
    lock.unlock();
    HeartbeatReply reply;
    auto context = stub_->context(token_, std::chrono::milliseconds(2000));
    (void)stub_->stub->Heartbeat(context.get(), request, &reply);
    lock.lock();
  }
}

bool CoordinatorClient::set(const std::string &key, const std::string &value,
                            std::string &error) {
  SetRequest request;
  request.set_key(key);
  request.set_value(value);
  SetReply reply;
  auto context = stub_->context(token_);
  grpc::Status status = stub_->stub->Set(context.get(), request, &reply);
  if (!status.ok())
    error = "the coordinator " + coordinator_.name() + " at " + address_ +
            " did not store '" + key + "': " + status.error_message();
  return status.ok();
}

bool CoordinatorClient::fetch(const std::string &key, bool &found, std::string &value,
                              std::string &error) {
  GetRequest request;
  request.set_key(key);
  GetReply reply;
  auto context = stub_->context(token_);
  grpc::Status status = stub_->stub->Get(context.get(), request, &reply);
  if (!status.ok()) {
    error = "the coordinator " + coordinator_.name() + " at " + address_ +
            " did not answer for '" + key + "': " + status.error_message();
    return false;
  }
  found = reply.found();
  value = reply.value();
  return true;
}

bool CoordinatorClient::get(const std::string &key, std::string &value, std::string &error) {
  bool found = false;
  if (!fetch(key, found, value, error))
    return false;
  if (!found)
    error = "rendezvous key '" + key + "' has no value";
  return found;
}

bool CoordinatorClient::wait(const std::vector<std::string> &keys,
                             std::chrono::milliseconds timeout, std::string &error) {
  // The store answers at once; waiting is polling, which a rendezvous does
  // a handful of times per job.
  Clock::time_point start = Clock::now(), deadline = start + timeout;
  std::chrono::milliseconds pause{5};
  bool noticed = !waitNotice_;
  for (const std::string &key : keys) {
    bool found = false;
    std::string value;
    while (fetch(key, found, value, error) && !found) {
      if (!noticed && Clock::now() - start >= waitNoticeAfter_) {
        noticed = true;
        std::string missing = unregisteredTasks().list;
        auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
        if (!missing.empty())
          waitNotice_("waiting for " + missing + " to register with the coordinator (for up to " +
                      std::to_string(seconds) + " s in all)");
      }
      if (Clock::now() >= deadline) {
        // A task that never came is the usual reason: name it, not the key.
        Unregistered missing = unregisteredTasks();
        std::string waited = "waited " + std::to_string(timeout.count()) + " ms for ";
        error = missing.list.empty()
                    ? "timed out after " + std::to_string(timeout.count()) +
                          " ms waiting for rendezvous key '" + key + "'"
                : missing.anyRefused
                    ? waited + missing.list + ", which did not register with the coordinator"
                    : waited + missing.list +
                          ", which never registered with the coordinator (not started, or "
                          "started with another cluster spec)";
        return false;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(200));
    }
    if (!found)
      return false; // fetch set the error.
  }
  return true;
}

CoordinatorClient::Unregistered CoordinatorClient::unregisteredTasks() {
  StatusReply reply;
  auto context = stub_->context(token_, std::chrono::milliseconds(2000));
  Unregistered missing;
  if (!stub_->stub->Status(context.get(), StatusRequest(), &reply).ok())
    return missing;
  for (const TaskStatus &task : reply.tasks()) {
    if (task.registered())
      continue;
    missing.list += (missing.list.empty() ? "" : ", ") + task.task().type() + ":" +
                    std::to_string(task.task().index()) +
                    (task.address().empty() ? "" : " at " + task.address()) +
                    (task.refused().empty() ? "" : " (refused: " + task.refused() + ")");
    missing.anyRefused = missing.anyRefused || !task.refused().empty();
  }
  return missing;
}

void CoordinatorClient::reportFailure(const std::string &error) {
  FailureNotice request;
  setTask(*request.mutable_task(), self_);
  request.set_error(error);
  FailureReply reply;
  auto context = stub_->context(token_, std::chrono::milliseconds(2000));
  (void)stub_->stub->ReportFailure(context.get(), request, &reply);
}

std::string CoordinatorClient::explainLoss(std::chrono::milliseconds patience) {
  auto strip = [](const std::string &text) {
    const std::string prefix = "kiln: error: ";
    return text.rfind(prefix, 0) == 0 ? text.substr(prefix.size()) : text;
  };
  Clock::time_point deadline = Clock::now() + patience;
  for (;;) {
    StatusReply reply;
    auto context = stub_->context(token_, std::chrono::milliseconds(2000));
    grpc::Status status = stub_->stub->Status(context.get(), StatusRequest(), &reply);
    if (!status.ok())
      return coordinator_.name() + " was lost (the coordinator at " + address_ +
             " does not answer: " + status.error_message() + ")";
    // A task that failed for a reason of its own, or went silent, is the
    // cause; tasks whose collectives broke are only its consequences.
    std::string consequence;
    for (const TaskStatus &task : reply.tasks()) {
      std::string name = task.task().type() + ":" + std::to_string(task.task().index());
      if (name == self_.name())
        continue;
      // A task that failed is a cause even once it has left.
      if (!task.failure().empty()) {
        if (!collective::isCollectiveFailure(task.failure()))
          return name + " failed: " + strip(task.failure());
        if (consequence.empty())
          consequence = name + " failed: " + strip(task.failure());
        continue;
      }
      if (task.left())
        continue;
      double silent = task.seconds_since_heartbeat();
      if (silent > std::chrono::duration<double>(kHeartbeatLostAfter).count()) {
        char text[32];
        std::snprintf(text, sizeof(text), "%.1f", silent);
        return name + " was lost (no heartbeat for " + text + " s)";
      }
    }
    if (Clock::now() >= deadline)
      return consequence;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

bool CoordinatorClient::trainingStatus(bool &finished, std::string &failure,
                                       std::string &error) {
  StatusReply reply;
  auto context = stub_->context(token_, std::chrono::milliseconds(2000));
  grpc::Status status = stub_->stub->Status(context.get(), StatusRequest(), &reply);
  if (!status.ok()) {
    error = "the coordinator " + coordinator_.name() + " at " + address_ +
            " does not answer: " + status.error_message();
    return false;
  }
  finished = reply.tasks_size() > 0;
  failure.clear();
  for (const TaskStatus &task : reply.tasks()) {
    finished = finished && task.left();
    if (failure.empty() && !task.failure().empty())
      failure = task.task().type() + ":" + std::to_string(task.task().index()) + " failed: " +
                task.failure();
  }
  return true;
}

void CoordinatorClient::leave() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (heartbeats_.joinable())
    heartbeats_.join();
  LeaveRequest request;
  setTask(*request.mutable_task(), self_);
  LeaveReply reply;
  auto context = stub_->context(token_, std::chrono::milliseconds(2000));
  (void)stub_->stub->Leave(context.get(), request, &reply);
}

} // namespace kiln::cluster
