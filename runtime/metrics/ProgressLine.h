//===- ProgressLine.h - A live progress line on the terminal ----*- C++ -*-===//
//
// Training progress on one line of a terminal, rewritten in place:
//
//   step 120/1000  loss 0.4312  2,345 ex/s  ETA 0:01:23
//
// It is drawn only when the stream is a terminal (isatty), at most ten times
// a second; anywhere else it prints nothing, and the caller prints its own
// summaries. Not thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_METRICS_PROGRESSLINE_H
#define KILN_RUNTIME_METRICS_PROGRESSLINE_H

#include <chrono>
#include <cstdint>
#include <string>
#include <unistd.h>

namespace kiln::metrics {

class ProgressLine {
public:
  using Clock = std::chrono::steady_clock;

  /// Progress from `startStep` (the step a run resumes at) to `totalSteps`
  /// (0 or less when unknown: no total and no ETA), drawn on `fd`.
  ProgressLine(int64_t totalSteps, int64_t startStep, int fd = STDERR_FILENO);

  /// Redraws the line for `step` if the stream is a terminal and the line
  /// was last drawn 100 ms or more ago (or `step` is the last).
  void update(int64_t step, double loss, double examplesPerSecond);
  /// update() as of `now`.
  void update(int64_t step, double loss, double examplesPerSecond,
              Clock::time_point now);

  /// Draws the latest state if it was skipped, then ends the line. Does
  /// nothing if no line was drawn.
  void finish();

  /// Whether the line is drawn at all.
  bool isTerminal() const { return terminal_; }

  /// The line's text ("step 120/1000  loss 0.4312  2,345 ex/s  ETA 0:01:23");
  /// `totalSteps` <= 0 leaves out the total and the ETA, a negative
  /// `etaSeconds` shows "ETA -:--:--".
  static std::string format(int64_t step, int64_t totalSteps, double loss,
                            double examplesPerSecond, double etaSeconds);

private:
  void draw(const std::string &text);

  int64_t total_;
  int64_t start_;
  int fd_;
  bool terminal_;
  bool drawn_ = false;  ///< A line is on the screen.
  std::string skipped_; ///< The newest text not drawn, if any.
  Clock::time_point began_;
  Clock::time_point lastDraw_;
};

} // namespace kiln::metrics

#endif // KILN_RUNTIME_METRICS_PROGRESSLINE_H
