//===- ShardStore.h - The rows one parameter server holds -------*- C++ -*-===//
//
// A server's part of every variable: the dense shards the shard map gives
// it (values and optimizer slots) and its part of each hash table (rows
// created on first touch, with their slots and how often each id was
// pulled). Gradients are added into per-variable sums and applied by
// apply(): the protocol of when (sync, async) is ParameterServer's.
// Not thread-safe: the server serializes calls.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PS_SHARDSTORE_H
#define KILN_RUNTIME_PS_SHARDSTORE_H

#include "runtime/cpu/SparseApply.h"
#include "runtime/ps/PsModel.h"

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::ps {

/// Rows of f32 with their optimizer slots.
struct RowBlock {
  int64_t width = 1;
  std::vector<float> values;
  std::vector<std::vector<float>> slots;
  int64_t rows() const { return static_cast<int64_t>(values.size()) / width; }
  int64_t bytes() const {
    return static_cast<int64_t>((values.size() * (1 + slots.size())) * sizeof(float));
  }
};

/// One dense shard (a range, or the mod class, of a variable's rows).
struct DenseShard {
  RowBlock block;
  /// Sync: the sum of the pushed dense gradients; empty when none came.
  std::vector<float> gradientSum;
  /// Embedding tables: pushed rows (local row ids), summed at apply.
  std::vector<int64_t> pushedIds;
  std::vector<float> pushedRows;
};

/// This server's part of a hash table.
struct HashPart {
  RowBlock block;
  std::unordered_map<int64_t, int64_t> rowOf; ///< Id -> row in `block`.
  std::vector<int64_t> ids;                   ///< Row -> id.
  std::vector<int64_t> pulls;                 ///< Row -> times pulled.
  std::vector<int64_t> pushedRowIds;          ///< Rows (not ids) pushed since the last apply.
  std::vector<float> pushedRows;
};

struct VariableCounters {
  int64_t rowsPulled = 0, rowsPushed = 0;
};

/// An error in a request: the message names the variable and what was wrong.
struct RequestError {
  std::string message;
};

class ShardStore {
public:
  ShardStore(const PsModel &model, int serverIndex, int servers);

  const PsModel &model() const { return model_; }
  /// The shard map of variable `ordinal`.
  const VariableShards &shards(int ordinal) const { return variables_[ordinal].shards; }

  /// Appends the values of `shard` of the variable with artifact index
  /// `variable` to `out` (f32 bytes).
  bool readShard(uint32_t variable, uint32_t shard, std::string &out, RequestError &error);
  /// Appends the rows at `ids` (count ids) to `out`, creating hash rows on
  /// first touch.
  bool readRows(uint32_t variable, const int64_t *ids, int64_t count, std::string &out,
                RequestError &error);
  /// Adds a dense gradient of `shard` (f32, its size) to the pending sum;
  /// with `commit` false, only checks that it could.
  bool addShardGradient(uint32_t variable, uint32_t shard, const float *values, int64_t count,
                        bool commit, RequestError &error);
  /// Adds rows of a sparse gradient to the pending sum; with `commit`
  /// false, only checks that it could.
  bool addRowsGradient(uint32_t variable, const int64_t *ids, int64_t count, const float *rows,
                       int64_t rowFloats, bool commit, RequestError &error);
  /// Applies the pending sums times `scale` as optimizer step `step`
  /// (1-based) and clears them.
  void apply(double scale, int64_t step);

  /// Rows and bytes held for variable `ordinal`.
  int64_t rowsHeld(int ordinal) const;
  int64_t bytesHeld(int ordinal) const;
  const VariableCounters &counters(int ordinal) const { return variables_[ordinal].counters; }
  /// Hash tables: the `count` most pulled ids and their counts, most first.
  std::vector<std::pair<int64_t, int64_t>> hottest(int ordinal, size_t count) const;

private:
  struct VariableState {
    VariableShards shards;
    std::map<int64_t, DenseShard> local; ///< Shard index -> shard, for the ones held here.
    HashPart hash;
    bool table = false;
    VariableCounters counters;
  };

  VariableState *find(uint32_t variable, RequestError &error, int *ordinal = nullptr);
  void initializeShards(int ordinal);
  int64_t hashRow(int ordinal, int64_t id);
  void applyDense(const PsVariable &spec, DenseShard &shard, double scale, float lr, float step);
  void applyRows(const PsVariable &spec, RowBlock &block, std::vector<int64_t> &rows,
                 std::vector<float> &grads, double scale, float lr, float step, bool dense);

  const PsModel &model_;
  int serverIndex_, servers_;
  std::vector<VariableState> variables_;
  cpu::SparseScratch scratch_;
};

} // namespace kiln::ps

#endif // KILN_RUNTIME_PS_SHARDSTORE_H
