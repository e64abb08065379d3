//===- ShardReport.h - A parameter server's statistics as text --*- C++ -*-===//
//
// What `--ps-report` prints for one server (docs/parameter-server.md): a
// line of totals and rates, then one line per variable it holds rows of.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PS_SHARDREPORT_H
#define KILN_RUNTIME_PS_SHARDREPORT_H

#include "proto/kiln/ps.pb.h"

#include <string>

namespace kiln::ps {

/// "ps:I: ..." lines, each ending in a newline.
std::string formatServerReport(const StatsReply &stats);
/// " (K of them skipped: fp16 gradients not finite)" (async: "(and K pushes
/// skipped: ...)") where fp16 loss scaling skipped some; else empty.
std::string skippedUpdatesNote(const StatsReply &stats);

} // namespace kiln::ps

#endif // KILN_RUNTIME_PS_SHARDREPORT_H
