//===- ShardMap.h - Which server holds which rows ---------------*- C++ -*-===//
//
// Parameter-server placement, resolved from the artifact and the number of
// servers alone, so every worker and server computes the same map without
// asking anyone:
//
//   - a dense variable or a fixed-size table is split on axis 0 into K
//     shards by its partitioner (TensorFlow's three: fixed shards, min shard
//     size, max shard size); shard k of the variable with placement ordinal
//     v lives on server (v + k) mod S, spreading small variables round
//     robin as TensorFlow places them;
//   - rows go to shards in contiguous ranges (div: the first rows % K
//     shards take one row more, as TensorFlow splits) or by id mod K (mod:
//     local row id / K);
//   - a hash table has no fixed rows: id x lives on server mix(x) mod S.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PS_SHARDMAP_H
#define KILN_RUNTIME_PS_SHARDMAP_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::ps {

/// How a variable is placed on the servers (the compiler's kdist.placement).
struct Placement {
  enum class Kind { Dense, Table, Hash };
  enum class Partitioner { None, FixedShards, MinShardBytes, MaxShardBytes };
  Kind kind = Kind::Dense;
  Partitioner partitioner = Partitioner::None;
  int64_t numShards = 1;
  int64_t minShardBytes = 256 << 10;
  int64_t maxShardBytes = 0;
  /// 0: as many as there are servers.
  int64_t maxShards = 0;
  /// Rows by id mod shards instead of contiguous ranges.
  bool rowsByMod = false;
};

/// A variable held by the servers: its shape as rows of `rowWidth` f32s.
struct VariableShape {
  int64_t rows = 1;     ///< Axis 0 (1 for a scalar); a hash table's declared rows.
  int64_t rowWidth = 1; ///< Product of the other axes.
};

/// The shards of one variable.
class VariableShards {
public:
  VariableShards() = default;
  /// Resolves `placement` for a variable of `shape` whose ordinal among the
  /// servers' variables is `ordinal`, on `servers` servers.
  VariableShards(const Placement &placement, const VariableShape &shape, int ordinal,
                 int servers);

  bool isHash() const { return hash_; }
  int64_t shardCount() const { return static_cast<int64_t>(begins_.size()); }
  /// The server holding shard `shard`.
  int serverOf(int64_t shard) const {
    return static_cast<int>((ordinal_ + shard) % servers_);
  }
  /// Rows of shard `shard`.
  int64_t shardRows(int64_t shard) const { return counts_[shard]; }
  /// Div: the first global row of `shard`.
  int64_t shardBegin(int64_t shard) const { return begins_[shard]; }
  bool rowsByMod() const { return mod_; }
  /// The shard holding global row `row` of a fixed table (0 <= row < rows).
  int64_t shardOfRow(int64_t row) const;
  /// The index of global row `row` within its shard.
  int64_t localRow(int64_t row) const;
  /// Hash tables: the server holding id `id`.
  int serverOfId(int64_t id) const;
  /// The shards held by `server`, ascending.
  std::vector<int64_t> shardsOn(int server) const;

private:
  bool hash_ = false, mod_ = false;
  int ordinal_ = 0, servers_ = 1;
  std::vector<int64_t> begins_, counts_;
};

/// The number of shards `placement` gives a variable of `shape` on
/// `servers` servers (dense and fixed tables).
int64_t resolveShardCount(const Placement &placement, const VariableShape &shape, int servers);

/// A well-mixed 64-bit hash of an id (splitmix64's finalizer), used for the
/// server of a hash-table id.
uint64_t mixId(uint64_t id);

/// "fixed_shards:4", "min_shard_bytes:262144,max_shards:0", "hash", ...:
/// the placement as the reports print it.
std::string describe(const Placement &placement);

} // namespace kiln::ps

#endif // KILN_RUNTIME_PS_SHARDMAP_H
