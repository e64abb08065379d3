//===- ClientPull.cpp - A worker's pulls, and pulls prefetched ------------===//
//
// A pull group goes out as one request per server holding a part of it
// (PullPlan): whole variables by shards, table rows by the group's unique
// ids (the padding id -1 is no id: it gets a zero row and is never sent).
// startPull() sends a plan and returns; finishPull() waits for the replies
// and scatters them. pull() does both at once, unless prefetch() already
// sent the same plan for this step: then it only waits.
//
//===----------------------------------------------------------------------===//

#include "runtime/ps/ParameterClient.h"

#include <cstring>

namespace kiln::ps {

ParameterClient::~ParameterClient() { dropPrefetched(); }

bool ParameterClient::planPull(const std::vector<exec::PullOrder> &orders, int64_t step,
                               PullPlan &plan, std::string &error) const {
  plan.step = step;
  plan.requests.assign(servers_.size(), PullRequest());
  plan.specs.assign(orders.size(), nullptr);
  plan.slots.assign(orders.size(), {});
  plan.uniqueCounts.assign(orders.size(), 0);
  plan.ids.assign(orders.size(), {});
  plan.whole.assign(orders.size(), false);
  plan.variables.clear();
  for (size_t o = 0; o < orders.size(); ++o) {
    const exec::PullOrder &order = orders[o];
    plan.variables.push_back(order.variable);
    const PsVariable *spec = plan.specs[o] = variable(order.variable, error);
    if (!spec)
      return false;
    const VariableShards &shards = shardsOf(*spec);
    if (!order.ids) {
      plan.whole[o] = true;
      for (int64_t k = 0; k < shards.shardCount(); ++k) {
        int server = shards.serverOf(k);
        ShardKey &key = *plan.requests[server].add_dense();
        key.set_variable(order.variable);
        key.set_shard(static_cast<uint32_t>(k));
        plan.denseParts.push_back({o, server, plan.requests[server].dense_size() - 1, k, {}});
      }
      continue;
    }
    std::vector<int64_t> &all = plan.ids[o] = widenIds(order.ids, order.ids64, order.count);
    // Unique ids in order of first appearance, each asked of its server once.
    cpu::UniqueIds &uniqueOf = scratch_.unique;
    uniqueOf.reset(all.size());
    std::vector<std::vector<int64_t>> &idsFor = scratch_.idsFor;
    idsFor.resize(servers_.size());
    for (std::vector<int64_t> &forServer : idsFor)
      forServer.clear();
    std::vector<std::vector<int64_t>> uniquesFor(servers_.size());
    plan.slots[o].resize(all.size());
    for (size_t i = 0; i < all.size(); ++i) {
      int64_t id = all[i];
      if (id == kPaddingId) {
        plan.slots[o][i] = -1; // A zero row.
        continue;
      }
      auto [unique, first] = uniqueOf.insert(id);
      plan.slots[o][i] = unique;
      if (!first)
        continue;
      ++plan.uniqueCounts[o];
      if (!shards.isHash() && (id < 0 || id >= spec->shape.rows)) {
        error = "id " + std::to_string(id) + " is outside table @" + spec->name + " of " +
                std::to_string(spec->shape.rows) + " rows";
        return false;
      }
      int server = shards.isHash() ? shards.serverOfId(id) : shards.serverOf(shards.shardOfRow(id));
      idsFor[server].push_back(id);
      uniquesFor[server].push_back(unique);
    }
    for (size_t server = 0; server < servers_.size(); ++server) {
      if (idsFor[server].empty())
        continue;
      RowsKey &key = *plan.requests[server].add_rows();
      key.set_variable(order.variable);
      key.set_ids(bytesOf(idsFor[server].data(), idsFor[server].size() * sizeof(int64_t)));
      plan.rowsParts.push_back({o, static_cast<int>(server), plan.requests[server].rows_size() - 1,
                                0, std::move(uniquesFor[server])});
    }
  }
  return true;
}

std::unique_ptr<ParameterClient::PullCalls> ParameterClient::startPull(PullPlan plan) {
  auto calls = std::make_unique<PullCalls>();
  calls->plan = std::move(plan);
  std::vector<PullRequest> &requests = calls->plan.requests;
  calls->replies.assign(requests.size(), PullReply());
  calls->statuses.assign(requests.size(), CallStatus());
  int count = 0;
  for (const PullRequest &request : requests)
    count += request.dense_size() + request.rows_size() > 0;
  calls->latch = std::make_unique<Latch>(count);
  PullCalls *raw = calls.get();
  for (size_t s = 0; s < requests.size(); ++s) {
    if (requests[s].dense_size() + requests[s].rows_size() == 0)
      continue;
    requests[s].set_worker(worker_);
    requests[s].set_step(raw->plan.step);
    servers_[s]->pull(requests[s], &raw->replies[s], [raw, s](CallStatus status) {
      raw->statuses[s] = std::move(status);
      raw->latch->countDown();
    });
  }
  return calls;
}

bool ParameterClient::finishPull(PullCalls &calls, const std::vector<exec::PullOrder> &orders,
                                 std::string &error) const {
  calls.latch->wait();
  const PullPlan &plan = calls.plan;
  for (size_t s = 0; s < calls.statuses.size(); ++s)
    if (!calls.statuses[s].ok()) {
      error = servers_[s]->name() + ": pull for step " + std::to_string(plan.step) +
              " failed: " + calls.statuses[s].message;
      return false;
    }
  auto wrongSize = [&](const PullPart &part, size_t got, const std::string &what) {
    error = servers_[part.server]->name() + " sent " + std::to_string(got) + " bytes for " +
            what + " of @" + plan.specs[part.order]->name;
    return false;
  };
  for (const PullPart &part : plan.denseParts) {
    const VariableShards &shards = shardsOf(*plan.specs[part.order]);
    int64_t width = plan.specs[part.order]->shape.rowWidth, rows = shards.shardRows(part.shard);
    size_t rowBytes = static_cast<size_t>(width) * sizeof(float);
    const std::string &values = calls.replies[part.server].dense(part.reply);
    if (values.size() != static_cast<size_t>(rows) * rowBytes)
      return wrongSize(part, values.size(),
                       "shard " + std::to_string(part.shard) + " (expected " +
                           std::to_string(rows * rowBytes) + ")");
    float *out = orders[part.order].out;
    if (!shards.rowsByMod()) { // A range of rows: one copy.
      std::memcpy(out + shards.shardBegin(part.shard) * width, values.data(), values.size());
      continue;
    }
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(out + (part.shard + r * shards.shardCount()) * width,
                  values.data() + r * rowBytes, rowBytes);
  }
  // Each rows order's unique rows, then scattered to every position.
  std::vector<std::vector<float>> uniqueRows(orders.size());
  for (size_t o = 0; o < orders.size(); ++o)
    if (!plan.whole[o])
      uniqueRows[o].resize(
          static_cast<size_t>(plan.uniqueCounts[o] * plan.specs[o]->shape.rowWidth));
  for (const PullPart &part : plan.rowsParts) {
    int64_t width = plan.specs[part.order]->shape.rowWidth;
    size_t rowBytes = static_cast<size_t>(width) * sizeof(float);
    const std::string &values = calls.replies[part.server].rows(part.reply);
    if (values.size() != part.uniques.size() * rowBytes)
      return wrongSize(part, values.size(), std::to_string(part.uniques.size()) + " rows");
    for (size_t j = 0; j < part.uniques.size(); ++j)
      std::memcpy(uniqueRows[part.order].data() + part.uniques[j] * width,
                  values.data() + j * rowBytes, rowBytes);
  }
  for (size_t o = 0; o < orders.size(); ++o) {
    if (plan.whole[o])
      continue;
    int64_t width = plan.specs[o]->shape.rowWidth;
    size_t rowBytes = static_cast<size_t>(width) * sizeof(float);
    const std::vector<int64_t> &slots = plan.slots[o];
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i] < 0)
        std::memset(orders[o].out + i * width, 0, rowBytes);
      else
        std::memcpy(orders[o].out + i * width, uniqueRows[o].data() + slots[i] * width,
                    rowBytes);
    }
  }
  return true;
}

bool ParameterClient::samePull(const PullCalls &calls,
                               const std::vector<exec::PullOrder> &orders) const {
  const PullPlan &plan = calls.plan;
  if (plan.step != step_ || plan.variables.size() != orders.size())
    return false;
  for (size_t o = 0; o < orders.size(); ++o) {
    const exec::PullOrder &order = orders[o];
    if (plan.variables[o] != order.variable || plan.whole[o] != !order.ids)
      return false;
    if (!order.ids)
      continue;
    const std::vector<int64_t> &asked = plan.ids[o];
    if (static_cast<int64_t>(asked.size()) != order.count)
      return false;
    for (int64_t i = 0; i < order.count; ++i) {
      int64_t id = order.ids64 ? static_cast<const int64_t *>(order.ids)[i]
                               : static_cast<const int32_t *>(order.ids)[i];
      if (id != asked[i])
        return false;
    }
  }
  return true;
}

void ParameterClient::dropPrefetched() {
  for (const std::unique_ptr<PullCalls> &calls : prefetched_)
    calls->latch->wait();
  prefetchMisses_ += static_cast<int64_t>(prefetched_.size());
  prefetched_.clear();
}

bool ParameterClient::pull(const std::vector<exec::PullOrder> &orders, std::string &error) {
  // Older prefetches than this step's are stale.
  while (!prefetched_.empty() && prefetched_.front()->plan.step < step_) {
    prefetched_.front()->latch->wait();
    prefetched_.pop_front();
    ++prefetchMisses_;
  }
  if (!prefetched_.empty() && samePull(*prefetched_.front(), orders)) {
    std::unique_ptr<PullCalls> calls = std::move(prefetched_.front());
    prefetched_.pop_front();
    ++prefetchHits_;
    return finishPull(*calls, orders, error);
  }
  PullPlan plan;
  if (!planPull(orders, step_, plan, error))
    return false;
  std::unique_ptr<PullCalls> calls = startPull(std::move(plan));
  return finishPull(*calls, orders, error);
}

bool ParameterClient::prefetch(const std::vector<exec::PullOrder> &orders, std::string &error) {
  PullPlan plan;
  if (!planPull(orders, step_ + 1, plan, error))
    return false;
  // One ahead: a newer prefetch replaces one not taken.
  while (!prefetched_.empty() && prefetched_.back()->plan.step >= step_ + 1) {
    prefetched_.back()->latch->wait();
    prefetched_.pop_back();
    ++prefetchMisses_;
  }
  prefetched_.push_back(startPull(std::move(plan)));
  return true;
}

} // namespace kiln::ps
