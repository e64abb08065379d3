//===- ShardStore.cpp - The rows one parameter server holds ---------------===//

#include "runtime/ps/ShardStore.h"

#include "runtime/artifact/DTypes.h"

#include <algorithm>
#include <cstring>

namespace kiln::ps {
namespace {

uint64_t fnv1a(const std::string &text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text)
    hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

std::vector<float *> slotPointers(RowBlock &block) {
  std::vector<float *> pointers;
  for (FloatRows &slot : block.slots)
    pointers.push_back(slot.data());
  return pointers;
}

void appendFloats(std::string &out, const float *values, int64_t count) {
  out.append(reinterpret_cast<const char *>(values), static_cast<size_t>(count) * sizeof(float));
}

} // namespace

ShardStore::ShardStore(const PsModel &model, int serverIndex, int servers, HashPolicy policy)
    : model_(model), serverIndex_(serverIndex), servers_(servers), policy_(policy) {
  variables_.resize(model.variables.size());
  for (size_t i = 0; i < model.variables.size(); ++i) {
    const PsVariable &spec = model.variables[i];
    VariableState &state = variables_[i];
    state.shards = VariableShards(spec.placement, spec.shape, static_cast<int>(i), servers);
    state.table = spec.placement.kind != Placement::Kind::Dense;
    state.hash.block.width = spec.shape.rowWidth;
    state.hash.block.slots.resize(model.optimizer.slotCount());
    initializeShards(static_cast<int>(i));
  }
}

void ShardStore::initializeShards(int ordinal) {
  const PsVariable &spec = model_.variables[ordinal];
  VariableState &state = variables_[ordinal];
  if (state.shards.isHash())
    return;
  std::vector<int64_t> held = state.shards.shardsOn(serverIndex_);
  if (held.empty())
    return;
  // The whole variable's first value, as one process would draw it; each
  // server keeps its rows.
  int64_t width = spec.shape.rowWidth;
  std::vector<float> whole(static_cast<size_t>(spec.shape.rows * width));
  exec::initializeValues(spec.init, artifact::DType_F32, spec.dims.data(), spec.dims.size(),
                         whole.size(), whole.data());
  int64_t shardCount = state.shards.shardCount();
  for (int64_t k : held) {
    DenseShard &shard = state.local[k];
    shard.block.width = width;
    int64_t rows = state.shards.shardRows(k);
    shard.block.values.resize(static_cast<size_t>(rows * width));
    for (int64_t r = 0; r < rows; ++r) {
      int64_t global = state.shards.rowsByMod() ? k + r * shardCount : state.shards.shardBegin(k) + r;
      std::memcpy(shard.block.values.data() + r * width, whole.data() + global * width,
                  static_cast<size_t>(width) * sizeof(float));
    }
    shard.block.slots.assign(model_.optimizer.slotCount(),
                             FloatRows(shard.block.values.size(),
                                                model_.optimizer.slotInitialValue()));
  }
}

ShardStore::VariableState *ShardStore::find(uint32_t variable, RequestError &error,
                                            int *ordinal) {
  int index = model_.ordinalOf(variable);
  if (index < 0) {
    error.message = "variable #" + std::to_string(variable) + " is not held by the servers";
    return nullptr;
  }
  if (ordinal)
    *ordinal = index;
  return &variables_[index];
}

bool ShardStore::readShard(uint32_t variable, uint32_t shard, std::string &out,
                           RequestError &error) {
  VariableState *state = find(variable, error);
  if (!state)
    return false;
  auto it = state->local.find(shard);
  if (it == state->local.end()) {
    error.message = "shard " + std::to_string(shard) + " of @" +
                    model_.find(variable)->name + " is not on server " +
                    std::to_string(serverIndex_);
    return false;
  }
  appendFloats(out, it->second.block.values.data(),
               static_cast<int64_t>(it->second.block.values.size()));
  return true;
}

void ShardStore::initialRow(int ordinal, int64_t id, float *out) const {
  // Seeded by (seed, table, id): the same value on any number of servers.
  const PsVariable &spec = model_.variables[ordinal];
  exec::Initializer init = spec.init;
  init.seed = mixId(mixId(spec.init.seed ^ fnv1a(spec.name)) ^ static_cast<uint64_t>(id));
  exec::initializeValues(init, artifact::DType_F32, spec.dims.data(), spec.dims.size(),
                         static_cast<uint64_t>(spec.shape.rowWidth), out);
}

int64_t ShardStore::hashRow(int ordinal, int64_t id) {
  HashPart &part = variables_[ordinal].hash;
  auto [it, inserted] = part.rowOf.try_emplace(id, static_cast<int64_t>(part.ids.size()));
  if (!inserted)
    return it->second;
  int64_t width = part.block.width;
  size_t at = part.block.values.size();
  part.block.values.resize(at + static_cast<size_t>(width));
  initialRow(ordinal, id, part.block.values.data() + at);
  for (FloatRows &slot : part.block.slots)
    slot.resize(part.block.values.size(), model_.optimizer.slotInitialValue());
  part.ids.push_back(id);
  part.pulls.push_back(0);
  part.lastSeen.push_back(step_);
  return it->second;
}

int64_t ShardStore::admittedRow(int ordinal, int64_t id) {
  HashPart &part = variables_[ordinal].hash;
  if (policy_.admitAfter > 1 && !part.rowOf.count(id)) {
    auto sighting = part.sightings.try_emplace(id, 0).first;
    if (++sighting->second < policy_.admitAfter)
      return -1;
    part.sightings.erase(sighting);
  }
  return hashRow(ordinal, id);
}

bool ShardStore::readRows(uint32_t variable, const int64_t *ids, int64_t count,
                          std::string &out, RequestError &error) {
  int ordinal = -1;
  VariableState *state = find(variable, error, &ordinal);
  if (!state)
    return false;
  const PsVariable &spec = model_.variables[ordinal];
  int64_t width = spec.shape.rowWidth;
  out.reserve(out.size() + static_cast<size_t>(count * width) * sizeof(float));
  for (int64_t i = 0; i < count; ++i) {
    int64_t id = ids[i];
    if (state->shards.isHash()) {
      if (state->shards.serverOfId(id) != serverIndex_) {
        error.message = "id " + std::to_string(id) + " of hash table @" + spec.name +
                        " belongs to server " + std::to_string(state->shards.serverOfId(id));
        return false;
      }
      int64_t row = admittedRow(ordinal, id);
      if (row < 0) {
        // Not admitted yet: its first value, not kept.
        std::vector<float> first(static_cast<size_t>(width));
        initialRow(ordinal, id, first.data());
        appendFloats(out, first.data(), width);
        continue;
      }
      ++state->hash.pulls[row];
      state->hash.lastSeen[row] = step_;
      appendFloats(out, state->hash.block.values.data() + row * width, width);
      continue;
    }
    if (id < 0 || id >= spec.shape.rows) {
      error.message = "id " + std::to_string(id) + " is outside table @" + spec.name + " of " +
                      std::to_string(spec.shape.rows) + " rows";
      return false;
    }
    auto it = state->local.find(state->shards.shardOfRow(id));
    if (it == state->local.end()) {
      error.message = "row " + std::to_string(id) + " of @" + spec.name + " is not on server " +
                      std::to_string(serverIndex_);
      return false;
    }
    DenseShard &shard = it->second;
    int64_t local = state->shards.localRow(id);
    if (shard.pulls.empty())
      shard.pulls.assign(static_cast<size_t>(shard.block.rows()), 0);
    ++shard.pulls[local];
    appendFloats(out, shard.block.values.data() + local * width, width);
  }
  state->counters.rowsPulled += count;
  return true;
}

bool ShardStore::addShardGradient(uint32_t variable, uint32_t shard, const void *values,
                                  int64_t count, bool commit, RequestError &error) {
  VariableState *state = find(variable, error);
  if (!state)
    return false;
  auto it = state->local.find(shard);
  if (it == state->local.end() ||
      static_cast<size_t>(count) != it->second.block.values.size()) {
    error.message = it == state->local.end()
                        ? "shard " + std::to_string(shard) + " of @" +
                              model_.find(variable)->name + " is not on server " +
                              std::to_string(serverIndex_)
                        : "the gradient of shard " + std::to_string(shard) + " of @" +
                              model_.find(variable)->name + " has " + std::to_string(count) +
                              " values, the shard " +
                              std::to_string(it->second.block.values.size());
    return false;
  }
  if (!commit)
    return true;
  // Read by memcpy: `values` may be a message's bytes.
  std::vector<float> &sum = it->second.gradientSum;
  const char *bytes = static_cast<const char *>(values);
  if (sum.empty()) {
    sum.resize(static_cast<size_t>(count));
    if (count > 0)
      std::memcpy(sum.data(), bytes, static_cast<size_t>(count) * sizeof(float));
  } else {
    for (int64_t i = 0; i < count; ++i) {
      float value;
      std::memcpy(&value, bytes + i * sizeof(float), sizeof(float));
      sum[i] += value;
    }
  }
  return true;
}

bool ShardStore::addRowsGradient(uint32_t variable, const int64_t *ids, int64_t count,
                                 const float *rows, int64_t rowFloats, bool commit,
                                 RequestError &error) {
  int ordinal = -1;
  VariableState *state = find(variable, error, &ordinal);
  if (!state)
    return false;
  const PsVariable &spec = model_.variables[ordinal];
  int64_t width = spec.shape.rowWidth;
  if (rowFloats != count * width) {
    error.message = "the row gradient of @" + spec.name + " has " + std::to_string(rowFloats) +
                    " values for " + std::to_string(count) + " ids of width " +
                    std::to_string(width);
    return false;
  }
  // Check every id before keeping any: a bad request changes nothing.
  for (int64_t i = 0; i < count; ++i) {
    int64_t id = ids[i];
    bool here = state->shards.isHash()
                    ? state->shards.serverOfId(id) == serverIndex_
                    : id >= 0 && id < spec.shape.rows &&
                          state->local.count(state->shards.shardOfRow(id));
    if (!here) {
      error.message = "id " + std::to_string(id) + " of @" + spec.name +
                      (state->shards.isHash() || (id >= 0 && id < spec.shape.rows)
                           ? " is not held by server " + std::to_string(serverIndex_)
                           : " is outside the table's " + std::to_string(spec.shape.rows) +
                                 " rows");
      return false;
    }
  }
  if (!commit)
    return true;
  for (int64_t i = 0; i < count; ++i) {
    const float *row = rows + i * width;
    if (state->shards.isHash()) {
      // Only pulls count towards admission: a pushed id without a row
      // has not been admitted, and its gradient is dropped.
      auto known = state->hash.rowOf.find(ids[i]);
      int64_t at = known != state->hash.rowOf.end() ? known->second
                   : policy_.admitAfter > 1      ? -1
                                                 : hashRow(ordinal, ids[i]);
      if (at < 0) {
        ++state->counters.gradientsDropped;
        continue;
      }
      state->hash.lastSeen[at] = step_;
      state->hash.pushedRowIds.push_back(at);
      state->hash.pushedRows.insert(state->hash.pushedRows.end(), row, row + width);
      continue;
    }
    DenseShard &shard = state->local[state->shards.shardOfRow(ids[i])];
    shard.pushedIds.push_back(state->shards.localRow(ids[i]));
    shard.pushedRows.insert(shard.pushedRows.end(), row, row + width);
  }
  state->counters.rowsPushed += count;
  return true;
}

void ShardStore::applyDense(const PsVariable &, DenseShard &shard, double scale, float lr,
                            float step) {
  if (shard.gradientSum.empty())
    return;
  if (scale != 1.0)
    for (float &g : shard.gradientSum)
      g = static_cast<float>(g * scale);
  cpu::denseApply(model_.optimizer.hyperParameters(false), shard.block.values.data(),
                  slotPointers(shard.block), shard.gradientSum.data(),
                  static_cast<int64_t>(shard.gradientSum.size()), lr, step);
  shard.gradientSum.clear();
}

void ShardStore::applyRows(const PsVariable &, RowBlock &block, std::vector<int64_t> &rows,
                           std::vector<float> &grads, double scale, float lr, float step,
                           bool dense) {
  cpu::SparseHyperParameters hyper = model_.optimizer.hyperParameters(true);
  hyper.dense = hyper.dense && dense;
  bool stateful = hyper.optimizer == cpu::SparseOptimizer::Momentum ||
                  hyper.optimizer == cpu::SparseOptimizer::Adam;
  if (rows.empty() && !(hyper.dense && stateful))
    return;
  if (scale != 1.0)
    for (float &g : grads)
      g = static_cast<float>(g * scale);
  cpu::SparseUpdate update{block.values.data(), slotPointers(block), rows.data(), true,
                           grads.data(), static_cast<int64_t>(rows.size()), block.rows(),
                           block.width, &lr, &step};
  cpu::sparseApply(hyper, update, scratch_);
  rows.clear();
  grads.clear();
}

void ShardStore::apply(double scale, int64_t stepNumber) {
  float lr = model_.optimizer.learningRateAt(stepNumber);
  float step = static_cast<float>(stepNumber);
  for (size_t i = 0; i < variables_.size(); ++i) {
    const PsVariable &spec = model_.variables[i];
    VariableState &state = variables_[i];
    for (auto &[index, shard] : state.local) {
      applyDense(spec, shard, scale, lr, step);
      if (state.table)
        applyRows(spec, shard.block, shard.pushedIds, shard.pushedRows, scale, lr, step,
                  /*dense=*/true);
    }
    if (state.shards.isHash())
      applyRows(spec, state.hash.block, state.hash.pushedRowIds, state.hash.pushedRows, scale,
                lr, step, /*dense=*/false);
  }
  evictRows(step_);
}

void ShardStore::discardPending() {
  for (VariableState &state : variables_) {
    for (auto &[index, shard] : state.local) {
      shard.gradientSum.clear();
      shard.pushedIds.clear();
      shard.pushedRows.clear();
    }
    state.hash.pushedRowIds.clear();
    state.hash.pushedRows.clear();
  }
  evictRows(step_); // As after an update: the rows this step's pulls made count.
}

int64_t ShardStore::rowsHeld(int ordinal) const {
  const VariableState &state = variables_[ordinal];
  int64_t rows = state.hash.block.rows();
  for (const auto &[index, shard] : state.local)
    rows += shard.block.rows();
  return rows;
}

int64_t ShardStore::bytesHeld(int ordinal) const {
  const VariableState &state = variables_[ordinal];
  int64_t bytes = state.hash.block.bytes();
  for (const auto &[index, shard] : state.local)
    bytes += shard.block.bytes();
  return bytes;
}

std::vector<std::pair<int64_t, int64_t>> ShardStore::hottest(int ordinal, size_t count) const {
  const VariableState &state = variables_[ordinal];
  const HashPart &part = state.hash;
  std::vector<std::pair<int64_t, int64_t>> ranked; // (pulls, id)
  for (size_t row = 0; row < part.ids.size(); ++row)
    ranked.push_back({part.pulls[row], part.ids[row]});
  const VariableShards &shards = state.shards;
  for (const auto &[k, shard] : state.local)
    for (size_t r = 0; r < shard.pulls.size(); ++r)
      if (shard.pulls[r] > 0)
        ranked.push_back({shard.pulls[r], shards.rowsByMod()
                                              ? k + static_cast<int64_t>(r) * shards.shardCount()
                                              : shards.shardBegin(k) + static_cast<int64_t>(r)});
  count = std::min(count, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + count, ranked.end(),
                    [](auto &a, auto &b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  std::vector<std::pair<int64_t, int64_t>> top;
  for (size_t i = 0; i < count; ++i)
    top.push_back({ranked[i].second, ranked[i].first});
  return top;
}

} // namespace kiln::ps
