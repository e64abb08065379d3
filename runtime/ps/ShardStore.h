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

#include "runtime/checkpoint/Checkpoint.h"
#include "runtime/cpu/HugePages.h"
#include "runtime/cpu/SparseApply.h"
#include "runtime/ps/PsModel.h"

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::ps {

/// A server's f32 rows: on huge pages once they fill one (cpu/HugePages.h).
using FloatRows = std::vector<float, cpu::HugePageAllocator<float>>;

/// Rows of f32 with their optimizer slots.
struct RowBlock {
  int64_t width = 1;
  FloatRows values;
  std::vector<FloatRows> slots;
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
  /// Embedding tables: times each local row was pulled (sized at the first
  /// pull; kept in memory only, not in checkpoints).
  std::vector<int64_t> pulls;
};

/// This server's part of a hash table.
struct HashPart {
  RowBlock block;
  std::unordered_map<int64_t, int64_t> rowOf; ///< Id -> row in `block`.
  std::vector<int64_t> ids;                   ///< Row -> id.
  std::vector<int64_t> pulls;                 ///< Row -> times pulled.
  std::vector<int64_t> lastSeen;              ///< Row -> the last step that pulled or pushed it.
  std::vector<int64_t> pushedRowIds;          ///< Rows (not ids) pushed since the last apply.
  std::vector<float> pushedRows;
  /// Admission: times each id without a row has been seen.
  std::unordered_map<int64_t, int64_t> sightings;
};

struct VariableCounters {
  int64_t rowsPulled = 0, rowsPushed = 0;
  int64_t rowsEvicted = 0;     ///< Hash rows removed by the eviction policy.
  int64_t gradientsDropped = 0; ///< Pushed rows of ids not admitted yet.
};

/// What a server does with hash-table rows (DeepRec's and TFRA's feature
/// admission and eviction):
///   - admitAfter K > 1: an id gets a row only once it has been pulled K
///     times, counted exactly per id; before that a pull answers the row's
///     first value without keeping it and a pushed gradient is dropped;
///   - evictTtl T > 0: a row untouched for more than T steps is removed
///     (with its slots), checked after each applied update;
///   - maxRows R > 0: after an update, the rows beyond R of each table are
///     removed, the least often pulled first (then the longest untouched).
/// A removed id that comes back starts again from its first value.
struct HashPolicy {
  int64_t admitAfter = 0;
  int64_t evictTtl = 0;
  int64_t maxRows = 0;
};

/// An error in a request: the message names the variable and what was wrong.
struct RequestError {
  std::string message;
};

class ShardStore {
public:
  ShardStore(const PsModel &model, int serverIndex, int servers, HashPolicy policy = {});

  const PsModel &model() const { return model_; }
  /// The worker step the next reads and gradients belong to (hash rows
  /// remember the last step that touched them).
  void setStep(int64_t step) { step_ = step; }
  /// The shard map of variable `ordinal`.
  const VariableShards &shards(int ordinal) const { return variables_[ordinal].shards; }

  /// Appends the values of `shard` of the variable with artifact index
  /// `variable` to `out` (f32 bytes).
  bool readShard(uint32_t variable, uint32_t shard, std::string &out, RequestError &error);
  /// Appends the rows at `ids` (count ids) to `out`, creating hash rows on
  /// first touch.
  bool readRows(uint32_t variable, const int64_t *ids, int64_t count, std::string &out,
                RequestError &error);
  /// Adds a dense gradient of `shard` (`count` f32 values, its size, at any
  /// address: a message's bytes too) to the pending sum; with `commit`
  /// false, only checks that it could.
  bool addShardGradient(uint32_t variable, uint32_t shard, const void *values, int64_t count,
                        bool commit, RequestError &error);
  /// Adds rows of a sparse gradient to the pending sum; with `commit`
  /// false, only checks that it could.
  bool addRowsGradient(uint32_t variable, const int64_t *ids, int64_t count, const float *rows,
                       int64_t rowFloats, bool commit, RequestError &error);
  /// Applies the pending sums times `scale` as optimizer step `step`
  /// (1-based) and clears them.
  void apply(double scale, int64_t step);
  /// Drops the pending sums (a step skipped: its gradients were not finite)
  /// and applies the eviction policy, as apply() does.
  void discardPending();

  /// Rows and bytes held for variable `ordinal`.
  int64_t rowsHeld(int ordinal) const;
  int64_t bytesHeld(int ordinal) const;
  const VariableCounters &counters(int ordinal) const { return variables_[ordinal].counters; }
  /// Ids of hash table `ordinal` pulled but not admitted yet.
  int64_t waitingAdmission(int ordinal) const {
    return static_cast<int64_t>(variables_[ordinal].hash.sightings.size());
  }
  /// Tables, fixed and hash: the `count` most pulled ids and their counts,
  /// most first (ties: the smaller id first). The id frequencies a placement
  /// planner reads.
  std::vector<std::pair<int64_t, int64_t>> hottest(int ordinal, size_t count) const;

  /// This server's part as checkpoint tensors pointing into the store
  /// (valid until it changes): each dense shard held, `VAR/part-K` and its
  /// slots `VAR/part-K/slot-J`; this server I's rows of each hash table,
  /// `VAR/hash-I/ids`, `.../values`, `.../slot-J`, `.../pulls` and
  /// `.../last_seen` (ShardCheckpoint.cpp).
  std::vector<checkpoint::TensorRef> checkpointTensors() const;
  /// Replaces the part with `tensors` (exactly what checkpointTensors()
  /// would give on this server: each name, dtype and shape checked). On
  /// failure names the tensor at fault and leaves the store unchanged.
  bool restoreTensors(const std::vector<checkpoint::LoadedTensor> &tensors, std::string &error);
  /// The same from every part a checkpoint of `savedServers` servers holds
  /// (all their files): dense shards reassembled by the saved shard map and
  /// cut by this one, hash rows kept where their id now belongs.
  bool redistributeTensors(const std::vector<checkpoint::LoadedTensor> &saved, int savedServers,
                           std::string &error);

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
  /// The row of pulled `id`, made if the admission policy lets it in; -1
  /// if not (the pull counted).
  int64_t admittedRow(int ordinal, int64_t id);
  /// Writes the first value of hash row `id` of variable `ordinal` to `out`.
  void initialRow(int ordinal, int64_t id, float *out) const;
  /// Applies the eviction policy to every hash table (after an update).
  void evictRows(int64_t step);
  void removeHashRows(VariableState &state, std::vector<int64_t> rows);
  /// "VAR/hash-I": the names of this server's rows of hash table VAR.
  std::string hashPrefix(const PsVariable &spec) const;
  void applyDense(const PsVariable &spec, DenseShard &shard, double scale, float lr, float step);
  void applyRows(const PsVariable &spec, RowBlock &block, std::vector<int64_t> &rows,
                 std::vector<float> &grads, double scale, float lr, float step, bool dense);

  const PsModel &model_;
  int serverIndex_, servers_;
  HashPolicy policy_;
  std::vector<VariableState> variables_;
  cpu::SparseScratch scratch_;
  int64_t step_ = 0;
};

} // namespace kiln::ps

#endif // KILN_RUNTIME_PS_SHARDSTORE_H
