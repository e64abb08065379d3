//===- ParameterServer.cpp - One parameter server's protocol --------------===//

#include "runtime/ps/ParameterServer.h"

#include "runtime/ps/ShardFiles.h"
#include "runtime/support/FloatRounding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <system_error>

namespace kiln::ps {

using Clock = std::chrono::steady_clock;
using Code = CallStatus::Code;

namespace {

void runAll(std::vector<std::pair<Done, CallStatus>> &finished) {
  for (auto &[done, status] : finished)
    done(status);
  finished.clear();
}

/// Into `values`: the f32 values of a pushed payload (f16 when compressed),
/// divided by `scale` unless it is 0 or 1 (fp16 loss scaling's scaled
/// gradients: a division, since a tiny scale's reciprocal could overflow).
void decodeFloats(const std::string &bytes, bool compressed, float scale,
                  std::vector<float> &values) {
  if (!compressed) {
    values.resize(bytes.size() / sizeof(float));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  } else {
    values.resize(bytes.size() / sizeof(uint16_t));
    f16BytesToFloat(bytes.data(), values.data(), values.size());
  }
  if (scale != 0 && scale != 1)
    for (float &value : values)
      value /= scale;
}

void decodeIds(const std::string &bytes, std::vector<int64_t> &ids) {
  ids.resize(bytes.size() / sizeof(int64_t));
  std::memcpy(ids.data(), bytes.data(), ids.size() * sizeof(int64_t));
}

} // namespace

std::chrono::milliseconds staleWaitWithin(std::chrono::milliseconds clientDeadline) {
  auto margin = std::min<std::chrono::milliseconds>(clientDeadline / 10, std::chrono::seconds(5));
  return clientDeadline - margin;
}

ParameterServer::ParameterServer(const PsModel &model, const ServerOptions &options)
    : store_(model, options.index, options.servers, options.hashPolicy), options_(options),
      lastPushed_(static_cast<size_t>(std::max(1, options.workers)), 0), started_(Clock::now()) {
  if (options_.mode == SyncMode::Async && options_.staleness >= 0) {
    try {
      deadlineWatcher_ = std::thread([this] { expireWaiters(); });
    } catch (const std::system_error &) {
      // No thread to spare (EAGAIN): held pulls' times are then looked at
      // when pushes arrive, as they are anyway.
    }
  }
}

ParameterServer::~ParameterServer() {
  shutdown();
  if (deadlineWatcher_.joinable())
    deadlineWatcher_.join();
}

void ParameterServer::expireWaiters() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopped_) {
    if (waiters_.empty()) {
      waitersChanged_.wait(lock);
      continue;
    }
    Clock::time_point earliest = waiters_.front().deadline;
    for (const Waiter &waiter : waiters_)
      earliest = std::min(earliest, waiter.deadline);
    if (waitersChanged_.wait_until(lock, earliest) == std::cv_status::no_timeout)
      continue; // A new waiter (maybe sooner), a push, or the stop.
    Finished finished;
    wakeWaiters(finished);
    lock.unlock();
    runAll(finished);
    lock.lock();
  }
}

int64_t ParameterServer::appliedSteps() {
  std::lock_guard<std::mutex> lock(mutex_);
  return applied_;
}

CallStatus ParameterServer::hello(const HelloRequest &request, HelloReply &reply) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto mismatch = [](const std::string &what, int64_t theirs, int64_t ours) {
    return CallStatus::error(Code::FailedPrecondition,
                             what + " " + std::to_string(theirs) + ", the server's is " +
                                 std::to_string(ours));
  };
  if (request.artifact_checksum() != store_.model().checksum) {
    char text[96];
    std::snprintf(text, sizeof(text), "another artifact (checksum %016llx, the server's %016llx)",
                  static_cast<unsigned long long>(request.artifact_checksum()),
                  static_cast<unsigned long long>(store_.model().checksum));
    return CallStatus::error(Code::FailedPrecondition, text);
  }
  if (request.server_index() != options_.index)
    return mismatch("server index", request.server_index(), options_.index);
  if (request.server_count() != options_.servers)
    return mismatch("server count", request.server_count(), options_.servers);
  if (request.worker_count() != options_.workers)
    return mismatch("worker count", request.worker_count(), options_.workers);
  reply.set_applied_steps(applied_);
  return {};
}

CallStatus ParameterServer::readPull(const PullRequest &request, PullReply &reply) {
  RequestError error;
  store_.setStep(request.step());
  for (const ShardKey &key : request.dense())
    if (!store_.readShard(key.variable(), key.shard(), *reply.add_dense(), error))
      return CallStatus::error(Code::InvalidArgument, error.message);
  for (const RowsKey &key : request.rows()) {
    std::vector<int64_t> &ids = decoded_.pulledIds;
    decodeIds(key.ids(), ids);
    if (!store_.readRows(key.variable(), ids.data(), static_cast<int64_t>(ids.size()),
                         *reply.add_rows(), error))
      return CallStatus::error(Code::InvalidArgument, error.message);
  }
  ++pullRequests_;
  bytesReceived_ += static_cast<int64_t>(request.ByteSizeLong());
  bytesSent_ += static_cast<int64_t>(reply.ByteSizeLong());
  return {};
}

bool ParameterServer::stalenessAllows(int64_t step) const {
  if (options_.mode != SyncMode::Async || options_.staleness < 0)
    return true;
  int64_t slowest = *std::min_element(lastPushed_.begin(), lastPushed_.end());
  return step - 1 - slowest <= options_.staleness;
}

std::string ParameterServer::slowestWorker() const {
  auto it = std::min_element(lastPushed_.begin(), lastPushed_.end());
  return "worker " + std::to_string(it - lastPushed_.begin()) + " (at step " +
         std::to_string(*it) + ")";
}

void ParameterServer::pull(const PullRequest &request, PullReply *reply, Done done) {
  Finished finished;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) {
      finished.push_back({std::move(done),
                          CallStatus::error(Code::Unavailable,
                                            "the parameter server is stopping" + stopReason_)});
    } else if (stalenessAllows(request.step())) {
      finished.push_back({std::move(done), readPull(request, *reply)});
    } else {
      int64_t step = request.step();
      waiters_.push_back(Waiter{[this, step] { return stalenessAllows(step); },
                                [this, &request, reply] { return readPull(request, *reply); },
                                std::move(done), Clock::now() + options_.staleWait});
      waitersChanged_.notify_all();
    }
  }
  runAll(finished);
}

CallStatus ParameterServer::addPush(const PushRequest &request) {
  if (request.skipped()) {
    if (request.dense_size() > 0 || request.rows_size() > 0)
      return CallStatus::error(Code::InvalidArgument,
                               "worker " + std::to_string(request.worker()) + "'s push of step " +
                                   std::to_string(request.step()) +
                                   " is marked skipped but carries gradients");
    ++pushRequests_;
    bytesReceived_ += static_cast<int64_t>(request.ByteSizeLong());
    return {};
  }
  float scale = request.gradient_scale();
  if (!(scale == 0 || (std::isfinite(scale) && scale > 0)))
    return CallStatus::error(Code::InvalidArgument,
                             "worker " + std::to_string(request.worker()) + "'s push of step " +
                                 std::to_string(request.step()) + " has gradient_scale " +
                                 std::to_string(scale) + " (not a positive finite number)");
  // Every payload whole values: f32, or f16 when compressed; ids int64.
  auto ragged = [&](const std::string &bytes, size_t size, const char *what, uint32_t variable) {
    if (bytes.size() % size == 0)
      return CallStatus{};
    return CallStatus::error(
        Code::InvalidArgument,
        "worker " + std::to_string(request.worker()) + "'s push of step " +
            std::to_string(request.step()) + " has " + std::to_string(bytes.size()) +
            " bytes of " + what + " for variable " + std::to_string(variable) +
            ", not a whole number of " + std::to_string(size) + "-byte values");
  };
  for (const DenseGradient &gradient : request.dense())
    if (CallStatus status = ragged(gradient.values(), gradient.compressed() ? 2 : 4, "values",
                                   gradient.variable());
        !status.ok())
      return status;
  for (const RowsGradient &gradient : request.rows()) {
    if (CallStatus status = ragged(gradient.rows(), gradient.compressed() ? 2 : 4, "rows",
                                   gradient.variable());
        !status.ok())
      return status;
    if (CallStatus status = ragged(gradient.ids(), 8, "ids", gradient.variable()); !status.ok())
      return status;
  }
  // Scaled gradients (fp16 loss scaling) divided back as they are decoded,
  // into buffers kept from push to push (under mutex_).
  RequestError error;
  store_.setStep(request.step());
  std::vector<std::vector<float>> &dense = decoded_.dense;
  std::vector<std::vector<int64_t>> &ids = decoded_.ids;
  std::vector<std::vector<float>> &rows = decoded_.rows;
  if (dense.size() < static_cast<size_t>(request.dense_size()))
    dense.resize(static_cast<size_t>(request.dense_size()));
  if (rows.size() < static_cast<size_t>(request.rows_size())) {
    ids.resize(static_cast<size_t>(request.rows_size()));
    rows.resize(static_cast<size_t>(request.rows_size()));
  }
  // A dense gradient of plain f32 is summed straight from the message.
  auto plain = [&](const DenseGradient &gradient) {
    return !gradient.compressed() && (scale == 0 || scale == 1);
  };
  for (int i = 0; i < request.dense_size(); ++i)
    if (!plain(request.dense(i)))
      decodeFloats(request.dense(i).values(), request.dense(i).compressed(), scale, dense[i]);
  for (int i = 0; i < request.rows_size(); ++i) {
    decodeIds(request.rows(i).ids(), ids[i]);
    decodeFloats(request.rows(i).rows(), request.rows(i).compressed(), scale, rows[i]);
  }
  // Every entry is checked before any is added: a bad request changes nothing.
  for (bool commit : {false, true}) {
    for (int i = 0; i < request.dense_size(); ++i) {
      const DenseGradient &gradient = request.dense(i);
      bool fromMessage = plain(gradient);
      const void *values = fromMessage ? static_cast<const void *>(gradient.values().data())
                                       : static_cast<const void *>(dense[i].data());
      int64_t count = static_cast<int64_t>(fromMessage ? gradient.values().size() / sizeof(float)
                                                       : dense[i].size());
      if (!store_.addShardGradient(gradient.variable(), gradient.shard(), values, count, commit,
                                   error))
        return CallStatus::error(Code::InvalidArgument, error.message);
    }
    for (int i = 0; i < request.rows_size(); ++i)
      if (!store_.addRowsGradient(request.rows(i).variable(), ids[i].data(),
                                  static_cast<int64_t>(ids[i].size()), rows[i].data(),
                                  static_cast<int64_t>(rows[i].size()), commit, error))
        return CallStatus::error(Code::InvalidArgument, error.message);
  }
  ++pushRequests_;
  bytesReceived_ += static_cast<int64_t>(request.ByteSizeLong());
  return {};
}

void ParameterServer::push(const PushRequest &request, PushReply *reply, Done done) {
  Finished finished;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    int worker = request.worker();
    int64_t step = request.step();
    if (stopped_) {
      finished.push_back({std::move(done),
                          CallStatus::error(Code::Unavailable,
                                            "the parameter server is stopping" + stopReason_)});
    } else if (worker < 0 || worker >= options_.workers || step < 1) {
      finished.push_back(
          {std::move(done),
           CallStatus::error(Code::InvalidArgument,
                             "push from worker " + std::to_string(worker) + " at step " +
                                 std::to_string(step) + ": the job has " +
                                 std::to_string(options_.workers) + " workers, steps from 1")});
    } else if (options_.mode == SyncMode::Async) {
      bool duplicate = step <= lastPushed_[worker];
      CallStatus status;
      if (!duplicate) {
        status = addPush(request);
        if (status.ok()) {
          // A skipped push (fp16 gradients not finite) applies nothing but
          // counts as the worker's progress for the staleness bound.
          if (request.skipped())
            ++skipped_;
          else
            store_.apply(1.0, ++applied_);
          lastPushed_[worker] = step;
        }
      }
      reply->set_duplicate(duplicate);
      reply->set_applied_steps(applied_);
      finished.push_back({std::move(done), status});
      wakeWaiters(finished);
    } else if (step <= applied_) {
      reply->set_duplicate(true);
      reply->set_applied_steps(applied_);
      reply->set_step_skipped(recentSkips_.count(step) > 0);
      reply->set_skipped_steps(skipped_);
      finished.push_back({std::move(done), CallStatus{}});
    } else if (step > applied_ + 1) {
      finished.push_back(
          {std::move(done),
           CallStatus::error(Code::FailedPrecondition,
                             "worker " + std::to_string(worker) + " pushed step " +
                                 std::to_string(step) + " before step " +
                                 std::to_string(applied_ + 1) + " was applied")});
    } else {
      bool duplicate = pushedBy_[step].count(worker) > 0;
      CallStatus status = duplicate ? CallStatus{} : addPush(request);
      if (!status.ok()) {
        finished.push_back({std::move(done), status});
      } else {
        pushedBy_[step].insert(worker);
        if (!duplicate && request.skipped())
          skippedAt_.insert(step);
        reply->set_duplicate(duplicate);
        waitingPushes_[step].push_back({reply, std::move(done)});
        maybeApplyStep(step, finished);
      }
    }
  }
  runAll(finished);
}

void ParameterServer::maybeApplyStep(int64_t step, Finished &finished) {
  if (static_cast<int>(pushedBy_[step].size()) < options_.workers)
    return;
  // One worker's gradients not finite: so is their sum, and the step
  // changes nothing (nor counts as an optimizer step), as in one process.
  bool skip = skippedAt_.erase(step) > 0;
  if (skip) {
    store_.discardPending();
    ++skipped_;
    // What a repeated push of this step is told (the last steps only).
    recentSkips_.insert(step);
    while (recentSkips_.size() > kRecentSkips)
      recentSkips_.erase(recentSkips_.begin());
  } else {
    store_.apply(1.0 / options_.workers, step - skipped_);
  }
  applied_ = step;
  pushedBy_.erase(step);
  for (auto &[reply, done] : waitingPushes_[step]) {
    reply->set_applied_steps(applied_);
    reply->set_step_skipped(skip);
    reply->set_skipped_steps(skipped_);
    finished.push_back({std::move(done), CallStatus{}});
  }
  waitingPushes_.erase(step);
}

void ParameterServer::wakeWaiters(Finished &finished) {
  Clock::time_point now = Clock::now();
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (it->ready()) {
      finished.push_back({std::move(it->done), it->complete()});
    } else if (now >= it->deadline) {
      finished.push_back({std::move(it->done),
                          CallStatus::error(Code::DeadlineExceeded,
                                            "bounded staleness: waited for the slowest worker, " +
                                                slowestWorker() + ", too long")});
    } else {
      ++it;
      continue;
    }
    it = waiters_.erase(it);
  }
}

void ParameterServer::stats(StatsReply &reply) {
  std::lock_guard<std::mutex> lock(mutex_);
  reply.set_server_index(options_.index);
  reply.set_applied_steps(applied_);
  reply.set_skipped_steps(skipped_);
  reply.set_async(options_.mode == SyncMode::Async);
  reply.set_pull_requests(pullRequests_);
  reply.set_push_requests(pushRequests_);
  reply.set_bytes_received(bytesReceived_);
  reply.set_bytes_sent(bytesSent_);
  reply.set_seconds(std::chrono::duration<double>(Clock::now() - started_).count());
  const PsModel &model = store_.model();
  for (size_t i = 0; i < model.variables.size(); ++i) {
    VariableStats &out = *reply.add_variables();
    int ordinal = static_cast<int>(i);
    out.set_variable(model.variables[i].artifactIndex);
    out.set_name(model.variables[i].name);
    out.set_rows(store_.rowsHeld(ordinal));
    out.set_bytes(store_.bytesHeld(ordinal));
    const VariableCounters &counters = store_.counters(ordinal);
    out.set_rows_pulled(counters.rowsPulled);
    out.set_rows_pushed(counters.rowsPushed);
    out.set_hash(store_.shards(ordinal).isHash());
    out.set_rows_evicted(counters.rowsEvicted);
    out.set_gradients_dropped(counters.gradientsDropped);
    out.set_waiting_admission(store_.waitingAdmission(ordinal));
    for (auto [id, count] : store_.hottest(ordinal, 5)) {
      out.add_hottest_ids(id);
      out.add_hottest_counts(count);
    }
  }
}

void ParameterServer::shutdown(const std::string &reason) {
  Finished finished;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_)
      return;
    stopped_ = true;
    stopReason_ = reason.empty() ? "" : ": " + reason;
    CallStatus stopping =
        CallStatus::error(Code::Unavailable, "the parameter server is stopping" + stopReason_);
    for (auto &[step, replies] : waitingPushes_)
      for (auto &[reply, done] : replies)
        finished.push_back({std::move(done), stopping});
    waitingPushes_.clear();
    for (Waiter &waiter : waiters_)
      finished.push_back({std::move(waiter.done), stopping});
    waiters_.clear();
    waitersChanged_.notify_all();
  }
  runAll(finished);
}

CallStatus ParameterServer::save(const ShardSaveRequest &request, ShardSaveReply &reply) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string file = serverShardFile(options_.index, options_.servers);
  std::vector<std::pair<std::string, std::string>> metadata = {
      {"format", "kiln"},
      {"step", std::to_string(request.step())},
      {"server", std::to_string(options_.index)},
      {"servers", std::to_string(options_.servers)}};
  std::vector<checkpoint::SavedTensor> saved;
  std::string error;
  if (!checkpoint::writeTensorFile(request.directory() + "/" + file, store_.checkpointTensors(),
                                   metadata, saved, error))
    return CallStatus::error(Code::FailedPrecondition, error);
  reply.set_file(file);
  reply.set_applied_steps(applied_);
  reply.set_skipped_steps(skipped_);
  reply.set_async(options_.mode == SyncMode::Async);
  for (const checkpoint::SavedTensor &tensor : saved) {
    SavedTensor &entry = *reply.add_tensors();
    entry.set_name(tensor.name);
    entry.set_dtype(checkpoint::dtypeName(tensor.dtype));
    for (int64_t d : tensor.shape)
      entry.add_shape(d);
    entry.set_fnv1a64(tensor.fnv1a64);
  }
  return {};
}

bool savedServerCount(const std::string &manifestPath, const std::map<std::string, int64_t> &data,
                      int &servers, std::string &error) {
  auto count = data.find(kServersKey);
  if (count == data.end()) {
    error = manifestPath + ": error: the checkpoint was not saved by parameter servers (no data." +
            kServersKey + ")";
    return false;
  }
  if (count->second < 1 || count->second > kMaxServers) {
    error = manifestPath + ": error: data." + kServersKey + " is " +
            std::to_string(count->second) + ", not between 1 and " + std::to_string(kMaxServers);
    return false;
  }
  servers = static_cast<int>(count->second);
  return true;
}

bool ParameterServer::restore(const std::string &path, std::string &error) {
  std::string file = serverShardFile(options_.index, options_.servers);
  // The manifest first (no tensors): how many servers wrote it.
  checkpoint::Checkpoint manifest;
  std::set<std::string> serverFiles; // The servers' shards the manifest lists.
  auto listServerFiles = [&](const std::string &shard) {
    if (isServerFile(shard))
      serverFiles.insert(shard);
    return false;
  };
  if (!checkpoint::loadCheckpoint(path, manifest, error, listServerFiles))
    return false;
  int saved = 0;
  if (!savedServerCount(manifest.path, manifest.data, saved, error))
    return false;
  // Each of those servers wrote one file, and only they did: a count that
  // disagrees with the files would restore part of the model.
  std::set<std::string> expected;
  for (int s = 0; s < saved; ++s)
    expected.insert(serverShardFile(s, saved));
  if (serverFiles != expected) {
    std::string listed = std::to_string(serverFiles.size());
    if (!serverFiles.empty())
      listed += ": " + *serverFiles.begin() + (serverFiles.size() > 1 ? ", ..." : "");
    error = manifest.path + ": error: data." + kServersKey + " is " + std::to_string(saved) +
            ", but the manifest's server shards (" + listed + ") are not those " +
            std::to_string(saved) + " server" + (saved > 1 ? "s write (" : " writes (") +
            *expected.begin() + (saved > 1 ? " to " + *expected.rbegin() : "") + ")";
    return false;
  }
  // A step count of one mode does not carry to the other (async counts
  // every worker's pushes, sync the steps). Older checkpoints do not say.
  bool async = options_.mode == SyncMode::Async;
  auto mode = manifest.data.find(kAsyncKey);
  if (mode != manifest.data.end() && (mode->second != 0) != async) {
    error = manifest.path + ": error: the checkpoint was saved by " +
            (async ? "sync" : "async") + " parameter servers and these run " +
            (async ? "async" : "sync") + " (data." + kAsyncKey +
            "): restore it in the mode it was saved in (" + (async ? "--sync" : "--async") + ")";
    return false;
  }
  // Each server's update count; another number of servers goes on from the
  // most advanced (sync: they are equal).
  int64_t applied = -1, skipped = 0;
  for (int s = 0; s < saved; ++s) {
    auto count = manifest.data.find(appliedStepsKey(s));
    if (count == manifest.data.end() || count->second < 0) {
      error = manifest.path + ": error: data." + appliedStepsKey(s) + " is missing or negative";
      return false;
    }
    // Skipped steps (fp16) are written only where there were some.
    auto skips = manifest.data.find(skippedStepsKey(s));
    int64_t skippedHere = skips == manifest.data.end() ? 0 : skips->second;
    // Sync: the skipped steps are among the applied ones (async counts pushes).
    if (skippedHere < 0 || (!async && skippedHere > count->second)) {
      error = manifest.path + ": error: data." + skippedStepsKey(s) + " is " +
              std::to_string(skippedHere) +
              (!async ? ", not between 0 and data." + appliedStepsKey(s) + " (" +
                            std::to_string(count->second) + ")"
                      : ", negative");
      return false;
    }
    if (saved == options_.servers ? s == options_.index : true) {
      applied = std::max(applied, count->second);
      skipped = std::max(skipped, skippedHere);
    }
  }
  // Saved by as many servers: this server's own file. Otherwise every
  // server's, redistributed by this run's shard map.
  checkpoint::Checkpoint loaded;
  bool same = saved == options_.servers;
  auto wanted = [&](const std::string &shard) {
    return same ? shard == file : isServerFile(shard);
  };
  if (!checkpoint::loadCheckpoint(manifest.path, loaded, error, wanted))
    return false;
  std::string problem;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!(same ? store_.restoreTensors(loaded.tensors, problem)
             : store_.redistributeTensors(loaded.tensors, saved, problem))) {
    error = loaded.path + "/" + (same ? file : "ps-*") + ": error: " + problem;
    return false;
  }
  applied_ = applied;
  skipped_ = skipped;
  std::fill(lastPushed_.begin(), lastPushed_.end(), loaded.step);
  return true;
}

} // namespace kiln::ps
