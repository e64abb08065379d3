//===- LaunchCommand.h - kiln launch: a local cluster -----------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_LAUNCHCOMMAND_H
#define KILN_TOOLS_KILN_LAUNCHCOMMAND_H

#include "tools/kiln/CommandLine.h"

namespace kiln::tool {

/// Starts `options.workers` kiln serve tasks on 127.0.0.1 and waits for
/// them. Returns 0 when all succeed, else 1 after one line naming the task
/// that failed first.
int launchCommand(const LaunchOptions &options);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_LAUNCHCOMMAND_H
