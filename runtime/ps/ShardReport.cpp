//===- ShardReport.cpp - A parameter server's statistics as text ----------===//

#include "runtime/ps/ShardReport.h"

#include <algorithm>
#include <cstdio>

namespace kiln::ps {
namespace {

std::string perSecond(double count, double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f/s", seconds > 0 ? count / seconds : 0.0);
  return text;
}

} // namespace

std::string skippedUpdatesNote(const StatsReply &stats) {
  // Sync: skipped steps are among the updates; async: pushes applied none.
  if (stats.skipped_steps() == 0)
    return "";
  return (stats.async() ? " (and " : " (") + std::to_string(stats.skipped_steps()) +
         (stats.async() ? " pushes" : " of them") + " skipped: fp16 gradients not finite)";
}

std::string formatServerReport(const StatsReply &stats) {
  std::string name = "ps:" + std::to_string(stats.server_index());
  double seconds = stats.seconds();
  std::string text = name + ": " + std::to_string(stats.applied_steps()) + " updates" +
                     skippedUpdatesNote(stats) + "; " +
                     std::to_string(stats.pull_requests()) + " pulls (" +
                     perSecond(stats.pull_requests(), seconds) + "), " +
                     std::to_string(stats.push_requests()) + " pushes (" +
                     perSecond(stats.push_requests(), seconds) + "); " +
                     std::to_string(stats.bytes_received()) + " bytes in (" +
                     perSecond(stats.bytes_received(), seconds) + "), " +
                     std::to_string(stats.bytes_sent()) + " out (" +
                     perSecond(stats.bytes_sent(), seconds) + ")\n";
  for (const VariableStats &variable : stats.variables()) {
    if (variable.rows() == 0 && !variable.hash())
      continue;
    text += name + ":   " + variable.name() + (variable.hash() ? " (hash)" : "") + ": " +
            std::to_string(variable.rows()) + " rows, " + std::to_string(variable.bytes()) +
            " bytes; " + std::to_string(variable.rows_pulled()) + " rows pulled, " +
            std::to_string(variable.rows_pushed()) + " pushed";
    if (variable.hash()) {
      text += "; " + std::to_string(variable.rows_evicted()) + " evicted, " +
              std::to_string(variable.waiting_admission()) + " ids waiting for admission, " +
              std::to_string(variable.gradients_dropped()) + " gradients dropped";
    }
    int hottest = std::min(variable.hottest_ids_size(), variable.hottest_counts_size());
    if (hottest > 0) {
      text += "; hottest";
      for (int i = 0; i < hottest; ++i)
        text += (i ? ", " : " ") + std::to_string(variable.hottest_ids(i)) + " (" +
                std::to_string(variable.hottest_counts(i)) + ")";
    }
    text += "\n";
  }
  return text;
}

} // namespace kiln::ps
