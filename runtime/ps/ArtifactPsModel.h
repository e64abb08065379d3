//===- ArtifactPsModel.h - The parameter-server part of an artifact -*- C++ -*-===//
//
// Reads a PsModel (what the servers hold and apply) from a validated
// artifact: every variable with a `placement`, in artifact order (which is
// the placement order of the shard map), and the training table's
// `server_optimizer`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PS_ARTIFACTPSMODEL_H
#define KILN_RUNTIME_PS_ARTIFACTPSMODEL_H

#include "runtime/artifact/VerifiedArtifact.h"
#include "runtime/ps/PsModel.h"

#include <string>

namespace kiln::ps {

/// Whether the artifact keeps variables on parameter servers.
bool usesParameterServers(const artifact::VerifiedArtifact &artifact);

/// Fills `model`; false with `error` (naming the artifact and the field)
/// when the artifact lacks what the servers need.
bool readPsModel(const artifact::VerifiedArtifact &artifact, PsModel &model, std::string &error);

} // namespace kiln::ps

#endif // KILN_RUNTIME_PS_ARTIFACTPSMODEL_H
