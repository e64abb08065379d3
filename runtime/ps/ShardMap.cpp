//===- ShardMap.cpp - Which server holds which rows -----------------------===//

#include "runtime/ps/ShardMap.h"

#include <algorithm>

namespace kiln::ps {

uint64_t mixId(uint64_t id) {
  uint64_t z = id + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int64_t resolveShardCount(const Placement &placement, const VariableShape &shape,
                          int servers) {
  int64_t bytes = shape.rows * shape.rowWidth * 4;
  int64_t limit = placement.maxShards > 0 ? placement.maxShards : servers;
  int64_t count = 1;
  switch (placement.partitioner) {
  case Placement::Partitioner::None:
    count = 1;
    break;
  case Placement::Partitioner::FixedShards:
    count = placement.numShards;
    break;
  case Placement::Partitioner::MinShardBytes:
    // TensorFlow's MinSizePartitioner: as many shards of at least
    // min_shard_bytes as fit, at most max_shards.
    count = std::min(limit, bytes / std::max<int64_t>(1, placement.minShardBytes));
    break;
  case Placement::Partitioner::MaxShardBytes: {
    // TensorFlow's MaxSizePartitioner: enough shards that none exceeds
    // max_shard_bytes, at most max_shards.
    int64_t most = std::max<int64_t>(1, placement.maxShardBytes);
    count = std::min(limit, (bytes + most - 1) / most);
    break;
  }
  }
  return std::clamp<int64_t>(count, 1, std::max<int64_t>(1, shape.rows));
}

VariableShards::VariableShards(const Placement &placement, const VariableShape &shape,
                               int ordinal, int servers)
    : hash_(placement.kind == Placement::Kind::Hash), mod_(placement.rowsByMod),
      ordinal_(ordinal), servers_(std::max(1, servers)) {
  if (hash_) {
    // Shard k of a hash table is the part of it on server k.
    for (int k = 0; k < servers_; ++k) {
      begins_.push_back(0);
      counts_.push_back(0);
    }
    ordinal_ = 0;
    return;
  }
  int64_t count = resolveShardCount(placement, shape, servers_);
  int64_t base = shape.rows / count, extra = shape.rows % count, begin = 0;
  for (int64_t k = 0; k < count; ++k) {
    int64_t rows = mod_ ? shape.rows / count + (k < extra ? 1 : 0) : base + (k < extra ? 1 : 0);
    begins_.push_back(mod_ ? k : begin);
    counts_.push_back(rows);
    begin += rows;
  }
}

int64_t VariableShards::shardOfRow(int64_t row) const {
  if (mod_)
    return row % shardCount();
  auto it = std::upper_bound(begins_.begin(), begins_.end(), row);
  return static_cast<int64_t>(it - begins_.begin()) - 1;
}

int64_t VariableShards::localRow(int64_t row) const {
  return mod_ ? row / shardCount() : row - begins_[shardOfRow(row)];
}

int VariableShards::serverOfId(int64_t id) const {
  return static_cast<int>(mixId(static_cast<uint64_t>(id)) % static_cast<uint64_t>(servers_));
}

std::vector<int64_t> VariableShards::shardsOn(int server) const {
  std::vector<int64_t> shards;
  for (int64_t k = 0; k < shardCount(); ++k)
    if (serverOf(k) == server)
      shards.push_back(k);
  return shards;
}

std::string describe(const Placement &placement) {
  if (placement.kind == Placement::Kind::Hash)
    return "hash";
  std::string text;
  switch (placement.partitioner) {
  case Placement::Partitioner::None:
    text = "none";
    break;
  case Placement::Partitioner::FixedShards:
    text = "fixed_shards:" + std::to_string(placement.numShards);
    break;
  case Placement::Partitioner::MinShardBytes:
    text = "min_shard_bytes:" + std::to_string(placement.minShardBytes) +
           ",max_shards:" + std::to_string(placement.maxShards);
    break;
  case Placement::Partitioner::MaxShardBytes:
    text = "max_shard_bytes:" + std::to_string(placement.maxShardBytes) +
           ",max_shards:" + std::to_string(placement.maxShards);
    break;
  }
  if (placement.kind == Placement::Kind::Table)
    text += placement.rowsByMod ? ",rows:mod" : ",rows:div";
  return text;
}

} // namespace kiln::ps
