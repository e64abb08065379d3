//===- MetricsTensorBoardWriter.cpp - Events for TensorBoard to read ------===//
//
// Writes STEPS scalars tagged TAG to a new event file in LOGDIR, the value
// at step s being 1 / (s + 1), for scripts/check_tensorboard_events.py to
// read back with TensorBoard (the MetricsTensorBoardEvents test).
//
//===----------------------------------------------------------------------===//

#include "runtime/metrics/EventWriter.h"

#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s LOGDIR TAG STEPS\n", argv[0]);
    return 2;
  }
  kiln::metrics::EventWriter writer;
  std::string error;
  bool ok = writer.open(argv[1], error);
  long steps = std::strtol(argv[3], nullptr, 10);
  for (long step = 0; ok && step < steps; ++step)
    ok = writer.scalar(argv[2], step, 1.0 / double(step + 1), error);
  if (!ok || !writer.close(error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  return 0;
}
