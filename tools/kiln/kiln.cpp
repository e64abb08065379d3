//===- kiln.cpp - The kiln runtime driver ---------------------------------===//
//
//   kiln run ARTIFACT [--program NAME] [--feed NAME=FILE.npy]...
//                     [--fetch NAME=FILE.npy]...
//   kiln inspect ARTIFACT [--json]
//
// Every failure is one line on stderr, naming the file, feed or field, and
// exit code 1; no fetch file is written unless the whole run succeeded.
//
//===----------------------------------------------------------------------===//

#include "runtime/support/PrintableText.h"
#include "tools/kiln/CommandLine.h"
#include "tools/kiln/InspectCommand.h"
#include "tools/kiln/RunCommand.h"

#include <cstdlib>
#include <iostream>
#include <unistd.h>

using namespace kiln::tool;

namespace {

/// oneDNN's OpenMP threads spin after each GEMM by default, taking the cores
/// the single-threaded kernels between GEMMs need (40x slower training of
/// examples/mlp.pbtxt on 2 cores). libgomp reads its settings when it loads,
/// before main: so set OMP_WAIT_POLICY=passive, unless the user chose one,
/// and start again.
void useSleepingOpenMpThreads(char **argv) {
  if (std::getenv("OMP_WAIT_POLICY"))
    return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  execv("/proc/self/exe", argv);
  // Not re-executed (no /proc): run on with libgomp's defaults.
}

} // namespace

int main(int argc, char **argv) {
  useSleepingOpenMpThreads(argv);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << usage();
    return 1;
  }
  std::string command = args.front();
  args.erase(args.begin());
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << usage();
    return 0;
  }
  std::string error;
  if (command == "run") {
    RunOptions options;
    if (!parseRunOptions(args, options, error)) {
      std::cerr << kiln::printableText(error) << "\n";
      return 1;
    }
    return runCommand(options);
  }
  if (command == "inspect") {
    InspectOptions options;
    if (!parseInspectOptions(args, options, error)) {
      std::cerr << kiln::printableText(error) << "\n";
      return 1;
    }
    return inspectCommand(options);
  }
  std::cerr << "kiln: error: unknown command '" << kiln::printableText(command)
            << "' (commands: run, inspect; kiln --help)\n";
  return 1;
}
