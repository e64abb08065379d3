//===- ArtifactPsModel.cpp - The parameter-server part of an artifact -----===//

#include "runtime/ps/ArtifactPsModel.h"

namespace kiln::ps {

using namespace artifact;

bool usesParameterServers(const VerifiedArtifact &artifact) {
  if (const auto *variables = artifact.root().variables())
    for (const Variable *variable : *variables)
      if (variable->placement())
        return true;
  return false;
}

namespace {

Placement placementOf(const artifact::Placement &from) {
  Placement placement;
  placement.kind = from.kind() == PlacementKind_Hash    ? Placement::Kind::Hash
                   : from.kind() == PlacementKind_Table ? Placement::Kind::Table
                                                        : Placement::Kind::Dense;
  switch (from.partitioner()) {
  case Partitioner_FixedShards:
    placement.partitioner = Placement::Partitioner::FixedShards;
    break;
  case Partitioner_MinShardBytes:
    placement.partitioner = Placement::Partitioner::MinShardBytes;
    break;
  case Partitioner_MaxShardBytes:
    placement.partitioner = Placement::Partitioner::MaxShardBytes;
    break;
  default:
    placement.partitioner = Placement::Partitioner::None;
    break;
  }
  placement.numShards = from.num_shards();
  placement.minShardBytes = from.min_shard_bytes();
  placement.maxShardBytes = from.max_shard_bytes();
  placement.maxShards = from.max_shards();
  placement.rowsByMod = from.rows_by_mod();
  return placement;
}

std::string text(const flatbuffers::String *value, const char *fallback) {
  return value && value->size() ? value->str() : fallback;
}

} // namespace

bool readPsModel(const VerifiedArtifact &artifact, PsModel &model, std::string &error) {
  const Artifact &root = artifact.root();
  model = PsModel();
  model.checksum = artifact.checksum();
  const auto *variables = root.variables();
  for (flatbuffers::uoffset_t i = 0; variables && i < variables->size(); ++i) {
    const Variable &variable = *variables->Get(i);
    if (!variable.placement())
      continue;
    PsVariable out;
    out.name = variable.name()->str();
    out.artifactIndex = i;
    if (const auto *shape = root.buffers()->Get(variable.buffer())->shape())
      out.dims.assign(shape->begin(), shape->end());
    out.shape.rows = out.dims.empty() ? 1 : out.dims[0];
    for (size_t d = 1; d < out.dims.size(); ++d)
      out.shape.rowWidth *= out.dims[d];
    out.placement = placementOf(*variable.placement());
    if (variable.value())
      out.constantBytes.assign(variable.value()->begin(), variable.value()->end());
    out.init = exec::Initializer{variable.init(), variable.a(), variable.b(), variable.seed(),
                                 nullptr, out.constantBytes.size()};
    model.variables.push_back(std::move(out));
  }
  // The constant initializers point into the variables' own bytes, now that
  // the vector no longer moves.
  for (PsVariable &variable : model.variables)
    variable.init.constant = variable.constantBytes.data();
  if (model.variables.empty())
    return true;
  const ServerOptimizer *optimizer = root.training() ? root.training()->server_optimizer() : nullptr;
  if (!optimizer) {
    error = artifact.path() + ": error: training.server_optimizer is missing: the artifact keeps "
                              "variables on parameter servers but does not say what they apply";
    return false;
  }
  OptimizerSpec &spec = model.optimizer;
  spec.kind = text(optimizer->kind(), "sgd");
  spec.learningRate = optimizer->learning_rate();
  spec.momentum = optimizer->momentum();
  spec.nesterov = optimizer->nesterov();
  spec.beta1 = optimizer->beta1();
  spec.beta2 = optimizer->beta2();
  spec.epsilon = optimizer->epsilon();
  spec.weightDecay = optimizer->weight_decay();
  spec.initialAccumulator = optimizer->initial_accumulator();
  spec.lazySparse = optimizer->lazy_sparse();
  spec.schedule = text(optimizer->schedule(), "constant");
  spec.warmupSteps = optimizer->warmup_steps();
  spec.decaySteps = optimizer->decay_steps();
  spec.minLearningRate = optimizer->min_learning_rate();
  std::string problem = spec.check();
  if (!problem.empty()) {
    error = artifact.path() + ": error: training.server_optimizer: " + problem;
    return false;
  }
  return true;
}

} // namespace kiln::ps
