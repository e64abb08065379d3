//===- ParameterClient.cpp - A worker's view of the parameter servers -----===//

#include "runtime/ps/ParameterClient.h"

#include "runtime/ps/ClientSupport.h"

#include "proto/kiln/ps.grpc.pb.h"
#include "runtime/support/FloatRounding.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <system_error>
#include <thread>

namespace kiln::ps {

using Clock = std::chrono::steady_clock;

namespace {

class LocalServerLink : public ServerLink {
public:
  LocalServerLink(ParameterServer &server, std::string name)
      : server_(server), name_(std::move(name)) {}
  const std::string &name() const override { return name_; }
  CallStatus hello(const HelloRequest &request, HelloReply &reply) override {
    return server_.hello(request, reply);
  }
  void pull(const PullRequest &request, PullReply *reply, Done done) override {
    server_.pull(request, reply, std::move(done));
  }
  void push(const PushRequest &request, PushReply *reply, Done done) override {
    server_.push(request, reply, std::move(done));
  }
  CallStatus stats(StatsReply &reply) override {
    server_.stats(reply);
    return {};
  }
  CallStatus save(const ShardSaveRequest &request, ShardSaveReply &reply) override {
    return server_.save(request, reply);
  }

private:
  ParameterServer &server_;
  std::string name_;
};

CallStatus fromGrpc(const grpc::Status &status) {
  using Code = CallStatus::Code;
  switch (status.error_code()) {
  case grpc::StatusCode::OK:
    return {};
  case grpc::StatusCode::INVALID_ARGUMENT:
    return CallStatus::error(Code::InvalidArgument, status.error_message());
  case grpc::StatusCode::FAILED_PRECONDITION:
  case grpc::StatusCode::UNAUTHENTICATED:
    return CallStatus::error(Code::FailedPrecondition, status.error_message());
  case grpc::StatusCode::DEADLINE_EXCEEDED:
    return CallStatus::error(Code::DeadlineExceeded,
                             status.error_message().empty() ? "no answer before the deadline"
                                                            : status.error_message());
  default:
    return CallStatus::error(Code::Unavailable, status.error_message());
  }
}

/// A server reached over gRPC. The link owns every call's ClientContext and
/// outlives its callbacks: the destructor waits until each one has returned.
/// (A callback that owned its context dropped the last reference to the
/// channel on gRPC's own thread, which could still be tearing the channel
/// down while the process exited; gRPC then aborted.)
class GrpcServerLink : public ServerLink {
public:
  GrpcServerLink(const std::string &address, std::string name, std::string token,
                 const cluster::TlsFiles &tls, std::chrono::milliseconds deadline)
      : name_(std::move(name) + " at " + address), token_(std::move(token)),
        deadline_(deadline),
        stub_(ParameterService::NewStub(
            cluster::makeChannel(address, tls, /*maxMessageBytes=*/256 << 20))) {}

  ~GrpcServerLink() override {
    // Every call has a deadline, so this wait ends.
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return inFlight_ == 0; });
  }

  const std::string &name() const override { return name_; }

  CallStatus hello(const HelloRequest &request, HelloReply &reply) override {
    grpc::ClientContext context;
    prepare(context, std::chrono::milliseconds(2000));
    return fromGrpc(stub_->Hello(&context, request, &reply));
  }

  void pull(const PullRequest &request, PullReply *reply, Done done) override {
    grpc::ClientContext *context = startCall();
    stub_->async()->Pull(context, &request, reply, [this, done](grpc::Status status) {
      done(fromGrpc(status));
      finishCall();
    });
  }

  void push(const PushRequest &request, PushReply *reply, Done done) override {
    grpc::ClientContext *context = startCall();
    stub_->async()->Push(context, &request, reply, [this, done](grpc::Status status) {
      done(fromGrpc(status));
      finishCall();
    });
  }

  CallStatus stats(StatsReply &reply) override {
    grpc::ClientContext context;
    prepare(context, std::chrono::milliseconds(5000));
    return fromGrpc(stub_->Stats(&context, StatsRequest(), &reply));
  }

  CallStatus save(const ShardSaveRequest &request, ShardSaveReply &reply) override {
    grpc::ClientContext context;
    prepare(context, deadline_);
    return fromGrpc(stub_->Save(&context, request, &reply));
  }

private:
  void prepare(grpc::ClientContext &context, std::chrono::milliseconds deadline) {
    context.AddMetadata(cluster::kTokenMetadataKey, token_);
    context.set_deadline(std::chrono::system_clock::now() + deadline);
  }

  /// A context for a new call. Contexts of calls that have finished are
  /// freed here, on the caller's thread; none is freed while in flight,
  /// because calls finish in any order, so they go only when all have.
  grpc::ClientContext *startCall() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (inFlight_ == 0)
      contexts_.clear();
    ++inFlight_;
    contexts_.push_back(std::make_unique<grpc::ClientContext>());
    prepare(*contexts_.back(), deadline_);
    return contexts_.back().get();
  }

  void finishCall() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--inFlight_ == 0)
      idle_.notify_all();
  }

  std::string name_, token_;
  std::chrono::milliseconds deadline_;
  std::unique_ptr<ParameterService::Stub> stub_;
  std::mutex mutex_;
  std::condition_variable idle_;
  int inFlight_ = 0;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts_;
};

} // namespace

std::unique_ptr<ServerLink> makeLocalServerLink(ParameterServer &server, std::string name) {
  return std::make_unique<LocalServerLink>(server, std::move(name));
}

std::unique_ptr<ServerLink> makeGrpcServerLink(const std::string &address, std::string name,
                                               const std::string &token,
                                               const cluster::TlsFiles &tls,
                                               std::chrono::milliseconds deadline) {
  return std::make_unique<GrpcServerLink>(address, std::move(name), token, tls, deadline);
}

ParameterClient::ParameterClient(const PsModel &model,
                                 std::vector<std::unique_ptr<ServerLink>> servers, int worker,
                                 int workers)
    : model_(model), servers_(std::move(servers)), worker_(worker), workers_(workers),
      pending_(servers_.size()) {
  for (size_t i = 0; i < model.variables.size(); ++i)
    shards_.emplace_back(model.variables[i].placement, model.variables[i].shape,
                         static_cast<int>(i), serverCount());
}

bool ParameterClient::connect(std::chrono::milliseconds patience, std::string &error) {
  Clock::time_point deadline = Clock::now() + patience;
  for (int s = 0; s < serverCount(); ++s) {
    HelloRequest request;
    request.set_artifact_checksum(model_.checksum);
    request.set_server_index(s);
    request.set_server_count(serverCount());
    request.set_worker_count(workers_);
    for (std::chrono::milliseconds backoff{50};;
         backoff = std::min(backoff * 2, cluster::kRetryBackoffLimit)) {
      HelloReply reply;
      CallStatus status = servers_[s]->hello(request, reply);
      if (status.ok())
        break;
      bool retry = status.code == CallStatus::Code::Unavailable ||
                   status.code == CallStatus::Code::DeadlineExceeded;
      if (!retry || Clock::now() + backoff >= deadline) {
        error = servers_[s]->name() + (retry ? " cannot be reached: " : " refused worker " +
                                                                             std::to_string(worker_) + ": ") +
                status.message;
        return false;
      }
      std::this_thread::sleep_for(backoff);
    }
  }
  return true;
}

const PsVariable *ParameterClient::variable(uint32_t index, std::string &error) const {
  const PsVariable *spec = model_.find(index);
  if (!spec)
    error = "variable #" + std::to_string(index) + " is not held by the parameter servers";
  return spec;
}

const VariableShards &ParameterClient::shardsOf(const PsVariable &spec) const {
  return shards_[model_.ordinalOf(spec.artifactIndex)];
}

bool ParameterClient::pushDense(uint32_t index, const float *gradient, std::string &error) {
  const PsVariable *spec = variable(index, error);
  if (!spec)
    return false;
  const VariableShards &shards = shardsOf(*spec);
  int64_t width = spec->shape.rowWidth;
  size_t rowBytes = static_cast<size_t>(width) * sizeof(float);
  for (int64_t k = 0; k < shards.shardCount(); ++k) {
    DenseGradient &entry = *pending_[shards.serverOf(k)].add_dense();
    entry.set_variable(index);
    entry.set_shard(static_cast<uint32_t>(k));
    int64_t rows = shards.shardRows(k);
    std::vector<float> values(static_cast<size_t>(rows * width));
    for (int64_t r = 0; r < rows; ++r) {
      int64_t global = shards.rowsByMod() ? k + r * shards.shardCount() : shards.shardBegin(k) + r;
      std::memcpy(values.data() + r * width, gradient + global * width, rowBytes);
    }
    entry.set_values(payloadOf(values));
    entry.set_compressed(compressFp16_);
  }
  return true;
}

bool ParameterClient::pushRows(uint32_t index, const void *ids, bool ids64, int64_t count,
                               const float *rows, std::string &error) {
  const PsVariable *spec = variable(index, error);
  if (!spec)
    return false;
  const VariableShards &shards = shardsOf(*spec);
  int64_t width = spec->shape.rowWidth;
  // Duplicates summed here: each id travels once. The buffers are the
  // client's, kept from push to push.
  cpu::UniqueIds &uniqueOf = scratch_.unique;
  std::vector<int64_t> &uniqueIds = scratch_.uniqueIds;
  std::vector<float> &sums = scratch_.sums;
  uniqueOf.reset(static_cast<size_t>(count));
  uniqueIds.clear();
  sums.clear();
  for (int64_t i = 0; i < count; ++i) {
    int64_t id = ids64 ? static_cast<const int64_t *>(ids)[i] : static_cast<const int32_t *>(ids)[i];
    if (id == kPaddingId)
      continue;
    if (!shards.isHash() && (id < 0 || id >= spec->shape.rows)) {
      error = "id " + std::to_string(id) + " is outside table @" + spec->name + " of " +
              std::to_string(spec->shape.rows) + " rows";
      return false;
    }
    auto [unique, first] = uniqueOf.insert(id);
    if (first) {
      uniqueIds.push_back(id);
      sums.insert(sums.end(), rows + i * width, rows + (i + 1) * width);
      continue;
    }
    float *sum = sums.data() + unique * width;
    for (int64_t j = 0; j < width; ++j) {
      sum[j] += rows[i * width + j];
      // Under loss scaling the step checked its gradients, not these sums.
      if (gradientScale_ != 0 && !std::isfinite(sum[j]))
        pushOverflowed_ = true;
    }
  }
  std::vector<std::vector<int64_t>> &idsFor = scratch_.idsFor;
  std::vector<std::vector<float>> &rowsFor = scratch_.rowsFor;
  idsFor.resize(servers_.size());
  rowsFor.resize(servers_.size());
  for (size_t s = 0; s < servers_.size(); ++s) {
    idsFor[s].clear();
    rowsFor[s].clear();
  }
  for (size_t u = 0; u < uniqueIds.size(); ++u) {
    int64_t id = uniqueIds[u];
    int server = shards.isHash() ? shards.serverOfId(id) : shards.serverOf(shards.shardOfRow(id));
    idsFor[server].push_back(id);
    rowsFor[server].insert(rowsFor[server].end(), sums.data() + u * width,
                           sums.data() + (u + 1) * width);
  }
  for (size_t s = 0; s < servers_.size(); ++s) {
    if (idsFor[s].empty())
      continue;
    RowsGradient &entry = *pending_[s].add_rows();
    entry.set_variable(index);
    entry.set_ids(bytesOf(idsFor[s].data(), idsFor[s].size() * sizeof(int64_t)));
    entry.set_rows(payloadOf(rowsFor[s]));
    entry.set_compressed(compressFp16_);
  }
  return true;
}

std::string ParameterClient::payloadOf(const std::vector<float> &values) {
  if (!compressFp16_)
    return bytesOf(values.data(), values.size() * sizeof(float));
  std::string bytes(values.size() * sizeof(uint16_t), '\0');
  roundToF16Bytes(values.data(), bytes.data(), values.size());
  // Not finite (exponent all ones) on the wire: an overflow under loss
  // scaling (without it, nothing reads the flag: no scan).
  for (size_t i = 0; gradientScale_ != 0 && i < values.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + i * sizeof bits, sizeof bits);
    if ((bits & 0x7c00u) == 0x7c00u) {
      pushOverflowed_ = true;
      break;
    }
  }
  return bytes;
}

bool ParameterClient::finishStep(std::string &error) {
  std::vector<PushReply> replies(servers_.size());
  std::vector<CallStatus> statuses(servers_.size());
  Latch latch(serverCount());
  // A gradient finite in the step but not once summed by id or rounded to
  // f16 for the wire: under loss scaling an overflow like any other.
  if (gradientScale_ != 0 && pushOverflowed_)
    skipping_ = true;
  for (size_t s = 0; s < servers_.size(); ++s) {
    pending_[s].set_worker(worker_);
    pending_[s].set_step(step_);
    if (skipping_) {
      pending_[s].clear_dense();
      pending_[s].clear_rows();
      pending_[s].set_skipped(true);
    } else if (gradientScale_ != 0) {
      pending_[s].set_gradient_scale(gradientScale_);
    }
    servers_[s]->push(pending_[s], &replies[s], [&, s](CallStatus status) {
      statuses[s] = std::move(status);
      latch.countDown();
    });
  }
  latch.wait();
  for (PushRequest &request : pending_)
    request.Clear();
  stepSkipped_ = skipping_;
  skipping_ = pushOverflowed_ = false;
  for (size_t s = 0; s < servers_.size(); ++s) {
    if (!statuses[s].ok()) {
      error = servers_[s]->name() + ": push of step " + std::to_string(step_) + " failed: " +
              statuses[s].message;
      return false;
    }
    stepSkipped_ = stepSkipped_ || replies[s].step_skipped();
    skippedSteps_ = std::max(skippedSteps_, replies[s].skipped_steps());
  }
  ++step_;
  return true;
}

bool ParameterClient::stats(std::vector<StatsReply> &replies, std::string &error) {
  replies.assign(servers_.size(), StatsReply());
  for (size_t s = 0; s < servers_.size(); ++s) {
    CallStatus status = servers_[s]->stats(replies[s]);
    if (!status.ok()) {
      error = servers_[s]->name() + ": statistics failed: " + status.message;
      return false;
    }
  }
  return true;
}

bool ParameterClient::save(const std::string &directory, int64_t step,
                           std::vector<ShardSaveReply> &replies, std::string &error) {
  ShardSaveRequest request;
  request.set_directory(directory);
  request.set_step(step);
  replies.assign(servers_.size(), ShardSaveReply());
  std::vector<CallStatus> statuses(servers_.size());
  // Each server writes its own file: in parallel, one thread a server.
  // (Where no thread can be started, that server's save runs on this one.)
  std::vector<std::thread> writers;
  for (size_t s = 0; s < servers_.size(); ++s) {
    try {
      writers.emplace_back([&, s] { statuses[s] = servers_[s]->save(request, replies[s]); });
    } catch (const std::system_error &) {
      statuses[s] = servers_[s]->save(request, replies[s]);
    }
  }
  for (std::thread &writer : writers)
    writer.join();
  for (size_t s = 0; s < servers_.size(); ++s)
    if (!statuses[s].ok()) {
      error = servers_[s]->name() + ": saving checkpoint step " + std::to_string(step) +
              " failed: " + statuses[s].message;
      return false;
    }
  return true;
}

} // namespace kiln::ps
