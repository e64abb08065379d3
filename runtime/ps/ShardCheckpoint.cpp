//===- ShardCheckpoint.cpp - A server's part of a checkpoint --------------===//
//
// The tensors one parameter server writes into a checkpoint and reads back
// (docs/parameter-server.md, Checkpoints). Names carry where the rows
// belong, so a later change can redistribute them onto another number of
// servers: a dense shard K of VAR is `VAR/part-K` (its rows in the shard
// map's order) with the optimizer's slots `VAR/part-K/slot-J`; server I's
// part of hash table VAR is `VAR/hash-I/ids` (I64 [n]), `VAR/hash-I/values`
// (F32 [n, row...]), `VAR/hash-I/slot-J`, `VAR/hash-I/pulls` and
// `VAR/hash-I/last_seen` (I64 [n]).
//
//===----------------------------------------------------------------------===//

#include "runtime/ps/ShardStore.h"

#include <cstring>
#include <map>

namespace kiln::ps {
namespace {

using checkpoint::DType;
using checkpoint::LoadedTensor;
using checkpoint::TensorRef;

/// [rows, the variable's row shape...].
std::vector<int64_t> rowsShape(const PsVariable &spec, int64_t rows) {
  std::vector<int64_t> shape = {rows};
  if (spec.dims.size() > 1)
    shape.insert(shape.end(), spec.dims.begin() + 1, spec.dims.end());
  return shape;
}

TensorRef floats(std::string name, std::vector<int64_t> shape, const FloatRows &values) {
  return {std::move(name), DType::F32, std::move(shape), values.data(),
          values.size() * sizeof(float)};
}

TensorRef integers(std::string name, const std::vector<int64_t> &values) {
  return {std::move(name), DType::I64, {static_cast<int64_t>(values.size())}, values.data(),
          values.size() * sizeof(int64_t)};
}

std::string slotName(const std::string &prefix, size_t slot) {
  return prefix + "/slot-" + std::to_string(slot);
}

template <typename Vector> void copyInto(Vector &out, const LoadedTensor &tensor) {
  out.resize(tensor.data.size() / sizeof(typename Vector::value_type));
  if (!out.empty())
    std::memcpy(out.data(), tensor.data.data(), tensor.data.size());
}

} // namespace

std::string ShardStore::hashPrefix(const PsVariable &spec) const {
  return spec.name + "/hash-" + std::to_string(serverIndex_);
}

std::vector<TensorRef> ShardStore::checkpointTensors() const {
  std::vector<TensorRef> tensors;
  for (size_t i = 0; i < variables_.size(); ++i) {
    const PsVariable &spec = model_.variables[i];
    const VariableState &state = variables_[i];
    for (const auto &[k, shard] : state.local) {
      std::string name = spec.name + "/part-" + std::to_string(k);
      std::vector<int64_t> shape = rowsShape(spec, shard.block.rows());
      tensors.push_back(floats(name, shape, shard.block.values));
      for (size_t j = 0; j < shard.block.slots.size(); ++j)
        tensors.push_back(floats(slotName(name, j), shape, shard.block.slots[j]));
    }
    if (!state.shards.isHash())
      continue;
    const HashPart &part = state.hash;
    std::string name = hashPrefix(spec);
    std::vector<int64_t> shape = rowsShape(spec, part.block.rows());
    tensors.push_back(integers(name + "/ids", part.ids));
    tensors.push_back(floats(name + "/values", shape, part.block.values));
    for (size_t j = 0; j < part.block.slots.size(); ++j)
      tensors.push_back(floats(slotName(name, j), shape, part.block.slots[j]));
    tensors.push_back(integers(name + "/pulls", part.pulls));
    tensors.push_back(integers(name + "/last_seen", part.lastSeen));
  }
  return tensors;
}

bool ShardStore::restoreTensors(const std::vector<LoadedTensor> &tensors, std::string &error) {
  std::map<std::string, const LoadedTensor *> byName;
  for (const LoadedTensor &tensor : tensors)
    byName[tensor.name] = &tensor;
  // What this server holds, as names and types: a hash table's row count
  // is the checkpoint's (its `ids` say how many).
  auto expect = [&](const std::string &name, DType dtype,
                    std::vector<int64_t> shape) -> const LoadedTensor * {
    auto it = byName.find(name);
    if (it == byName.end()) {
      error = "tensor '" + name + "' of server " + std::to_string(serverIndex_) +
              " is not in the checkpoint";
      return nullptr;
    }
    const LoadedTensor &tensor = *it->second;
    if (tensor.dtype != dtype || tensor.shape != shape) {
      error = "tensor '" + name + "' is " + checkpoint::tensorTypeString(tensor.dtype, tensor.shape) +
              " in the checkpoint, server " + std::to_string(serverIndex_) + " holds " +
              checkpoint::tensorTypeString(dtype, shape);
      return nullptr;
    }
    byName.erase(it);
    return &tensor;
  };
  // Checked whole first, then copied: a bad checkpoint changes nothing.
  struct Copy {
    FloatRows *floats = nullptr;
    std::vector<int64_t> *integers = nullptr;
    const LoadedTensor *from;
  };
  std::vector<Copy> copies;
  std::vector<VariableState> restored = variables_;
  for (size_t i = 0; i < restored.size(); ++i) {
    const PsVariable &spec = model_.variables[i];
    VariableState &state = restored[i];
    for (auto &[k, shard] : state.local) {
      std::string name = spec.name + "/part-" + std::to_string(k);
      std::vector<int64_t> shape = rowsShape(spec, shard.block.rows());
      const LoadedTensor *values = expect(name, DType::F32, shape);
      if (!values)
        return false;
      copies.push_back({&shard.block.values, nullptr, values});
      for (size_t j = 0; j < shard.block.slots.size(); ++j) {
        const LoadedTensor *slot = expect(slotName(name, j), DType::F32, shape);
        if (!slot)
          return false;
        copies.push_back({&shard.block.slots[j], nullptr, slot});
      }
    }
    if (!state.shards.isHash())
      continue;
    HashPart &part = state.hash;
    std::string name = hashPrefix(spec);
    auto found = byName.find(name + "/ids");
    int64_t rows = found == byName.end() || found->second->shape.size() != 1
                       ? 0
                       : found->second->shape[0];
    const LoadedTensor *ids = expect(name + "/ids", DType::I64, {rows});
    const LoadedTensor *values =
        ids ? expect(name + "/values", DType::F32, rowsShape(spec, rows)) : nullptr;
    if (!values)
      return false;
    copies.push_back({nullptr, &part.ids, ids});
    copies.push_back({&part.block.values, nullptr, values});
    for (size_t j = 0; j < part.block.slots.size(); ++j) {
      const LoadedTensor *slot = expect(slotName(name, j), DType::F32, rowsShape(spec, rows));
      if (!slot)
        return false;
      copies.push_back({&part.block.slots[j], nullptr, slot});
    }
    const LoadedTensor *pulls = expect(name + "/pulls", DType::I64, {rows});
    const LoadedTensor *lastSeen =
        pulls ? expect(name + "/last_seen", DType::I64, {rows}) : nullptr;
    if (!lastSeen)
      return false;
    copies.push_back({nullptr, &part.pulls, pulls});
    copies.push_back({nullptr, &part.lastSeen, lastSeen});
  }
  if (!byName.empty()) {
    error = "tensor '" + byName.begin()->first + "' is not held by server " +
            std::to_string(serverIndex_);
    return false;
  }
  for (const Copy &copy : copies) {
    if (copy.floats)
      copyInto(*copy.floats, *copy.from);
    else
      copyInto(*copy.integers, *copy.from);
  }
  for (size_t i = 0; i < restored.size(); ++i) {
    HashPart &part = restored[i].hash;
    part.rowOf.clear();
    for (size_t row = 0; row < part.ids.size(); ++row)
      if (!part.rowOf.emplace(part.ids[row], static_cast<int64_t>(row)).second ||
          (restored[i].shards.isHash() &&
           restored[i].shards.serverOfId(part.ids[row]) != serverIndex_)) {
        error = "tensor '" + hashPrefix(model_.variables[i]) + "/ids': id " +
                std::to_string(part.ids[row]) + " at row " + std::to_string(row) +
                " is repeated or belongs to another server";
        return false;
      }
  }
  variables_ = std::move(restored);
  return true;
}

bool ShardStore::redistributeTensors(const std::vector<LoadedTensor> &saved, int savedServers,
                                     std::string &error) {
  std::map<std::string, const LoadedTensor *> byName;
  for (const LoadedTensor &tensor : saved)
    byName[tensor.name] = &tensor;
  auto find = [&](const std::string &name, DType dtype) -> const LoadedTensor * {
    auto it = byName.find(name);
    if (it == byName.end() || it->second->dtype != dtype) {
      error = "tensor '" + name + "' is " +
              (it == byName.end() ? std::string("not in the checkpoint") : "not " +
                                        std::string(checkpoint::dtypeName(dtype)));
      return nullptr;
    }
    return it->second;
  };
  size_t slots = model_.optimizer.slotCount();
  std::vector<LoadedTensor> mine;
  for (size_t i = 0; i < variables_.size(); ++i) {
    const PsVariable &spec = model_.variables[i];
    const VariableState &state = variables_[i];
    size_t rowBytes = static_cast<size_t>(spec.shape.rowWidth) * sizeof(float);
    if (state.shards.isHash()) {
      // This server's ids, from every saved server's rows.
      std::string prefix = hashPrefix(spec);
      std::vector<LoadedTensor> out(4 + slots);
      out[0] = {prefix + "/ids", DType::I64, {0}, {}};
      out[1] = {prefix + "/values", DType::F32, rowsShape(spec, 0), {}};
      for (size_t j = 0; j < slots; ++j)
        out[2 + j] = {slotName(prefix, j), DType::F32, rowsShape(spec, 0), {}};
      out[2 + slots] = {prefix + "/pulls", DType::I64, {0}, {}};
      out[3 + slots] = {prefix + "/last_seen", DType::I64, {0}, {}};
      int64_t kept = 0;
      for (int from = 0; from < savedServers; ++from) {
        std::string old = spec.name + "/hash-" + std::to_string(from);
        std::vector<const LoadedTensor *> parts = {find(old + "/ids", DType::I64),
                                                   find(old + "/values", DType::F32)};
        for (size_t j = 0; j < slots && parts.back(); ++j)
          parts.push_back(find(slotName(old, j), DType::F32));
        if (parts.back())
          parts.push_back(find(old + "/pulls", DType::I64));
        if (parts.back())
          parts.push_back(find(old + "/last_seen", DType::I64));
        if (!parts.back())
          return false;
        size_t rows = parts[0]->data.size() / sizeof(int64_t);
        for (const LoadedTensor *part : parts)
          if (part->data.size() != rows * (part->dtype == DType::I64 ? sizeof(int64_t) : rowBytes)) {
            error = "tensor '" + part->name + "' does not have the " + std::to_string(rows) +
                    " rows its ids have";
            return false;
          }
        for (size_t row = 0; row < rows; ++row) {
          int64_t id;
          std::memcpy(&id, parts[0]->data.data() + row * sizeof(int64_t), sizeof id);
          if (state.shards.serverOfId(id) != serverIndex_)
            continue;
          ++kept;
          for (size_t t = 0; t < parts.size(); ++t) {
            size_t bytes = parts[t]->dtype == DType::I64 ? sizeof(int64_t) : rowBytes;
            const uint8_t *from8 = parts[t]->data.data() + row * bytes;
            out[t].data.insert(out[t].data.end(), from8, from8 + bytes);
          }
        }
      }
      for (LoadedTensor &tensor : out) {
        tensor.shape[0] = kept;
        mine.push_back(std::move(tensor));
      }
      continue;
    }
    if (state.local.empty())
      continue;
    // The whole variable and its slots from the saved shards, then this
    // server's shards of the new map.
    VariableShards old(spec.placement, spec.shape, static_cast<int>(i), savedServers);
    std::vector<std::vector<uint8_t>> whole(1 + slots,
                                            std::vector<uint8_t>(spec.shape.rows * rowBytes));
    for (int64_t k = 0; k < old.shardCount(); ++k) {
      std::string name = spec.name + "/part-" + std::to_string(k);
      for (size_t t = 0; t <= slots; ++t) {
        const LoadedTensor *part = find(t == 0 ? name : slotName(name, t - 1), DType::F32);
        if (!part)
          return false;
        if (part->data.size() != static_cast<size_t>(old.shardRows(k)) * rowBytes) {
          error = "tensor '" + part->name + "' does not hold the " +
                  std::to_string(old.shardRows(k)) + " rows of shard " + std::to_string(k) +
                  " of " + std::to_string(savedServers) + " servers";
          return false;
        }
        for (int64_t r = 0; r < old.shardRows(k); ++r) {
          int64_t global = old.rowsByMod() ? k + r * old.shardCount() : old.shardBegin(k) + r;
          std::memcpy(whole[t].data() + global * rowBytes, part->data.data() + r * rowBytes,
                      rowBytes);
        }
      }
    }
    for (const auto &[k, shard] : state.local) {
      std::string name = spec.name + "/part-" + std::to_string(k);
      int64_t rows = state.shards.shardRows(k);
      for (size_t t = 0; t <= slots; ++t) {
        LoadedTensor tensor{t == 0 ? name : slotName(name, t - 1), DType::F32,
                            rowsShape(spec, rows), std::vector<uint8_t>(rows * rowBytes)};
        for (int64_t r = 0; r < rows; ++r) {
          int64_t global = state.shards.rowsByMod() ? k + r * state.shards.shardCount()
                                                    : state.shards.shardBegin(k) + r;
          std::memcpy(tensor.data.data() + r * rowBytes, whole[t].data() + global * rowBytes,
                      rowBytes);
        }
        mine.push_back(std::move(tensor));
      }
    }
  }
  return restoreTensors(mine, error);
}

} // namespace kiln::ps
