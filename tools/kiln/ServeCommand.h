//===- ServeCommand.h - kiln serve: one task of a cluster -------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_SERVECOMMAND_H
#define KILN_TOOLS_KILN_SERVECOMMAND_H

#include "tools/kiln/CommandLine.h"

namespace kiln::tool {

/// Runs task `options.task` of the cluster: serves the coordinator if it is
/// the coordinator task, registers, trains its replicas and leaves. Returns
/// the exit code; errors are one line on stderr.
int serveCommand(const ServeOptions &options);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_SERVECOMMAND_H
