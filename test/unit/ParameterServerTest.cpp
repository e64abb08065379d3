//===- ParameterServerTest.cpp - Parameter servers, their protocol and client -===//
//
// The shard map against TensorFlow's partitioners, hash rows independent of
// the number of servers, sync steps equal to one step at the global batch,
// duplicates applied once, async and bounded staleness, bad requests that
// change nothing, and the gRPC service with its token.
//
//===----------------------------------------------------------------------===//

#include "runtime/ps/ParameterClient.h"
#include "runtime/ps/ParameterServerService.h"
#include "runtime/ps/ShardReport.h"
#include "runtime/checkpoint/Safetensors.h"
#include "runtime/support/FloatRounding.h"

#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <set>
#include <map>
#include <random>
#include <thread>

using namespace kiln;
using namespace kiln::ps;
using namespace std::chrono_literals;

namespace {

Placement dense(Placement::Partitioner partitioner = Placement::Partitioner::None) {
  Placement placement;
  placement.partitioner = partitioner;
  return placement;
}

PsVariable variable(std::string name, uint32_t index, std::vector<int64_t> dims,
                    Placement placement) {
  PsVariable v;
  v.name = std::move(name);
  v.artifactIndex = index;
  v.dims = dims;
  v.shape.rows = dims.empty() ? 1 : dims[0];
  v.shape.rowWidth = 1;
  for (size_t i = 1; i < dims.size(); ++i)
    v.shape.rowWidth *= dims[i];
  v.placement = placement;
  v.init.kind = artifact::InitKind_Normal;
  v.init.a = 0.0;
  v.init.b = 0.5;
  v.init.seed = 7 + index;
  return v;
}

/// A model: a [10, 3] weight in 3 fixed shards, a [12, 4] table split by
/// mod, a hash table of width 4; SGD at 0.5.
PsModel smallModel(std::string optimizer = "sgd") {
  PsModel model;
  Placement fixed = dense(Placement::Partitioner::FixedShards);
  fixed.numShards = 3;
  model.variables.push_back(variable("w", 0, {10, 3}, fixed));
  Placement table = fixed;
  table.kind = Placement::Kind::Table;
  table.rowsByMod = true;
  model.variables.push_back(variable("table", 2, {12, 4}, table));
  Placement hash;
  hash.kind = Placement::Kind::Hash;
  model.variables.push_back(variable("hash", 3, {1000, 4}, hash));
  model.optimizer.kind = optimizer;
  model.optimizer.learningRate = 0.5;
  model.checksum = 0x1234;
  return model;
}

/// Servers in this process and a client per worker.
struct LocalCluster {
  LocalCluster(const PsModel &model, int servers, int workers, SyncMode mode = SyncMode::Sync,
               int64_t staleness = -1) {
    for (int s = 0; s < servers; ++s) {
      ServerOptions options;
      options.index = s;
      options.servers = servers;
      options.workers = workers;
      options.mode = mode;
      options.staleness = staleness;
      options.staleWait = 2000ms;
      this->servers.push_back(std::make_unique<ParameterServer>(model, options));
    }
    for (int w = 0; w < workers; ++w) {
      std::vector<std::unique_ptr<ServerLink>> links;
      for (int s = 0; s < servers; ++s)
        links.push_back(makeLocalServerLink(*this->servers[s], "ps:" + std::to_string(s)));
      clients.push_back(std::make_unique<ParameterClient>(model, std::move(links), w, workers));
    }
  }
  std::vector<std::unique_ptr<ParameterServer>> servers;
  std::vector<std::unique_ptr<ParameterClient>> clients;
};

std::vector<float> pullDense(ParameterClient &client, uint32_t variable, size_t count) {
  std::vector<float> values(count, -999.0f);
  std::string error;
  EXPECT_TRUE(client.pullDense(variable, values.data(), error)) << error;
  return values;
}

std::vector<float> pullRows(ParameterClient &client, uint32_t variable,
                            const std::vector<int64_t> &ids, int64_t width) {
  std::vector<float> rows(ids.size() * width, -999.0f);
  std::string error;
  EXPECT_TRUE(client.pullRows(variable, ids.data(), true, static_cast<int64_t>(ids.size()),
                              rows.data(), error))
      << error;
  return rows;
}

std::vector<float> randomValues(size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  std::vector<float> values(count);
  for (float &v : values)
    v = normal(gen);
  return values;
}

TEST(ShardMapTest, PartitionersSplitAsTensorFlow) {
  VariableShape shape{10, 3}; // 120 bytes.
  Placement fixed = dense(Placement::Partitioner::FixedShards);
  fixed.numShards = 3;
  VariableShards shards(fixed, shape, /*ordinal=*/1, /*servers=*/2);
  ASSERT_EQ(shards.shardCount(), 3);
  // TensorFlow gives the first rows % shards shards one row more.
  EXPECT_EQ(shards.shardRows(0), 4);
  EXPECT_EQ(shards.shardRows(1), 3);
  EXPECT_EQ(shards.shardBegin(2), 7);
  EXPECT_EQ(shards.shardOfRow(6), 1);
  EXPECT_EQ(shards.localRow(6), 2);
  // Round robin from the variable's ordinal.
  EXPECT_EQ(shards.serverOf(0), 1);
  EXPECT_EQ(shards.serverOf(1), 0);
  EXPECT_EQ(shards.shardsOn(1), (std::vector<int64_t>{0, 2}));

  Placement min = dense(Placement::Partitioner::MinShardBytes);
  min.minShardBytes = 40; // 120 / 40 = 3 shards, capped by the servers.
  EXPECT_EQ(resolveShardCount(min, shape, 2), 2);
  EXPECT_EQ(resolveShardCount(min, shape, 8), 3);
  min.maxShards = 1;
  EXPECT_EQ(resolveShardCount(min, shape, 8), 1);

  Placement max = dense(Placement::Partitioner::MaxShardBytes);
  max.maxShardBytes = 50; // ceil(120 / 50) = 3.
  EXPECT_EQ(resolveShardCount(max, shape, 8), 3);
  max.maxShardBytes = 1; // One row per shard at most: 10.
  EXPECT_EQ(resolveShardCount(max, shape, 64), 10);

  Placement mod = fixed;
  mod.rowsByMod = true;
  VariableShards byMod(mod, shape, 0, 3);
  EXPECT_EQ(byMod.shardOfRow(7), 1);
  EXPECT_EQ(byMod.localRow(7), 2);
  EXPECT_EQ(byMod.shardRows(0), 4); // Rows 0, 3, 6, 9.
}

TEST(ParameterServerTest, ValuesDoNotDependOnTheNumberOfServers) {
  PsModel model = smallModel();
  LocalCluster one(model, 1, 1), three(model, 3, 1);
  EXPECT_EQ(pullDense(*one.clients[0], 0, 30), pullDense(*three.clients[0], 0, 30));
  std::vector<int64_t> ids = {11, 0, 5, 11, 3};
  EXPECT_EQ(pullRows(*one.clients[0], 2, ids, 4), pullRows(*three.clients[0], 2, ids, 4));
  std::vector<int64_t> keys = {-5, 1LL << 40, 17, 17, 123456789};
  std::vector<float> hashed = pullRows(*one.clients[0], 3, keys, 4);
  EXPECT_EQ(hashed, pullRows(*three.clients[0], 3, keys, 4));
  // A repeated id has its row; different ids differ.
  EXPECT_TRUE(std::equal(hashed.begin() + 8, hashed.begin() + 12, hashed.begin() + 12));
  EXPECT_NE(std::vector<float>(hashed.begin(), hashed.begin() + 4),
            std::vector<float>(hashed.begin() + 4, hashed.begin() + 8));
  // The mod table's rows are the whole table's rows as one draw gives them.
  std::vector<float> whole(48);
  exec::initializeValues(model.variables[1].init, artifact::DType_F32,
                         model.variables[1].dims.data(), 2, 48, whole.data());
  EXPECT_EQ(pullRows(*three.clients[0], 2, {5}, 4),
            std::vector<float>(whole.begin() + 20, whole.begin() + 24));
}

TEST(ParameterServerTest, APullGroupIsOneRequestPerServer) {
  PsModel model = smallModel();
  LocalCluster single(model, 3, 1), grouped(model, 3, 1);
  std::vector<int64_t> ids = {11, 0, 5, 11, 3}, keys = {-5, 1LL << 40, 17, 17};
  std::vector<int32_t> narrow = {4, 4, 9};
  std::vector<float> w(30), table(20), hashed(16), table32(12);
  std::vector<exec::PullOrder> orders = {
      {0, w.data()},
      {2, table.data(), ids.data(), true, 5},
      {3, hashed.data(), keys.data(), true, 4},
      {2, table32.data(), narrow.data(), false, 3}};
  std::string error;
  ASSERT_TRUE(grouped.clients[0]->pull(orders, error)) << error;
  EXPECT_EQ(w, pullDense(*single.clients[0], 0, 30));
  EXPECT_EQ(table, pullRows(*single.clients[0], 2, ids, 4));
  EXPECT_EQ(hashed, pullRows(*single.clients[0], 3, keys, 4));
  EXPECT_EQ(table32, pullRows(*single.clients[0], 2, {4, 4, 9}, 4));
  std::vector<StatsReply> stats;
  ASSERT_TRUE(grouped.clients[0]->stats(stats, error)) << error;
  for (const StatsReply &reply : stats)
    EXPECT_EQ(reply.pull_requests(), 1) << "ps:" << reply.server_index();
}

/// Runs one sync step on every worker of `cluster` at once.
void syncStep(LocalCluster &cluster, int64_t step,
              const std::vector<std::vector<float>> &denseGradients,
              const std::vector<std::vector<int64_t>> &ids,
              const std::vector<std::vector<float>> &rows) {
  std::vector<std::thread> threads;
  for (size_t w = 0; w < cluster.clients.size(); ++w)
    threads.emplace_back([&, w] {
      ParameterClient &client = *cluster.clients[w];
      std::string error;
      client.beginStep(step);
      EXPECT_TRUE(client.pushDense(0, denseGradients[w].data(), error)) << error;
      EXPECT_TRUE(client.pushRows(3, ids[w].data(), true, static_cast<int64_t>(ids[w].size()),
                                  rows[w].data(), error))
          << error;
      EXPECT_TRUE(client.finishStep(error)) << error;
    });
  for (std::thread &thread : threads)
    thread.join();
}

TEST(ParameterServerTest, SyncStepAppliesTheMeanOnceForEveryServerCount) {
  PsModel model = smallModel("adam");
  std::vector<std::vector<float>> grads = {randomValues(30, 1), randomValues(30, 2)};
  std::vector<std::vector<int64_t>> ids = {{4, 9, 4}, {9, 1LL << 33}};
  std::vector<std::vector<float>> rows = {randomValues(12, 3), randomValues(8, 4)};

  // The expected values: Adam on the mean gradient, as one process would.
  LocalCluster reference(model, 1, 1);
  std::vector<float> w = pullDense(*reference.clients[0], 0, 30);
  std::vector<float> m(30, 0.0f), v(30, 0.0f), mean(30);
  for (size_t i = 0; i < 30; ++i)
    mean[i] = (grads[0][i] + grads[1][i]) / 2;
  cpu::denseApply(model.optimizer.hyperParameters(false), w.data(), {m.data(), v.data()},
                  mean.data(), 30, 0.5f, 1.0f);

  for (int servers : {1, 2, 3}) {
    LocalCluster cluster(model, servers, 2);
    std::vector<float> hashBefore = pullRows(*cluster.clients[0], 3, {9, 4, 1LL << 33}, 4);
    syncStep(cluster, 1, grads, ids, rows);
    std::vector<float> after = pullDense(*cluster.clients[1], 0, 30);
    for (size_t i = 0; i < 30; ++i)
      EXPECT_FLOAT_EQ(after[i], w[i]) << "servers " << servers << " element " << i;
    for (auto &server : cluster.servers)
      EXPECT_EQ(server->appliedSteps(), 1);
    // Every hash row moved against the sign of its summed gradient (Adam's
    // first step moves each element by about lr).
    std::vector<float> hashAfter = pullRows(*cluster.clients[0], 3, {9, 4, 1LL << 33}, 4);
    std::vector<float> sum9(4), sum4(4);
    for (int j = 0; j < 4; ++j) {
      sum4[j] = rows[0][j] + rows[0][8 + j];
      sum9[j] = rows[0][4 + j] + rows[1][j];
    }
    for (int j = 0; j < 4; ++j) {
      EXPECT_NEAR(hashAfter[j] - hashBefore[j], sum9[j] > 0 ? -0.5 : 0.5, 1e-3);
      EXPECT_NEAR(hashAfter[4 + j] - hashBefore[4 + j], sum4[j] > 0 ? -0.5 : 0.5, 1e-3);
    }
  }
}

TEST(ParameterServerTest, SyncPushWaitsForEveryWorkerAndDuplicatesApplyOnce) {
  PsModel model = smallModel();
  LocalCluster cluster(model, 1, 2);
  std::vector<float> before = pullDense(*cluster.clients[0], 0, 30);
  std::vector<float> gradient(30, 1.0f);
  PushRequest request;
  request.set_worker(0);
  request.set_step(1);
  DenseGradient &entry = *request.add_dense();
  entry.set_variable(0);
  entry.set_shard(0);
  entry.set_values(std::string(reinterpret_cast<const char *>(gradient.data()), 4 * 4 * 3));
  std::promise<CallStatus> first, repeated;
  PushReply firstReply, repeatedReply;
  cluster.servers[0]->push(request, &firstReply, [&](CallStatus s) { first.set_value(s); });
  cluster.servers[0]->push(request, &repeatedReply, [&](CallStatus s) { repeated.set_value(s); });
  std::future<CallStatus> firstDone = first.get_future();
  EXPECT_EQ(firstDone.wait_for(200ms), std::future_status::timeout)
      << "a sync push returned before the other worker pushed";
  PushRequest other = request;
  other.set_worker(1);
  PushReply otherReply;
  CallStatus otherStatus;
  cluster.servers[0]->push(other, &otherReply, [&](CallStatus s) { otherStatus = s; });
  ASSERT_EQ(firstDone.wait_for(2s), std::future_status::ready);
  EXPECT_TRUE(firstDone.get().ok());
  EXPECT_TRUE(repeated.get_future().get().ok());
  EXPECT_TRUE(repeatedReply.duplicate());
  EXPECT_FALSE(firstReply.duplicate());
  EXPECT_EQ(cluster.servers[0]->appliedSteps(), 1);
  // Shard 0 holds rows 0-3 (12 values): each moved by lr * mean(1, 1) once.
  std::vector<float> after = pullDense(*cluster.clients[1], 0, 30);
  for (int i = 0; i < 12; ++i)
    EXPECT_FLOAT_EQ(after[i], before[i] - 0.5f);
  // A push of an applied step is a duplicate, answered at once.
  PushReply late;
  CallStatus lateStatus = CallStatus::error(CallStatus::Code::Unavailable, "not called");
  cluster.servers[0]->push(other, &late, [&](CallStatus s) { lateStatus = s; });
  EXPECT_TRUE(lateStatus.ok());
  EXPECT_TRUE(late.duplicate());
  EXPECT_EQ(pullDense(*cluster.clients[1], 0, 30), after);
}

TEST(ParameterServerTest, AsyncAppliesEachPushAndStalenessBoundsTheLead) {
  PsModel model = smallModel();
  LocalCluster cluster(model, 2, 2, SyncMode::Async, /*staleness=*/0);
  std::vector<float> before = pullDense(*cluster.clients[0], 0, 30);
  std::vector<float> gradient(30, 1.0f);
  std::string error;
  ParameterClient &fast = *cluster.clients[0];
  fast.beginStep(1);
  ASSERT_TRUE(fast.pushDense(0, gradient.data(), error)) << error;
  ASSERT_TRUE(fast.finishStep(error)) << error; // Async: returns at once.
  std::vector<float> after = pullDense(*cluster.clients[1], 0, 30);
  for (int i = 0; i < 30; ++i)
    EXPECT_FLOAT_EQ(after[i], before[i] - 0.5f); // Not averaged: applied alone.
  // Staleness 0: worker 0 may not pull for step 2 before worker 1 finished step 1.
  auto pulled = std::async(std::launch::async, [&] {
    std::vector<float> values(30);
    std::string pullError;
    bool ok = fast.pullDense(0, values.data(), pullError);
    return ok;
  });
  EXPECT_EQ(pulled.wait_for(200ms), std::future_status::timeout)
      << "a pull ran ahead of the slowest worker beyond the staleness bound";
  ParameterClient &slow = *cluster.clients[1];
  slow.beginStep(1);
  ASSERT_TRUE(slow.finishStep(error)) << error;
  ASSERT_EQ(pulled.wait_for(2s), std::future_status::ready);
  EXPECT_TRUE(pulled.get());
}

/// Ids of the hash table (variable 3) the skip tests push rows of.
const std::vector<int64_t> kSkipTestIds = {5, 9};

/// Step `step` of one worker: `gradient` for variable 0 and rows of ones
/// at kSkipTestIds of the hash table, or (`skip`) a skip marker instead
/// (fp16 gradients not finite).
void pushStep(ParameterClient &client, int64_t step, const std::vector<float> &gradient,
              bool skip) {
  std::string error;
  client.beginStep(step);
  EXPECT_TRUE(client.pushDense(0, gradient.data(), error)) << error;
  std::vector<float> rows(kSkipTestIds.size() * 4, 1.0f);
  EXPECT_TRUE(client.pushRows(3, kSkipTestIds.data(), true,
                              static_cast<int64_t>(kSkipTestIds.size()), rows.data(), error))
      << error;
  if (skip)
    client.skipStep();
  EXPECT_TRUE(client.finishStep(error)) << error;
}

/// Step `step` of every worker at once; those in `skipping` skip it.
void pushStepSkipping(LocalCluster &cluster, int64_t step, const std::vector<float> &gradient,
                      const std::set<int> &skipping) {
  std::vector<std::thread> threads;
  for (size_t w = 0; w < cluster.clients.size(); ++w)
    threads.emplace_back([&, w] {
      pushStep(*cluster.clients[w], step, gradient, skipping.count(static_cast<int>(w)) > 0);
    });
  for (std::thread &thread : threads)
    thread.join();
}

// fp16 loss scaling, sync: one worker's skip marker skips the step on every
// server (as one process would: the sum of the gradients is not finite),
// every worker hears it, and the next step is the optimizer's first (its
// warm-up rate is step 1's, not step 2's).
TEST(ParameterServerTest, SyncSkipMarkerSkipsTheStepForEveryWorker) {
  PsModel model = smallModel();
  model.optimizer.schedule = "linear_warmup";
  model.optimizer.warmupSteps = 10;
  LocalCluster cluster(model, 2, 2);
  std::vector<float> before = pullDense(*cluster.clients[0], 0, 30);
  std::vector<float> hashBefore = pullRows(*cluster.clients[0], 3, kSkipTestIds, 4);
  std::vector<float> gradient(30, 1.0f);
  pushStepSkipping(cluster, 1, gradient, {1});
  EXPECT_EQ(pullDense(*cluster.clients[0], 0, 30), before);
  EXPECT_EQ(pullRows(*cluster.clients[0], 3, kSkipTestIds, 4), hashBefore);
  for (auto &client : cluster.clients) {
    EXPECT_TRUE(client->stepSkipped());
    EXPECT_EQ(client->skippedSteps(), 1);
  }
  for (auto &server : cluster.servers)
    EXPECT_EQ(server->appliedSteps(), 1);
  pushStepSkipping(cluster, 2, gradient, {});
  EXPECT_FALSE(cluster.clients[0]->stepSkipped());
  std::vector<float> after = pullDense(*cluster.clients[1], 0, 30);
  float rate = model.optimizer.learningRateAt(1);
  ASSERT_NE(rate, model.optimizer.learningRateAt(2));
  for (int i = 0; i < 30; ++i)
    EXPECT_FLOAT_EQ(after[i], before[i] - rate) << "element " << i;
  // The skipped step's rows were dropped, not kept for the next update.
  std::vector<float> hashAfter = pullRows(*cluster.clients[0], 3, kSkipTestIds, 4);
  for (size_t i = 0; i < hashAfter.size(); ++i)
    EXPECT_FLOAT_EQ(hashAfter[i], hashBefore[i] - rate) << "hash element " << i;
  std::vector<StatsReply> stats;
  std::string error;
  ASSERT_TRUE(cluster.clients[0]->stats(stats, error)) << error;
  for (const StatsReply &reply : stats) {
    EXPECT_EQ(reply.skipped_steps(), 1);
    EXPECT_NE(formatServerReport(reply).find("2 updates (1 of them skipped: fp16 gradients "
                                             "not finite)"),
              std::string::npos)
        << formatServerReport(reply);
  }
  // A skip marker that carries gradients is refused and changes nothing.
  PushRequest bad;
  bad.set_worker(0);
  bad.set_step(3);
  bad.set_skipped(true);
  DenseGradient &entry = *bad.add_dense();
  entry.set_variable(0);
  entry.set_shard(0);
  entry.set_values(std::string(reinterpret_cast<const char *>(gradient.data()), 4 * 4 * 3));
  PushReply reply;
  CallStatus status;
  cluster.servers[1]->push(bad, &reply, [&](CallStatus s) { status = s; });
  EXPECT_EQ(status.code, CallStatus::Code::InvalidArgument);
  EXPECT_NE(status.message.find("marked skipped but carries gradients"), std::string::npos)
      << status.message;
  EXPECT_EQ(cluster.servers[1]->appliedSteps(), 2);
  EXPECT_EQ(pullDense(*cluster.clients[1], 0, 30), after);
  // A repeated push of the skipped step is a duplicate and says it was skipped.
  PushRequest repeated;
  repeated.set_worker(0);
  repeated.set_step(1);
  PushReply again;
  cluster.servers[0]->push(repeated, &again, [&](CallStatus s) { status = s; });
  EXPECT_TRUE(status.ok()) << status.message;
  EXPECT_TRUE(again.duplicate());
  EXPECT_TRUE(again.step_skipped());
  EXPECT_EQ(again.skipped_steps(), 1);
}

// fp16 loss scaling: pushes carry the gradients times the scale, which the
// server divides them by (exactly: a power of 2), compressed to f16 or not;
// a scale that is not a positive finite number is refused. A gradient that
// overflows f16 only once compressed skips the step (the client's marker).
TEST(ParameterServerTest, ScaledPushesAreDividedByTheirScale) {
  PsModel model = smallModel();
  std::vector<float> gradient(30, 0.25f), scaled(30, 0.25f * 65536.0f);
  std::vector<float> expected;
  {
    LocalCluster plain(model, 1, 1);
    pushStep(*plain.clients[0], 1, gradient, /*skip=*/false);
    expected = pullDense(*plain.clients[0], 0, 30);
  }
  for (bool compressed : {false, true}) {
    LocalCluster cluster(model, 1, 1);
    cluster.clients[0]->setCompression(compressed);
    cluster.clients[0]->setGradientScale(65536.0f);
    pushStep(*cluster.clients[0], 1, scaled, /*skip=*/false);
    EXPECT_FALSE(cluster.clients[0]->stepSkipped());
    EXPECT_EQ(pullDense(*cluster.clients[0], 0, 30), expected) << "compressed " << compressed;
  }
  // What the scale is for: a gradient of 2e-8 flushes to zero in f16 (its
  // smallest value is 6e-8), times 2^16 it travels (at a rate of 1e6 the
  // update shows it: 0.02).
  PsModel fast = smallModel();
  fast.optimizer.learningRate = 1e6;
  for (float scale : {0.0f, 65536.0f}) {
    LocalCluster cluster(fast, 1, 1);
    std::vector<float> before = pullDense(*cluster.clients[0], 0, 30);
    cluster.clients[0]->setCompression(true);
    cluster.clients[0]->setGradientScale(scale);
    std::vector<float> tiny(30, 2e-8f * (scale == 0 ? 1.0f : scale));
    pushStep(*cluster.clients[0], 1, tiny, /*skip=*/false);
    std::vector<float> after = pullDense(*cluster.clients[0], 0, 30);
    for (int i = 0; i < 30; ++i)
      EXPECT_NEAR(after[i], before[i] - (scale == 0 ? 0.0f : 0.02f), 2e-5)
          << "scale " << scale << " element " << i;
  }
  LocalCluster cluster(model, 1, 1);
  std::vector<float> before = pullDense(*cluster.clients[0], 0, 30);
  cluster.clients[0]->setCompression(true);
  cluster.clients[0]->setGradientScale(65536.0f);
  std::vector<float> beyond(30, 2.0f * 65536.0f); // Finite in f32, not in f16.
  pushStep(*cluster.clients[0], 1, beyond, /*skip=*/false);
  EXPECT_TRUE(cluster.clients[0]->stepSkipped());
  EXPECT_EQ(pullDense(*cluster.clients[0], 0, 30), before);
  PushRequest bad;
  bad.set_worker(0);
  bad.set_step(2);
  bad.set_gradient_scale(-4.0f);
  PushReply reply;
  CallStatus status;
  cluster.servers[0]->push(bad, &reply, [&](CallStatus s) { status = s; });
  EXPECT_EQ(status.code, CallStatus::Code::InvalidArgument);
  EXPECT_NE(status.message.find("gradient_scale -4"), std::string::npos) << status.message;
}

// A push whose payload is not whole values (f32, f16 when compressed, int64
// ids) is refused, naming the bytes, and changes nothing: before the server
// summed plain f32 straight from the message, a stray tail was dropped.
TEST(ParameterServerTest, RaggedPayloadsAreRefused) {
  PsModel model = smallModel();
  LocalCluster cluster(model, 1, 1);
  std::vector<float> before = pullDense(*cluster.clients[0], 0, 30);
  std::vector<float> gradient(30, 1.0f);
  std::string whole(reinterpret_cast<const char *>(gradient.data()), 30 * sizeof(float));
  struct Case {
    bool compressed;
    std::string values;
    const char *expected;
  };
  const Case cases[] = {
      {false, whole + "xy", "has 122 bytes of values for variable 0, not a whole number of "
                            "4-byte values"},
      {true, std::string(61, '\0'), "has 61 bytes of values for variable 0, not a whole "
                                    "number of 2-byte values"},
  };
  for (const Case &c : cases) {
    PushRequest bad;
    bad.set_worker(0);
    bad.set_step(1);
    DenseGradient &entry = *bad.add_dense();
    entry.set_variable(0);
    entry.set_shard(0);
    entry.set_compressed(c.compressed);
    entry.set_values(c.values);
    PushReply reply;
    CallStatus status;
    cluster.servers[0]->push(bad, &reply, [&](CallStatus s) { status = s; });
    EXPECT_EQ(status.code, CallStatus::Code::InvalidArgument);
    EXPECT_NE(status.message.find(c.expected), std::string::npos) << status.message;
  }
  PushRequest badIds;
  badIds.set_worker(0);
  badIds.set_step(1);
  RowsGradient &rows = *badIds.add_rows();
  rows.set_variable(3);
  rows.set_ids(std::string(12, '\0'));
  rows.set_rows(whole);
  PushReply reply;
  CallStatus status;
  cluster.servers[0]->push(badIds, &reply, [&](CallStatus s) { status = s; });
  EXPECT_EQ(status.code, CallStatus::Code::InvalidArgument);
  EXPECT_NE(status.message.find("has 12 bytes of ids for variable 3, not a whole number of "
                                "8-byte values"),
            std::string::npos)
      << status.message;
  EXPECT_EQ(cluster.servers[0]->appliedSteps(), 0);
  EXPECT_EQ(pullDense(*cluster.clients[0], 0, 30), before);
}

// Async: a skip marker applies nothing, but the worker has made progress
// (the staleness bound lets the others on).
TEST(ParameterServerTest, AsyncSkipMarkerAppliesNothingButCountsAsProgress) {
  PsModel model = smallModel();
  LocalCluster cluster(model, 1, 2, SyncMode::Async, /*staleness=*/0);
  std::vector<float> before = pullDense(*cluster.clients[0], 0, 30);
  std::vector<float> gradient(30, 1.0f);
  ParameterClient &skipping = *cluster.clients[1];
  pushStep(skipping, 1, gradient, /*skip=*/true);
  EXPECT_TRUE(skipping.stepSkipped());
  EXPECT_EQ(skipping.skippedSteps(), 0);
  EXPECT_EQ(cluster.servers[0]->appliedSteps(), 0);
  EXPECT_EQ(pullDense(*cluster.clients[0], 0, 30), before);
  ParameterClient &applying = *cluster.clients[0];
  pushStep(applying, 1, gradient, /*skip=*/false);
  EXPECT_FALSE(applying.stepSkipped());
  // The applying worker's pull for step 2 is not held by the bound: the
  // skipping worker's marker finished its step 1.
  auto pulled = std::async(std::launch::async, [&] {
    std::vector<float> values(30);
    std::string pullError;
    return applying.pullDense(0, values.data(), pullError);
  });
  ASSERT_EQ(pulled.wait_for(2s), std::future_status::ready);
  EXPECT_TRUE(pulled.get());
  std::vector<float> after = pullDense(applying, 0, 30);
  for (int i = 0; i < 30; ++i)
    EXPECT_FLOAT_EQ(after[i], before[i] - 0.5f) << "element " << i;
  EXPECT_EQ(cluster.servers[0]->appliedSteps(), 1);
}

// A pull held by the staleness bound ends when its time is up even if no
// push arrives to look at it (every worker that would push may be held
// itself): DEADLINE_EXCEEDED naming the slowest worker, not a hang until
// the client's own deadline.
TEST(ParameterServerTest, HeldPullEndsAtItsDeadlineWithoutAPush) {
  // Declared before the server: its destructor may still complete the pull.
  PullRequest request;
  PullReply reply;
  PushReply pushed;
  std::promise<CallStatus> held;
  ServerOptions options;
  options.workers = 2;
  options.mode = SyncMode::Async;
  options.staleness = 0;
  options.staleWait = 300ms;
  ParameterServer server(smallModel(), options);
  PushRequest push; // Worker 0 finishes step 1 (an empty push); worker 1 nothing.
  push.set_worker(0);
  push.set_step(1);
  server.push(push, &pushed, [](CallStatus) {});
  request.set_worker(0);
  request.set_step(3); // Two steps ahead of worker 1.
  ShardKey &key = *request.add_dense();
  key.set_variable(0);
  key.set_shard(0);
  auto start = std::chrono::steady_clock::now();
  server.pull(request, &reply, [&](CallStatus s) { held.set_value(s); });
  std::future<CallStatus> done = held.get_future();
  ASSERT_EQ(done.wait_for(5s), std::future_status::ready) << "the held pull never ended";
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
  CallStatus status = done.get();
  EXPECT_EQ(status.code, CallStatus::Code::DeadlineExceeded);
  EXPECT_NE(status.message.find(
                "bounded staleness: waited for the slowest worker, worker 1 (at step 0)"),
            std::string::npos)
      << status.message;
}

TEST(ParameterServerTest, StaleWaitEndsBeforeTheClientsDeadline) {
  EXPECT_EQ(staleWaitWithin(300000ms), 295000ms);
  EXPECT_EQ(staleWaitWithin(2000ms), 1800ms);
}

TEST(ParameterServerTest, BadRequestsChangeNothing) {
  PsModel model = smallModel();
  LocalCluster cluster(model, 1, 1);
  std::vector<float> tableBefore = pullRows(*cluster.clients[0], 2, {0, 1, 2}, 4);
  std::string error;
  std::vector<float> row(4, 1.0f);
  int64_t outside = 12;
  std::vector<float> out(4);
  EXPECT_FALSE(cluster.clients[0]->pullRows(2, &outside, true, 1, out.data(), error));
  EXPECT_NE(error.find("id 12 is outside table @table of 12 rows"), std::string::npos) << error;
  EXPECT_FALSE(cluster.clients[0]->pullDense(9, out.data(), error));
  EXPECT_NE(error.find("variable #9"), std::string::npos) << error;

  // A request whose second entry is bad: the first is not applied either.
  PushRequest request;
  request.set_worker(0);
  request.set_step(1);
  RowsGradient &good = *request.add_rows();
  good.set_variable(2);
  int64_t id = 1;
  good.set_ids(std::string(reinterpret_cast<const char *>(&id), 8));
  good.set_rows(std::string(reinterpret_cast<const char *>(row.data()), 16));
  RowsGradient &bad = *request.add_rows();
  bad = good;
  int64_t negative = -3;
  bad.set_ids(std::string(reinterpret_cast<const char *>(&negative), 8));
  PushReply reply;
  CallStatus status;
  cluster.servers[0]->push(request, &reply, [&](CallStatus s) { status = s; });
  EXPECT_EQ(status.code, CallStatus::Code::InvalidArgument);
  EXPECT_NE(status.message.find("id -3 of @table is outside"), std::string::npos)
      << status.message;
  EXPECT_EQ(cluster.servers[0]->appliedSteps(), 0);
  EXPECT_EQ(pullRows(*cluster.clients[0], 2, {0, 1, 2}, 4), tableBefore);
}

TEST(ParameterServerTest, StatisticsCountRowsAndBytesPerServer) {
  PsModel model = smallModel("adagrad");
  LocalCluster cluster(model, 2, 1);
  std::vector<int64_t> keys;
  for (int64_t k = 0; k < 50; ++k)
    keys.push_back(k * 7919);
  pullRows(*cluster.clients[0], 3, keys, 4);
  pullRows(*cluster.clients[0], 3, {7919}, 4); // Pulled twice: the hottest.
  // A fixed table split by mod over 2 servers counts its ids too (a repeat
  // within one pull counts once: ids travel unique).
  pullRows(*cluster.clients[0], 2, {9, 9, 2}, 4);
  pullRows(*cluster.clients[0], 2, {9}, 4);
  pullRows(*cluster.clients[0], 2, {2, 11}, 4);
  std::vector<StatsReply> stats;
  std::string error;
  ASSERT_TRUE(cluster.clients[0]->stats(stats, error)) << error;
  ASSERT_EQ(stats.size(), 2u);
  int64_t hashRows = 0, weightRows = 0;
  for (const StatsReply &reply : stats)
    for (const VariableStats &v : reply.variables()) {
      if (v.name() == "hash") {
        hashRows += v.rows();
        EXPECT_EQ(v.bytes(), v.rows() * 4 * 4 * 2); // Values and Adagrad's accumulator.
      }
      if (v.name() == "w")
        weightRows += v.rows();
    }
  EXPECT_EQ(hashRows, 50);
  EXPECT_EQ(weightRows, 10);
  bool foundHottest = false;
  for (const StatsReply &reply : stats)
    for (const VariableStats &v : reply.variables())
      if (v.name() == "hash" && v.hottest_ids_size() > 0 && v.hottest_ids(0) == 7919) {
        EXPECT_EQ(v.hottest_counts(0), 2);
        foundHottest = true;
      }
  EXPECT_TRUE(foundHottest);
  std::map<int64_t, int64_t> tableCounts;
  for (const StatsReply &reply : stats)
    for (const VariableStats &v : reply.variables())
      if (v.name() == "table")
        for (int i = 0; i < v.hottest_ids_size(); ++i)
          tableCounts[v.hottest_ids(i)] = v.hottest_counts(i);
  EXPECT_EQ(tableCounts, (std::map<int64_t, int64_t>{{2, 2}, {9, 2}, {11, 1}}));
}

/// An embedding bag's padding id -1, in a fixed and a hash table: a zero row
/// pulled, nothing pushed, no request and no row on any server; any other
/// negative id in a fixed table is still refused.
TEST(ParameterServerTest, PaddingIdsPullZeroRowsAndPushNothing) {
  PsModel model = smallModel();
  LocalCluster cluster(model, 2, 1), reference(model, 2, 1);
  ParameterClient &client = *cluster.clients[0];
  std::vector<float> rows = pullRows(client, 2, {3, -1, 7, -1}, 4);
  std::vector<float> zeros(4, 0.0f);
  EXPECT_EQ(std::vector<float>(rows.begin() + 4, rows.begin() + 8), zeros);
  EXPECT_EQ(std::vector<float>(rows.begin() + 12, rows.end()), zeros);
  EXPECT_EQ(std::vector<float>(rows.begin(), rows.begin() + 4),
            pullRows(*reference.clients[0], 2, {3}, 4));
  std::vector<float> hashed = pullRows(client, 3, {-1, 17}, 4);
  EXPECT_EQ(std::vector<float>(hashed.begin(), hashed.begin() + 4), zeros);

  // One sync step: the padding rows' gradients (nonzero here) go nowhere.
  std::vector<int64_t> ids = {3, -1}, keys = {-1, 17};
  std::vector<float> gradient = {1, 1, 1, 1, 5, 5, 5, 5};
  std::string error;
  client.beginStep(1);
  ASSERT_TRUE(client.pushRows(2, ids.data(), true, 2, gradient.data(), error)) << error;
  ASSERT_TRUE(client.pushRows(3, keys.data(), true, 2, gradient.data(), error)) << error;
  ASSERT_TRUE(client.finishStep(error)) << error;
  std::vector<float> before = pullRows(*reference.clients[0], 2, {3, 0}, 4);
  std::vector<float> after = pullRows(client, 2, {3, 0}, 4);
  for (int j = 0; j < 4; ++j) {
    EXPECT_FLOAT_EQ(after[j], before[j] - 0.5f) << "row 3 takes its own gradient";
    EXPECT_EQ(after[4 + j], before[4 + j]) << "row 0 takes none";
  }
  std::vector<float> hashAfter = pullRows(client, 3, {17}, 4);
  EXPECT_FLOAT_EQ(hashAfter[0], hashed[4] - 0.5f * 5.0f);

  std::vector<StatsReply> stats;
  ASSERT_TRUE(client.stats(stats, error)) << error;
  int64_t hashRows = 0;
  for (const StatsReply &reply : stats)
    for (const VariableStats &v : reply.variables())
      if (v.name() == "hash") {
        hashRows += v.rows();
        for (int64_t id : v.hottest_ids())
          EXPECT_NE(id, -1) << "the padding id became a key";
      }
  EXPECT_EQ(hashRows, 1);

  std::vector<int64_t> bad = {2, -2};
  std::vector<float> out(8);
  EXPECT_FALSE(client.pullRows(2, bad.data(), true, 2, out.data(), error));
  EXPECT_EQ(error, "id -2 is outside table @table of 12 rows");
}

/// Async prefetch: a pull sent during step 1 for step 2 serves step 2's
/// pull of the same orders (the values as they were when it was sent), is
/// not taken by step 1's own pull or by step 2's pull of other ids, and
/// refuses ids a pull would refuse.
TEST(ParameterServerTest, PrefetchedPullsServeTheNextStepOnly) {
  PsModel model = smallModel();
  LocalCluster cluster(model, 2, 1, SyncMode::Async);
  ParameterClient &client = *cluster.clients[0];
  std::vector<int64_t> ids = {5, 11, -1, 5};
  std::vector<float> w(30), rows(16);
  std::vector<exec::PullOrder> orders = {{0, w.data()}, {2, rows.data(), ids.data(), true, 4}};
  std::string error;
  client.beginStep(1);
  std::vector<float> before = pullRows(client, 2, {5, 11}, 4);
  ASSERT_TRUE(client.prefetch(orders, error)) << error;
  ASSERT_TRUE(client.pull(orders, error)) << error; // Step 1's own: not the prefetch.
  EXPECT_EQ(client.prefetchHits(), 0);
  // Step 1 moves row 5 and 11; the prefetch was sent before.
  std::vector<int64_t> pushed = {5, 11};
  std::vector<float> gradient(8, 1.0f);
  ASSERT_TRUE(client.pushRows(2, pushed.data(), true, 2, gradient.data(), error)) << error;
  ASSERT_TRUE(client.finishStep(error)) << error;
  std::fill(rows.begin(), rows.end(), -999.0f);
  ASSERT_TRUE(client.pull(orders, error)) << error;
  EXPECT_EQ(client.prefetchHits(), 1);
  EXPECT_EQ(std::vector<float>(rows.begin(), rows.begin() + 4),
            std::vector<float>(before.begin(), before.begin() + 4));
  EXPECT_EQ(std::vector<float>(rows.begin() + 4, rows.begin() + 8),
            std::vector<float>(before.begin() + 4, before.end()));
  EXPECT_EQ(std::vector<float>(rows.begin() + 8, rows.begin() + 12), std::vector<float>(4, 0.0f));
  EXPECT_EQ(pullDense(*cluster.clients[0], 0, 30), w);
  // A pull of other ids asks afresh; the prefetch no pull of its step took
  // is dropped once the step is over.
  ASSERT_TRUE(client.finishStep(error)) << error;
  ASSERT_TRUE(client.prefetch(orders, error)) << error;
  ASSERT_TRUE(client.finishStep(error)) << error;
  std::vector<int64_t> other = {3};
  std::vector<float> row(4, -999.0f);
  ASSERT_TRUE(client.pull({{2, row.data(), other.data(), true, 1}}, error)) << error;
  EXPECT_EQ(row, pullRows(client, 2, {3}, 4));
  EXPECT_EQ(client.prefetchHits(), 1);
  EXPECT_EQ(client.prefetchMisses(), 0);
  ASSERT_TRUE(client.finishStep(error)) << error;
  pullRows(client, 2, {3}, 4);
  EXPECT_EQ(client.prefetchMisses(), 1);
  std::vector<int64_t> outside = {12};
  EXPECT_FALSE(client.prefetch({{2, row.data(), outside.data(), true, 1}}, error));
  EXPECT_EQ(error, "id 12 is outside table @table of 12 rows");
}

TEST(ParameterServiceTest, GrpcRoundTripChecksTokenAndArtifact) {
  PsModel model = smallModel();
  ServerOptions options;
  ParameterServer server(model, options);
  ServiceOptions serviceOptions;
  serviceOptions.listenAddress = "127.0.0.1:0";
  serviceOptions.token = "secret";
  std::string error;
  std::unique_ptr<ParameterServerService> service =
      ParameterServerService::start(server, serviceOptions, error);
  ASSERT_TRUE(service) << error;
  std::string address = "127.0.0.1:" + std::to_string(service->port());

  auto client = [&](const std::string &token, const PsModel &m) {
    std::vector<std::unique_ptr<ServerLink>> links;
    links.push_back(makeGrpcServerLink(address, "ps:0", token, {}, 5000ms));
    return std::make_unique<ParameterClient>(m, std::move(links), 0, 1);
  };
  auto good = client("secret", model);
  ASSERT_TRUE(good->connect(2000ms, error)) << error;
  std::vector<float> before = pullDense(*good, 0, 30);
  std::vector<float> gradient(30, 2.0f);
  good->beginStep(1);
  ASSERT_TRUE(good->pushDense(0, gradient.data(), error)) << error;
  ASSERT_TRUE(good->finishStep(error)) << error;
  std::vector<float> after = pullDense(*good, 0, 30);
  for (int i = 0; i < 30; ++i)
    EXPECT_FLOAT_EQ(after[i], before[i] - 1.0f);

  auto wrong = client("guess", model);
  EXPECT_FALSE(wrong->connect(2000ms, error));
  EXPECT_NE(error.find("ps:0 at " + address + " refused worker 0: wrong cluster token"),
            std::string::npos)
      << error;
  PsModel other = model;
  other.checksum = 0x9999;
  auto mismatched = client("secret", other);
  EXPECT_FALSE(mismatched->connect(2000ms, error));
  EXPECT_NE(error.find("another artifact"), std::string::npos) << error;
}

TEST(ParameterServiceTest, AnUnreachableServerIsNamed) {
  PsModel model = smallModel();
  std::vector<std::unique_ptr<ServerLink>> links;
  // A port nothing listens on (bound and closed by the test's own server).
  std::string address;
  {
    ParameterServer server(model, ServerOptions());
    ServiceOptions options;
    options.listenAddress = "127.0.0.1:0";
    std::string error;
    auto service = ParameterServerService::start(server, options, error);
    ASSERT_TRUE(service) << error;
    address = "127.0.0.1:" + std::to_string(service->port());
  }
  links.push_back(makeGrpcServerLink(address, "ps:3", "", {}, 500ms));
  ParameterClient client(model, std::move(links), 0, 1);
  std::string error;
  std::vector<float> out(30);
  EXPECT_FALSE(client.pullDense(0, out.data(), error));
  EXPECT_NE(error.find("ps:3 at " + address + ": pull for step 1 failed"), std::string::npos)
      << error;
}

} // namespace

namespace {
TEST(ParameterServerTest, TrainingDoesNotDependOnTheServerCount) {
  for (std::string optimizer : {"sgd", "momentum", "adagrad", "adam"}) {
    PsModel model = smallModel(optimizer);
    std::vector<std::vector<float>> results;
    for (int servers : {1, 2, 3}) {
      LocalCluster cluster(model, servers, 1);
      std::vector<int64_t> keys = {4, 9, 1LL << 33, 77, 5};
      for (int64_t step = 1; step <= 3; ++step) {
        pullRows(*cluster.clients[0], 3, keys, 4);
        std::vector<std::vector<float>> grads = {randomValues(30, step)};
        std::vector<std::vector<int64_t>> ids = {{keys[step], keys[step + 1], 4}};
        std::vector<std::vector<float>> rows = {randomValues(12, 10 + step)};
        syncStep(cluster, step, grads, ids, rows);
      }
      std::vector<float> values = pullRows(*cluster.clients[0], 3, keys, 4);
      std::vector<float> w = pullDense(*cluster.clients[0], 0, 30);
      values.insert(values.end(), w.begin(), w.end());
      results.push_back(values);
    }
    EXPECT_EQ(results[0], results[1]) << optimizer;
    EXPECT_EQ(results[0], results[2]) << optimizer;
  }
}
} // namespace

namespace {
/// The store's checkpoint tensors as a loader returns them.
std::vector<checkpoint::LoadedTensor> loaded(const ShardStore &store) {
  std::vector<checkpoint::LoadedTensor> out;
  for (const checkpoint::TensorRef &ref : store.checkpointTensors()) {
    const uint8_t *bytes = static_cast<const uint8_t *>(ref.data);
    out.push_back({ref.name, ref.dtype, ref.shape, std::vector<uint8_t>(bytes, bytes + ref.bytes)});
  }
  return out;
}

TEST(ShardCheckpointTest, RestoresThePartAndRefusesAnyOther) {
  PsModel model = smallModel("adam");
  ShardStore store(model, 0, 2);
  RequestError requestError;
  std::string out;
  std::vector<int64_t> ids;
  for (int64_t id = 0; id < 40 && ids.size() < 3; ++id)
    if (store.shards(2).serverOfId(id) == 0)
      ids.push_back(id);
  store.setStep(1);
  ASSERT_TRUE(store.readRows(3, ids.data(), 3, out, requestError)) << requestError.message;
  std::vector<float> rows = randomValues(12, 5);
  ASSERT_TRUE(store.addRowsGradient(3, ids.data(), 3, rows.data(), 12, true, requestError))
      << requestError.message;
  store.apply(1.0, 1);
  std::vector<checkpoint::LoadedTensor> saved = loaded(store);
  std::set<std::string> names;
  for (const auto &tensor : saved)
    names.insert(tensor.name);
  // Server 0 holds w's shards 0 and 2 (round robin from ordinal 0) and its
  // hash rows.
  EXPECT_TRUE(names.count("w/part-0") && names.count("w/part-0/slot-1") &&
              names.count("hash/hash-0/ids") && names.count("hash/hash-0/last_seen"))
      << names.size() << " tensors, first " << *names.begin();

  ShardStore fresh(model, 0, 2);
  std::string error;
  ASSERT_TRUE(fresh.restoreTensors(saved, error)) << error;
  std::vector<checkpoint::LoadedTensor> again = loaded(fresh);
  ASSERT_EQ(again.size(), saved.size());
  for (size_t i = 0; i < saved.size(); ++i)
    EXPECT_EQ(again[i].data, saved[i].data) << saved[i].name;
  std::string first, second;
  ASSERT_TRUE(store.readRows(3, ids.data(), 3, first, requestError));
  ASSERT_TRUE(fresh.readRows(3, ids.data(), 3, second, requestError));
  EXPECT_EQ(first, second);

  auto refused = [&](std::vector<checkpoint::LoadedTensor> tensors) {
    ShardStore other(model, 0, 2);
    std::string problem;
    EXPECT_FALSE(other.restoreTensors(tensors, problem));
    return problem;
  };
  std::vector<checkpoint::LoadedTensor> missing = saved;
  missing.erase(missing.begin());
  EXPECT_EQ(refused(missing), "tensor '" + saved[0].name + "' of server 0 is not in the checkpoint");
  std::vector<checkpoint::LoadedTensor> reshaped = saved;
  reshaped[0].shape = {1, 3};
  reshaped[0].data.resize(12);
  EXPECT_EQ(refused(reshaped), "tensor '" + saved[0].name + "' is F32 [1, 3] in the checkpoint, "
                               "server 0 holds F32 [4, 3]");
  std::vector<checkpoint::LoadedTensor> extra = saved;
  extra.push_back({"w/part-1", checkpoint::DType::F32, {3, 3}, std::vector<uint8_t>(36)});
  EXPECT_EQ(refused(extra), "tensor 'w/part-1' is not held by server 0");
  std::vector<checkpoint::LoadedTensor> repeated = saved;
  for (auto &tensor : repeated)
    if (tensor.name == "hash/hash-0/ids")
      std::memcpy(tensor.data.data() + 8, tensor.data.data(), 8);
  EXPECT_NE(refused(repeated).find("tensor 'hash/hash-0/ids': id"), std::string::npos);
}
} // namespace

namespace {
/// Rows of hash table 3 (width 4) at `ids`, as floats.
std::vector<float> hashRows(ShardStore &store, const std::vector<int64_t> &ids) {
  std::string out;
  RequestError error;
  EXPECT_TRUE(store.readRows(3, ids.data(), static_cast<int64_t>(ids.size()), out, error))
      << error.message;
  std::vector<float> rows(out.size() / sizeof(float));
  std::memcpy(rows.data(), out.data(), out.size());
  return rows;
}

TEST(HashPolicyTest, AdmitsAfterKPullsAndDropsEarlierGradients) {
  PsModel model = smallModel();
  ShardStore store(model, 0, 1, HashPolicy{3, 0, 0});
  ShardStore eager(model, 0, 1);
  std::vector<float> first = hashRows(eager, {42});
  RequestError error;
  std::vector<float> gradient = {1, 1, 1, 1};
  int64_t id = 42;
  for (int pull = 1; pull <= 2; ++pull) {
    EXPECT_EQ(hashRows(store, {42}), first) << "pull " << pull;
    EXPECT_EQ(store.rowsHeld(2), 0) << "pull " << pull;
    ASSERT_TRUE(store.addRowsGradient(3, &id, 1, gradient.data(), 4, true, error));
    store.apply(1.0, pull);
  }
  EXPECT_EQ(store.waitingAdmission(2), 1);
  EXPECT_EQ(store.counters(2).gradientsDropped, 2);
  EXPECT_EQ(hashRows(store, {42}), first); // The third pull admits it.
  EXPECT_EQ(store.rowsHeld(2), 1);
  EXPECT_EQ(store.waitingAdmission(2), 0);
  ASSERT_TRUE(store.addRowsGradient(3, &id, 1, gradient.data(), 4, true, error));
  store.apply(1.0, 3);
  std::vector<float> moved = hashRows(store, {42});
  for (int j = 0; j < 4; ++j)
    EXPECT_FLOAT_EQ(moved[j], first[j] - 0.5f); // SGD at 0.5.
}

TEST(HashPolicyTest, EvictsByAgeAndByFrequencyKeepingTheRestIntact) {
  PsModel model = smallModel();
  ShardStore store(model, 0, 1, HashPolicy{0, 2, 3});
  ShardStore reference(model, 0, 1);
  // Step 1 pulls ids 1..5; steps 2..4 pull 2 and 4 (4 twice as often).
  for (int64_t step = 1; step <= 4; ++step) {
    store.setStep(step);
    std::vector<int64_t> ids = step == 1 ? std::vector<int64_t>{1, 2, 3, 4, 5}
                                         : std::vector<int64_t>{4, 2, 4};
    hashRows(store, ids);
    store.apply(1.0, step);
    // At most 3 rows: at step 1 all are as cold and the smallest ids, 1
    // and 2, go; at step 2 (2 is back) 3 goes, the oldest of the least
    // pulled.
    EXPECT_EQ(store.rowsHeld(2), step < 4 ? 3 : 2) << "step " << step;
  }
  // At step 4, 5 (untouched since step 1) is older than the TTL of 2.
  EXPECT_EQ(store.counters(2).rowsEvicted, 4);
  // The survivors kept their values (moved rows were moved whole).
  EXPECT_EQ(hashRows(store, {2, 4}), hashRows(reference, {2, 4}));
  // An evicted id comes back with its first value.
  EXPECT_EQ(hashRows(store, {1}), hashRows(reference, {1}));
}
} // namespace

namespace {
TEST(ParameterServerTest, CompressedPushesApplyTheF16Gradient) {
  PsModel model = smallModel();
  LocalCluster cluster(model, 2, 1);
  cluster.clients[0]->setCompression(true);
  std::vector<float> before = pullDense(*cluster.clients[0], 0, 30);
  std::vector<float> gradient = randomValues(30, 9);
  gradient[0] = 1.0f + 1.0f / 4096; // Not an f16: rounds to 1.
  std::string error;
  cluster.clients[0]->beginStep(1);
  ASSERT_TRUE(cluster.clients[0]->pushDense(0, gradient.data(), error)) << error;
  ASSERT_TRUE(cluster.clients[0]->finishStep(error)) << error;
  std::vector<float> after = pullDense(*cluster.clients[0], 0, 30);
  for (size_t i = 0; i < 30; ++i)
    EXPECT_EQ(after[i], before[i] - 0.5f * f16ToFloat(roundToF16(gradient[i]))) << i;
  EXPECT_EQ(after[0], before[0] - 0.5f);
}
} // namespace

namespace {
TEST(ShardCheckpointTest, RedistributesOntoAnotherNumberOfServers) {
  PsModel model = smallModel("adam");
  // Two servers after a step, saved: every part of both.
  LocalCluster two(model, 2, 1);
  std::vector<int64_t> keys = {4, 9, 1LL << 33, 77, 5, -3};
  pullRows(*two.clients[0], 3, keys, 4);
  syncStep(two, 1, {randomValues(30, 1)}, {{4, 9, 77}}, {randomValues(12, 2)});
  std::vector<checkpoint::LoadedTensor> saved;
  for (int s = 0; s < 2; ++s) {
    ShardSaveRequest request;
    request.set_directory(::testing::TempDir());
    request.set_step(1);
    ShardSaveReply reply;
    ASSERT_TRUE(two.servers[s]->save(request, reply).ok());
    checkpoint::SafetensorsReader reader;
    std::string error;
    ASSERT_TRUE(reader.open(::testing::TempDir() + "/" + reply.file(), error)) << error;
    for (const checkpoint::ShardTensor &tensor : reader.tensors()) {
      checkpoint::LoadedTensor loaded{tensor.name, tensor.dtype, tensor.shape, {}};
      ASSERT_TRUE(reader.read(tensor, loaded.data, error)) << error;
      saved.push_back(std::move(loaded));
    }
  }
  std::vector<float> w = pullDense(*two.clients[0], 0, 30);
  std::vector<float> hashed = pullRows(*two.clients[0], 3, keys, 4);
  for (int servers : {1, 3}) {
    std::vector<std::unique_ptr<ShardStore>> stores;
    for (int s = 0; s < servers; ++s) {
      ShardStore store(model, s, servers);
      std::string error;
      ASSERT_TRUE(store.redistributeTensors(saved, 2, error)) << error;
      stores.push_back(std::make_unique<ShardStore>(std::move(store)));
    }
    // Each new store answers its part as the two servers did (w's first
    // column of every row it holds; the hash rows whose ids it now owns).
    for (int s = 0; s < servers; ++s) {
      RequestError error;
      for (int64_t k : stores[s]->shards(0).shardsOn(s)) {
        std::string out;
        ASSERT_TRUE(stores[s]->readShard(0, static_cast<uint32_t>(k), out, error));
        const VariableShards &map = stores[s]->shards(0);
        for (int64_t r = 0; r < map.shardRows(k); ++r) {
          float value;
          std::memcpy(&value, out.data() + r * 3 * sizeof(float), sizeof value);
          EXPECT_EQ(value, w[(map.shardBegin(k) + r) * 3]) << servers << " servers, shard " << k;
        }
      }
      for (size_t i = 0; i < keys.size(); ++i) {
        if (stores[s]->shards(2).serverOfId(keys[i]) != s)
          continue;
        EXPECT_EQ(hashRows(*stores[s], {keys[i]}),
                  std::vector<float>(hashed.begin() + 4 * i, hashed.begin() + 4 * i + 4))
            << servers << " servers, id " << keys[i];
      }
    }
  }
  // A part missing: named.
  std::vector<checkpoint::LoadedTensor> partial(saved.begin() + 1, saved.end());
  ShardStore store(model, 0, 3);
  std::string error;
  EXPECT_FALSE(store.redistributeTensors(partial, 2, error));
  EXPECT_NE(error.find("is not in the checkpoint"), std::string::npos) << error;
}
} // namespace
