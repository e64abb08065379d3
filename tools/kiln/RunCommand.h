//===- RunCommand.h - kiln run ----------------------------------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_RUNCOMMAND_H
#define KILN_TOOLS_KILN_RUNCOMMAND_H

#include "tools/kiln/CommandLine.h"

namespace kiln::tool {

/// Loads the artifact, reads every feed, runs `init` (when the artifact has
/// one and it is not the program asked for) and then the program, and
/// writes every fetch. Fetch files are written only once everything else
/// has succeeded, each whole or not at all. With --data, trains instead
/// (runtime/train/TrainingLoop.h). With --metrics-port, serves Prometheus
/// metrics meanwhile (runtime/metrics/PrometheusMetrics.h), and for
/// --metrics-linger seconds after. Returns the exit code; a failure is one
/// line on stderr.
int runCommand(const RunOptions &options);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_RUNCOMMAND_H
