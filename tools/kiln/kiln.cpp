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

#include "runtime/cpu/Threads.h"
#include "runtime/support/PrintableText.h"
#include "tools/kiln/CommandLine.h"
#include "tools/kiln/InspectCommand.h"
#include "tools/kiln/LaunchCommand.h"
#include "tools/kiln/OwnExecutable.h"
#include "tools/kiln/RunCommand.h"
#include "tools/kiln/ServeCommand.h"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace kiln::tool;

namespace {

/// Spins of an idle OpenMP thread before it sleeps (libgomp's default with
/// no policy set is 300,000); docs/performance.md has the measurements.
constexpr const char *kSpinCount = "10000";

/// The threads OMP_NUM_THREADS asks for (its first number: "8,2" gives
/// nested levels), or 0 when that is not a whole number 1..kMaxThreads.
int ompThreadsOf(const std::string &text) {
  std::string first = text.substr(0, text.find(','));
  // libgomp allows spaces around the number.
  size_t begin = first.find_first_not_of(" \t"), end = first.find_last_not_of(" \t");
  first = begin == std::string::npos ? "" : first.substr(begin, end - begin + 1);
  if (first.empty() || first.size() > 4 ||
      first.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  int threads = std::stoi(first);
  return threads >= 1 && threads <= kMaxThreads ? threads : 0;
}

/// oneDNN's OpenMP threads spin after each GEMM by default, taking the cores
/// the single-threaded kernels between GEMMs need (40x slower training of
/// examples/mlp.pbtxt on 2 cores): so OMP_WAIT_POLICY=passive, unless the
/// user chose one. A short spin first (GOMP_SPINCOUNT, unless set) keeps
/// the threads awake from one row-parallel kernel to the next: waking
/// sleeping threads for each made the transformer's step 1.6x slower. And
/// --threads N becomes OMP_NUM_THREADS, which every part of the runtime
/// reads (libkiln.so's copy too), as does a cgroup CPU quota smaller than
/// the cores (Threads.h). libgomp reads its settings when it loads, before
/// main: so set them and start again.
void configureOpenMp(int argc, char **argv) {
  bool restart = false;
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    if (!std::getenv("GOMP_SPINCOUNT"))
      setenv("GOMP_SPINCOUNT", kSpinCount, 1);
    restart = true;
  }
  int threads = threadsFlagOf(std::vector<std::string>(argv + 1, argv + argc));
  // libgomp ignores a value it cannot read (after a warning line of its
  // own at load, which kiln cannot stop); kiln refuses it, as --threads.
  const char *given = std::getenv("OMP_NUM_THREADS");
  std::string command = argc > 1 ? argv[1] : "";
  bool computes = command == "run" || command == "serve" || command == "launch";
  if (!threads && given && computes && !ompThreadsOf(given)) {
    std::cerr << "kiln: error: OMP_NUM_THREADS '" << kiln::printableText(given)
              << "': expected a whole number of threads 1.." << kMaxThreads << "\n";
    std::exit(1);
  }
  // Under a container's CPU limit (a cgroup quota smaller than the affinity
  // mask), libgomp would still start a thread per core of the mask. Not for
  // kiln launch, which shares those cores among its tasks (each gets its
  // OMP_NUM_THREADS unless the user set one for all).
  bool launching = command == "launch";
  if (!threads && !launching && !std::getenv("OMP_NUM_THREADS") &&
      kiln::cpu::usableCores() < kiln::cpu::affinityCores())
    threads = kiln::cpu::usableCores();
  if (threads) {
    std::string value = std::to_string(threads);
    const char *current = std::getenv("OMP_NUM_THREADS");
    if (!current || value != current) {
      setenv("OMP_NUM_THREADS", value.c_str(), 1);
      restart = true;
    }
  }
  if (restart)
    execv(kiln::tool::ownExecutable().c_str(), argv);
  // Not re-executed (no /proc): run on with libgomp's defaults.
}

/// One line when --threads asks for more threads than the cores: they take
/// turns, and each parallel GEMM or kernel waits for its slowest thread.
void warnAboutThreads(const CommandLine &commandLine) {
  int threads = 0, processes = 1;
  switch (commandLine.command) {
  case CommandLine::Command::Run: threads = commandLine.run.threads; break;
  case CommandLine::Command::Serve: threads = commandLine.serve.threads; break;
  case CommandLine::Command::Launch:
    threads = commandLine.launch.threads;
    processes = commandLine.launch.workers;
    break;
  default: break;
  }
  // Without --threads, the threads OMP_NUM_THREADS gives each process (of
  // the commands that compute).
  const char *given = std::getenv("OMP_NUM_THREADS");
  bool computes = commandLine.command == CommandLine::Command::Run ||
                  commandLine.command == CommandLine::Command::Serve ||
                  commandLine.command == CommandLine::Command::Launch;
  bool fromEnvironment = threads == 0 && given && computes;
  if (fromEnvironment)
    threads = ompThreadsOf(given);
  int cores = kiln::cpu::usableCores();
  if (threads == 0 || threads * processes <= cores)
    return;
  std::cerr << "kiln: warning: " << (fromEnvironment ? "OMP_NUM_THREADS=" : "--threads ")
            << threads;
  if (processes > 1)
    std::cerr << " in each of " << processes << " workers";
  std::cerr << " on " << cores << " core" << (cores == 1 ? "" : "s")
            << ": threads beyond the cores take turns, and every parallel GEMM and "
               "kernel waits for its slowest thread (docs/training.md has the cost)\n";
}

} // namespace

int main(int argc, char **argv) {
  configureOpenMp(argc, argv);
  // A peer that closes its connection is an error a collective reports, not
  // a signal that kills the process.
  signal(SIGPIPE, SIG_IGN);
  CommandLine commandLine =
      parseCommandLine(std::vector<std::string>(argv + 1, argv + argc));
  warnAboutThreads(commandLine);
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
