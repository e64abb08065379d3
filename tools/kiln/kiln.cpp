//===- kiln.cpp - The kiln runtime driver ---------------------------------===//
//
//   kiln run ARTIFACT [--program NAME] [--feed NAME=FILE.npy]...
//                     [--fetch NAME=FILE.npy]...
//   kiln run ARTIFACT --data FILE --steps N ... [--metrics-port PORT]
//   kiln serve ARTIFACT [--task TYPE:INDEX] [--cluster FILE] --data FILE --steps N ...
//   kiln launch ARTIFACT --workers N [--replicas-per-worker R] --data FILE --steps N ...
//   kiln inspect ARTIFACT [--json]
//
// kiln --help and kiln COMMAND --help list the flags (CommandLine.cpp).
//
// Every failure is one line on stderr, naming the file, feed or field, and
// exit code 1; no fetch file is written unless the whole run succeeded.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln/CommandLine.h"
#include "tools/kiln/InspectCommand.h"
#include "tools/kiln/LaunchCommand.h"
#include "tools/kiln/RunCommand.h"
#include "tools/kiln/ServeCommand.h"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

using namespace kiln::tool;

namespace {

/// Spins of an idle OpenMP thread before it sleeps (libgomp's default with
/// no policy set is 300,000); docs/performance.md has the measurements.
constexpr const char *kSpinCount = "10000";

/// oneDNN's OpenMP threads spin after each GEMM by default, taking the cores
/// the single-threaded kernels between GEMMs need (40x slower training of
/// examples/mlp.pbtxt on 2 cores). libgomp reads its settings when it loads,
/// before main: so set OMP_WAIT_POLICY=passive, unless the user chose one,
/// and start again. A short spin first (GOMP_SPINCOUNT, unless set) keeps
/// the threads awake from one row-parallel kernel to the next: waking
/// sleeping threads for each made the transformer's step 1.6x slower.
void useSleepingOpenMpThreads(char **argv) {
  if (std::getenv("OMP_WAIT_POLICY"))
    return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  if (!std::getenv("GOMP_SPINCOUNT"))
    setenv("GOMP_SPINCOUNT", kSpinCount, 1);
  execv("/proc/self/exe", argv);
  // Not re-executed (no /proc): run on with libgomp's defaults.
}

} // namespace

int main(int argc, char **argv) {
  useSleepingOpenMpThreads(argv);
  // A peer that closes its connection is an error a collective reports, not
  // a signal that kills the process.
  signal(SIGPIPE, SIG_IGN);
  CommandLine commandLine =
      parseCommandLine(std::vector<std::string>(argv + 1, argv + argc));
  switch (commandLine.command) {
  case CommandLine::Command::Run:
    return runCommand(commandLine.run);
  case CommandLine::Command::Serve:
    return serveCommand(commandLine.serve);
  case CommandLine::Command::Launch:
    return launchCommand(commandLine.launch);
  case CommandLine::Command::Inspect:
    return inspectCommand(commandLine.inspect);
  case CommandLine::Command::Help:
    std::cout << commandLine.message;
    return 0;
  case CommandLine::Command::Error:
    break;
  }
  std::cerr << commandLine.message;
  return 1;
}
