//===- ServeCommand.h - kiln serve: one task of a cluster -------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_SERVECOMMAND_H
#define KILN_TOOLS_KILN_SERVECOMMAND_H

#include "tools/kiln/CommandLine.h"

namespace kiln::tool {

/// The exit status of a task that stopped because another task failed or
/// was lost (its error line names that task): kiln launch names a task that
/// failed for a reason of its own first, whichever ended first.
constexpr int kExitAnotherTaskFailed = 3;

/// Runs task `options.task` of the cluster: serves the coordinator if it is
/// the coordinator task, registers, trains its replicas and leaves. Returns
/// the exit code (1, or kExitAnotherTaskFailed); errors are one line on
/// stderr.
int serveCommand(const ServeOptions &options);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_SERVECOMMAND_H
