//===- MetricsProgressLineTest.cpp - The live progress line ---------------===//

#include "runtime/metrics/ProgressLine.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

using namespace kiln::metrics;
using Clock = ProgressLine::Clock;
using std::chrono::milliseconds;

namespace {

/// What is waiting to be read on `fd` (non-blocking).
std::string drain(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t got;
  while ((got = ::read(fd, buffer, sizeof buffer)) > 0)
    text.append(buffer, size_t(got));
  return text;
}

/// A pseudo-terminal: `terminal` is the side a program writes its progress
/// to, `reader` reads what reached the screen.
struct PseudoTerminal {
  PseudoTerminal() {
    reader = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (reader < 0 || ::grantpt(reader) != 0 || ::unlockpt(reader) != 0)
      return;
    terminal = ::open(::ptsname(reader), O_RDWR | O_NOCTTY);
    ::fcntl(reader, F_SETFL, O_NONBLOCK);
  }
  ~PseudoTerminal() {
    if (terminal >= 0)
      ::close(terminal);
    if (reader >= 0)
      ::close(reader);
  }
  int reader = -1;
  int terminal = -1;
};

TEST(MetricsProgressLineTest, Format) {
  EXPECT_EQ(ProgressLine::format(120, 1000, 0.43123, 2345.4, 83),
            "step 120/1000  loss 0.4312  2,345 ex/s  ETA 0:01:23");
  EXPECT_EQ(ProgressLine::format(5, 10, 12.5, 999.5, 3 * 3600 + 7),
            "step 5/10  loss 12.5  1,000 ex/s  ETA 3:00:07");
  EXPECT_EQ(ProgressLine::format(5, 10, 1.5e-5, 1234567, -1),
            "step 5/10  loss 1.5e-05  1,234,567 ex/s  ETA -:--:--");
  EXPECT_EQ(ProgressLine::format(7, 0, 0.5, 12, 10),
            "step 7  loss 0.5  12 ex/s");
}

// Tests that nothing is printed where the stream is not a terminal.
TEST(MetricsProgressLineTest, SilentWithoutTerminal) {
  int pipe[2];
  ASSERT_EQ(::pipe(pipe), 0);
  ::fcntl(pipe[0], F_SETFL, O_NONBLOCK);
  {
    ProgressLine line(10, 0, pipe[1]);
    EXPECT_FALSE(line.isTerminal());
    for (int step = 1; step <= 10; ++step)
      line.update(step, 0.5, 100);
    line.finish();
  }
  EXPECT_EQ(drain(pipe[0]), "");
  ::close(pipe[0]);
  ::close(pipe[1]);
}

// Tests the redraws on a terminal: at most one per 100 ms, the last step
// always, then the newline of finish().
TEST(MetricsProgressLineTest, RedrawsOnTerminal) {
  PseudoTerminal pty;
  if (pty.terminal < 0)
    GTEST_SKIP() << "no pseudo-terminal available";
  ProgressLine line(100, 40, pty.terminal);
  ASSERT_TRUE(line.isTerminal());
  Clock::time_point start = Clock::now();
  line.update(41, 0.5, 1000, start);
  line.update(42, 0.4, 1000, start + milliseconds(50));
  std::string first = drain(pty.reader);
  EXPECT_EQ(first.substr(0, 1), "\r");
  EXPECT_NE(first.find("step 41/100  loss 0.5  1,000 ex/s  ETA "),
            std::string::npos)
      << first;
  EXPECT_EQ(first.substr(first.size() - 3), "\033[K");
  EXPECT_EQ(first.find("step 42"), std::string::npos);
  line.update(43, 0.3, 1000, start + milliseconds(120));
  EXPECT_NE(drain(pty.reader).find("step 43/100"), std::string::npos);
  line.update(44, 0.2, 1000, start + milliseconds(130));
  EXPECT_EQ(drain(pty.reader), "");
  line.finish();
  std::string last = drain(pty.reader);
  EXPECT_NE(last.find("step 44/100  loss 0.2"), std::string::npos) << last;
  EXPECT_NE(last.find('\n'), std::string::npos);
  line.finish();
  EXPECT_EQ(drain(pty.reader), "");
}

// Tests the ETA: the time per step so far times the steps left.
TEST(MetricsProgressLineTest, EstimatesTimeLeft) {
  PseudoTerminal pty;
  if (pty.terminal < 0)
    GTEST_SKIP() << "no pseudo-terminal available";
  ProgressLine line(1000, 0, pty.terminal);
  // 100 steps in (at least) 10 ms: 900 steps left need 90 ms or more, which
  // is well under a second as long as the test runs promptly.
  Clock::time_point now = Clock::now() + milliseconds(10);
  line.update(100, 1, 1, now);
  EXPECT_NE(drain(pty.reader).find("ETA 0:00:00"), std::string::npos);
  line.update(1000, 1, 1, now + milliseconds(1));
  EXPECT_NE(drain(pty.reader).find("step 1000/1000"), std::string::npos);
}

} // namespace
