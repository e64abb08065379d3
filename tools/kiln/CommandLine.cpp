//===- CommandLine.cpp - kiln's command line ------------------------------===//

#include "tools/kiln/CommandLine.h"

#include <set>

namespace kiln::tool {

namespace {

/// Walks the arguments, giving the value of "--flag VALUE" and
/// "--flag=VALUE" alike.
class ArgumentReader {
public:
  explicit ArgumentReader(const std::vector<std::string> &args) : args_(args) {}

  bool done() const { return next_ >= args_.size(); }
  const std::string &current() const { return args_[next_]; }

  /// Whether the current argument is `flag` or `flag=VALUE`.
  bool at(const std::string &flag) const {
    const std::string &arg = args_[next_];
    return arg == flag || arg.compare(0, flag.size() + 1, flag + "=") == 0;
  }

  /// Takes the current argument, `flag` or `flag=VALUE`, and its value.
  bool takeValue(const std::string &flag, std::string &value,
                 std::string &error) {
    const std::string &arg = args_[next_++];
    if (arg != flag) {
      value = arg.substr(flag.size() + 1);
      return true;
    }
    if (done()) {
      error = "kiln: error: " + flag + " needs a value";
      return false;
    }
    value = args_[next_++];
    return true;
  }

  const std::string &take() { return args_[next_++]; }

private:
  const std::vector<std::string> &args_;
  size_t next_ = 0;
};

bool parseNamedFile(const std::string &flag, const std::string &value,
                    NamedFile &file, std::string &error) {
  size_t equals = value.find('=');
  if (equals == std::string::npos || equals == 0 ||
      equals + 1 == value.size()) {
    error = "kiln: error: " + flag + " '" + value + "': expected NAME=FILE.npy";
    return false;
  }
  file = {value.substr(0, equals), value.substr(equals + 1)};
  return true;
}

bool unknownArgument(const std::string &arg, std::string &error) {
  error = arg.size() > 1 && arg[0] == '-'
              ? "kiln: error: unknown option '" + arg + "'"
              : "kiln: error: unexpected argument '" + arg + "'";
  return false;
}

bool takeArtifact(ArgumentReader &reader, std::string &artifact,
                  std::string &error) {
  if (!artifact.empty())
    return unknownArgument(reader.current(), error);
  artifact = reader.take();
  return true;
}

} // namespace

const char *usage() {
  return "usage: kiln run ARTIFACT [--program NAME] [--feed NAME=FILE.npy]... "
         "[--fetch NAME=FILE.npy]...\n"
         "                [--synthetic-feeds] [--summary]\n"
         "       kiln run ARTIFACT --data FILE --steps N [--shuffle] [--seed S]\n"
         "                [--skip-bad-rows] [--metrics-out FILE.jsonl] [--logdir DIR]\n"
         "                [--save DIR] [--save-every N] [--keep N] [--restore DIR]\n"
         "                [--eval-data FILE] [--eval-every N]\n"
         "       kiln inspect ARTIFACT [--json]\n"
         "\n"
         "run      runs the artifact's init program, then --program (default "
         "forward),\n"
         "         with each feed read from a .npy file and each fetch "
         "written to one;\n"
         "         --synthetic-feeds makes up the feeds not given, --summary "
         "prints the fetches\n"
         "         with --data, trains: N is the step to stop at (docs/training.md)\n"
         "inspect  prints what the artifact holds, as text or JSON\n";
}

namespace {

/// Reads a non-negative integer flag value.
bool parseCount(const std::string &flag, const std::string &value, int64_t &out,
                std::string &error) {
  try {
    size_t used = 0;
    long long parsed = std::stoll(value, &used);
    if (used == value.size() && parsed >= 0) {
      out = parsed;
      return true;
    }
  } catch (const std::exception &) {
  }
  error = "kiln: error: " + flag + " '" + value + "': expected a whole number >= 0";
  return false;
}

/// Takes one of the training flags that carry a value; returns whether the
/// current argument was one (with `error` set when its value is bad).
bool takeTrainingFlag(ArgumentReader &reader, train::TrainOptions &training,
                      std::string &error) {
  const std::pair<const char *, std::string *> paths[] = {
      {"--data", &training.data},          {"--metrics-out", &training.metricsOut},
      {"--logdir", &training.logdir},      {"--save", &training.saveDir},
      {"--restore", &training.restore},    {"--eval-data", &training.evalData}};
  for (const auto &[flag, target] : paths)
    if (reader.at(flag)) {
      reader.takeValue(flag, *target, error);
      return true;
    }
  int64_t keep = training.keep, seed = 0;
  const std::pair<const char *, int64_t *> counts[] = {{"--steps", &training.steps},
                                                       {"--save-every", &training.saveEvery},
                                                       {"--eval-every", &training.evalEvery},
                                                       {"--keep", &keep},
                                                       {"--seed", &seed}};
  for (const auto &[flag, target] : counts)
    if (reader.at(flag)) {
      std::string value;
      if (reader.takeValue(flag, value, error))
        parseCount(flag, value, *target, error);
      if (std::string(flag) == "--keep")
        training.keep = static_cast<int>(keep);
      if (std::string(flag) == "--seed")
        training.seed = static_cast<uint64_t>(seed);
      return true;
    }
  return false;
}

} // namespace

bool parseRunOptions(const std::vector<std::string> &args, RunOptions &options,
                     std::string &error) {
  ArgumentReader reader(args);
  std::set<std::string> feedNames, fetchPaths;
  while (!reader.done()) {
    std::string value;
    if (reader.at("--feed")) {
      NamedFile feed;
      if (!reader.takeValue("--feed", value, error) ||
          !parseNamedFile("--feed", value, feed, error))
        return false;
      if (!feedNames.insert(feed.name).second) {
        error = "kiln: error: --feed '" + feed.name + "' is given twice";
        return false;
      }
      options.feeds.push_back(feed);
    } else if (reader.at("--fetch")) {
      NamedFile fetch;
      if (!reader.takeValue("--fetch", value, error) ||
          !parseNamedFile("--fetch", value, fetch, error))
        return false;
      if (!fetchPaths.insert(fetch.path).second) {
        error = "kiln: error: --fetch: two fetches would write '" + fetch.path +
                "'";
        return false;
      }
      options.fetches.push_back(fetch);
    } else if (reader.at("--program")) {
      if (!reader.takeValue("--program", options.program, error))
        return false;
    } else if (reader.current() == "--synthetic-feeds") {
      options.syntheticFeeds = true;
      reader.take();
    } else if (reader.current() == "--summary") {
      options.summary = true;
      reader.take();
    } else if (reader.current() == "--shuffle") {
      options.training.shuffle = true;
      reader.take();
    } else if (reader.current() == "--skip-bad-rows") {
      options.training.skipBadRows = true;
      reader.take();
    } else if (takeTrainingFlag(reader, options.training, error)) {
      if (!error.empty())
        return false;
    } else if (reader.current().size() > 1 && reader.current()[0] == '-') {
      return unknownArgument(reader.current(), error);
    } else if (!takeArtifact(reader, options.artifact, error)) {
      return false;
    }
  }
  if (options.artifact.empty()) {
    error = "kiln: error: kiln run needs an artifact file";
    return false;
  }
  train::TrainOptions &training = options.training;
  training.artifact = options.artifact;
  bool trainingFlags = training.steps != 0 || !training.metricsOut.empty() ||
                       !training.logdir.empty() || !training.saveDir.empty() ||
                       !training.restore.empty() || !training.evalData.empty();
  if (training.data.empty() && trainingFlags) {
    error = "kiln: error: training flags need --data FILE (or --data synthetic)";
    return false;
  }
  if (!training.data.empty() && training.steps < 1) {
    error = "kiln: error: --data needs --steps N (the step to stop at, N >= 1)";
    return false;
  }
  return true;
}

bool parseInspectOptions(const std::vector<std::string> &args,
                         InspectOptions &options, std::string &error) {
  ArgumentReader reader(args);
  while (!reader.done()) {
    if (reader.current() == "--json") {
      options.json = true;
      reader.take();
    } else if (reader.current().size() > 1 && reader.current()[0] == '-') {
      return unknownArgument(reader.current(), error);
    } else if (!takeArtifact(reader, options.artifact, error)) {
      return false;
    }
  }
  if (options.artifact.empty()) {
    error = "kiln: error: kiln inspect needs an artifact file";
    return false;
  }
  return true;
}

} // namespace kiln::tool
