//===- InspectCommand.h - kiln inspect --------------------------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_INSPECTCOMMAND_H
#define KILN_TOOLS_KILN_INSPECTCOMMAND_H

#include "tools/kiln/CommandLine.h"

namespace kiln::tool {

/// Verifies the artifact (without loading its kernels) and prints what it
/// holds: format version, target, producer, model, memory regions,
/// programs with instruction counts by kind and their feeds and fetches,
/// kernels and variables; as text, or JSON with --json. Returns the exit
/// code.
int inspectCommand(const InspectOptions &options);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_INSPECTCOMMAND_H
