//===- PsModel.h - What the parameter servers hold --------------*- C++ -*-===//
//
// The variables of a parameter-server artifact that live on the servers,
// with their placement and initializer, and the optimizer the servers
// apply: everything a server and a worker's client need to agree on the
// shard map and the first values. Read from an artifact by
// runtime/ps/ArtifactPsModel.h; built directly in tests.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PS_PSMODEL_H
#define KILN_RUNTIME_PS_PSMODEL_H

#include "runtime/exec/VariableInit.h"
#include "runtime/ps/ServerOptimizer.h"
#include "runtime/ps/ShardMap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::ps {

struct PsVariable {
  std::string name;
  uint32_t artifactIndex = 0;  ///< Index in the artifact's `variables` (the wire's name).
  std::vector<int64_t> dims;   ///< Declared shape (a hash table's rows are nominal).
  VariableShape shape;
  Placement placement;
  exec::Initializer init;      ///< `constant` points into `constantBytes`.
  std::vector<uint8_t> constantBytes;
};

struct PsModel {
  /// In placement order: a variable's ordinal in the shard map is its
  /// position here.
  std::vector<PsVariable> variables;
  OptimizerSpec optimizer;
  uint64_t checksum = 0;

  /// The variable whose artifact index is `artifactIndex`, or null.
  const PsVariable *find(uint32_t artifactIndex) const;
  /// Its ordinal, or -1.
  int ordinalOf(uint32_t artifactIndex) const;
};

/// How the servers combine the workers' pushes.
enum class SyncMode {
  Sync,  ///< A step's pushes from every worker are averaged, then applied once.
  Async, ///< Each push is applied as it arrives (TensorFlow 2's ParameterServerStrategy).
};

} // namespace kiln::ps

#endif // KILN_RUNTIME_PS_PSMODEL_H
