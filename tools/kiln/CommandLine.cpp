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
         "       kiln inspect ARTIFACT [--json]\n"
         "\n"
         "run      runs the artifact's init program, then --program (default "
         "forward),\n"
         "         with each feed read from a .npy file and each fetch "
         "written to one;\n"
         "         --synthetic-feeds makes up the feeds not given, --summary "
         "prints the fetches\n"
         "inspect  prints what the artifact holds, as text or JSON\n";
}

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
