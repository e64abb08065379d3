//===- CommandLine.h - kiln's command line ----------------------*- C++ -*-===//

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
};

/// kiln inspect ARTIFACT [--json]
struct InspectOptions {
  std::string artifact;
  bool json = false;
};

/// The usage text, ending in a newline.
const char *usage();

/// Parses the arguments after `kiln run`. On failure sets `error` to one line
/// ("kiln: error: ...") and returns false.
bool parseRunOptions(const std::vector<std::string> &args, RunOptions &options,
                     std::string &error);

/// Parses the arguments after `kiln inspect`.
bool parseInspectOptions(const std::vector<std::string> &args,
                         InspectOptions &options, std::string &error);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_COMMANDLINE_H
