//===- CommandLine.h - kiln's command line ----------------------*- C++ -*-===//
//
// CLI11 splits the command line into the subcommand, its flags and their
// values; the values are checked here, so that every mistake is one line,
// "kiln: error: ...", naming the flag and the value.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_COMMANDLINE_H
#define KILN_TOOLS_KILN_COMMANDLINE_H

#include "runtime/train/TrainingLoop.h"

#include <string>
#include <vector>

namespace kiln::tool {

/// NAME=FILE.npy of --feed and --fetch.
struct NamedFile {
  std::string name;
  std::string path;
};

/// The Prometheus endpoint: --metrics-port, --metrics-address,
/// --metrics-linger.
struct MetricsEndpointOptions {
  /// -1: no endpoint; 0: any free port (printed once bound).
  int port = -1;
  /// An IPv4 address of this host; 0.0.0.0 listens on all of them.
  std::string address = "127.0.0.1";
  /// Seconds to keep serving after the run ends; SIGINT or SIGTERM ends
  /// the wait early.
  double lingerSeconds = 0;
};

/// kiln run ARTIFACT [--program NAME] [--feed NAME=FILE]... [--fetch ...]...
///          [--synthetic-feeds] [--summary]
struct RunOptions {
  std::string artifact;
  std::string program = "forward";
  std::vector<NamedFile> feeds;
  std::vector<NamedFile> fetches;
  /// Feeds without --feed get made-up data (SyntheticFeeds.h).
  bool syntheticFeeds = false;
  /// Print every fetch's shape, min, mean and max after the run.
  bool summary = false;
  /// With --data: train (runtime/train/TrainingLoop.h) instead of one run.
  train::TrainOptions training;
  /// --all-reduce, as given (parsed into training.group.gloo).
  std::string allReduce;
  std::string collectives; ///< --collectives=auto|gloo
  MetricsEndpointOptions metrics;
  int threads = 0; ///< --threads; 0: not given.
};

/// kiln serve ARTIFACT [--task TYPE:INDEX] [--cluster FILE] --data FILE
///            --steps N ...: one task of a cluster (ServeCommand.h).
struct ServeOptions {
  /// --data and the other training flags; training.group.localReplicas is
  /// --replicas, the replicas this task runs.
  train::TrainOptions training;
  std::string task;        ///< --task; empty: TF_CONFIG's "task".
  std::string clusterFile; ///< --cluster; empty: the TF_CONFIG variable.
  double connectSeconds = 60; ///< --connect-timeout: patience for the chief.
  std::string tlsCert, tlsKey, tlsCa; ///< PEM file paths.
  int threads = 0; ///< --threads; 0: not given.
};

/// kiln launch ARTIFACT --workers N [--replicas-per-worker R] --data FILE
///             --steps N ...: a whole cluster on this machine (LaunchCommand.h).
struct LaunchOptions {
  std::string artifact;
  int workers = 0;
  int replicasPerWorker = 1;
  /// Parameter-server tasks (--ps M); 0: none.
  int psTasks = 0;
  /// --evaluator: one evaluator task following the chief's checkpoints.
  bool evaluator = false;
  /// The flags every task's `kiln serve` gets, as given.
  std::vector<std::string> serveFlags;
  int threads = 0; ///< --threads; 0: not given.
};

/// kiln inspect ARTIFACT [--json]
struct InspectOptions {
  std::string artifact;
  bool json = false;
};

/// What the command line asks for.
struct CommandLine {
  enum class Command { Run, Serve, Launch, Inspect, Help, Error };
  Command command = Command::Error;
  RunOptions run;
  ServeOptions serve;
  LaunchOptions launch;
  InspectOptions inspect;
  /// Help: the text for stdout (exit 0). Error: the text for stderr (exit
  /// 1): one "kiln: error: ..." line (control characters escaped), or the
  /// usage when nothing was given. Both end in a newline.
  std::string message;
};

/// Parses the arguments after the program name.
CommandLine parseCommandLine(const std::vector<std::string> &args);

/// The most --threads a command takes.
inline constexpr int kMaxThreads = 4096;

/// The value of the last --threads in `args` when it is a valid count, else
/// 0 (parseCommandLine reports an invalid one). kiln reads it before
/// parsing: OpenMP takes its threads from OMP_NUM_THREADS when it loads.
int threadsFlagOf(const std::vector<std::string> &args);

/// Of `candidates`, the one nearest to `typed` (case-insensitive edit
/// distance, a transposition counting as one edit, leading dashes ignored)
/// if it is near enough to be a likely typo; otherwise empty.
std::string nearestName(const std::string &typed,
                        const std::vector<std::string> &candidates);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_COMMANDLINE_H
