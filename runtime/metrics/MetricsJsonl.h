//===- MetricsJsonl.h - Training logs as JSON lines -------------*- C++ -*-===//
//
// One JSON object per line, e.g.
//
//   {"step":120,"loss":0.431234866,"examples_per_second":2345.5}
//
// Values are doubles: one that is a whole number below 2^53 in magnitude is
// written without a decimal point, any other finite value in the shortest
// form that reads back to the same double, NaN and infinities as null. Each
// line goes to the file in one write(2) with O_APPEND, so a reader never sees
// half a line from a live writer and a resumed run continues the same log.
// Not thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_METRICS_METRICSJSONL_H
#define KILN_RUNTIME_METRICS_METRICSJSONL_H

#include <string>
#include <utility>
#include <vector>

namespace kiln::metrics {

class MetricsJsonl {
public:
  MetricsJsonl() = default;
  MetricsJsonl(const MetricsJsonl &) = delete;
  MetricsJsonl &operator=(const MetricsJsonl &) = delete;
  ~MetricsJsonl();

  /// Opens `path` for appending, creating it (not its directory) if needed.
  /// On failure sets `error` to "PATH: error: cannot open: REASON" and
  /// returns false.
  bool open(const std::string &path, std::string &error);

  /// Appends one line holding `fields` in order. On failure sets `error` to
  /// "PATH: error: cannot write: REASON" and returns false.
  bool write(const std::vector<std::pair<std::string, double>> &fields,
             std::string &error);

  void close();

  const std::string &path() const { return path_; }

private:
  std::string path_;
  int fd_ = -1;
};

} // namespace kiln::metrics

#endif // KILN_RUNTIME_METRICS_METRICSJSONL_H
