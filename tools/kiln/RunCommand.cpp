//===- RunCommand.cpp - kiln run ------------------------------------------===//
//
// Goes through the public C API, as any embedder would.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln/RunCommand.h"

#include "runtime/api/kiln.h"
#include "runtime/metrics/PrometheusMetrics.h"
#include "runtime/support/PrintableText.h"
#include "runtime/support/StagedFile.h"
#include "tools/kiln/SyntheticFeeds.h"
#include "tools/kiln/TensorFiles.h"

#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <string_view>
#include <thread>

namespace kiln::tool {

namespace {

struct StatusDeleter {
  void operator()(kiln_status *status) const { kiln_status_free(status); }
};
struct ArtifactDeleter {
  void operator()(kiln_artifact *artifact) const {
    kiln_artifact_free(artifact);
  }
};
struct SessionDeleter {
  void operator()(kiln_session *session) const { kiln_session_free(session); }
};
using Status = std::unique_ptr<kiln_status, StatusDeleter>;
using Artifact = std::unique_ptr<kiln_artifact, ArtifactDeleter>;
using Session = std::unique_ptr<kiln_session, SessionDeleter>;

constexpr std::string_view kInitProgram = "init";

/// Prints `message` as the one error line.
bool report(const std::string &message) {
  std::cerr << printableText(message) << "\n";
  return false;
}

int fail(const std::string &message) {
  report(message);
  return 1;
}

/// Prints a failed status's message, prefixed with "kiln: error: " unless it
/// already names a file ("PATH: error: ...").
/// Prints a failure's one line, led by `file` (what it is about) when given.
bool failed(kiln_status *raw, const std::string &file = "") {
  Status status(raw);
  if (!status)
    return false;
  std::string message = kiln_status_message(status.get());
  if (message.find(": error: ") == std::string::npos)
    message = (file.empty() ? "kiln" : file) + ": error: " + message;
  std::cerr << message << "\n";
  return true;
}

/// Feeds or fetches of `program`.
bool listBindings(const kiln_artifact *artifact, const std::string &program,
                  kiln_binding_kind kind,
                  std::vector<kiln_tensor_info> &infos) {
  size_t count = 0;
  if (failed(
          kiln_artifact_binding_count(artifact, program.c_str(), kind, &count)))
    return false;
  infos.resize(count);
  for (size_t i = 0; i < count; ++i)
    if (failed(kiln_artifact_binding_info(artifact, program.c_str(), kind, i,
                                          &infos[i])))
      return false;
  return true;
}

std::string listNames(const std::vector<kiln_tensor_info> &infos) {
  std::string names;
  for (const kiln_tensor_info &info : infos)
    names += (names.empty() ? "" : ", ") + std::string(info.name);
  return names.empty() ? "none" : names;
}

const kiln_tensor_info *findBinding(const std::vector<kiln_tensor_info> &infos,
                                    const std::string &name) {
  for (const kiln_tensor_info &info : infos)
    if (name == info.name)
      return &info;
  return nullptr;
}

bool hasProgram(const kiln_artifact *artifact, std::string_view name,
                std::string &names) {
  size_t count = 0;
  if (failed(kiln_artifact_program_count(artifact, &count)))
    return false;
  bool found = false;
  for (size_t i = 0; i < count; ++i) {
    const char *program = nullptr;
    if (failed(kiln_artifact_program_name(artifact, i, &program)))
      return false;
    found |= name == program;
    names += (names.empty() ? "" : ", ") + std::string(program);
  }
  return found;
}

/// A feed read from its file, ready to bind.
struct FeedData {
  const kiln_tensor_info *info;
  std::vector<uint8_t> bytes;
  /// The .npy file it came from; empty for a synthetic feed.
  std::string path;
};

/// Checks the --feed and --fetch names against the program and reads every
/// feed file.
bool prepareFeeds(const RunOptions &options, const kiln_artifact *artifact,
                  const std::vector<kiln_tensor_info> &feeds,
                  const std::vector<kiln_tensor_info> &fetches,
                  std::vector<FeedData> &data) {
  const std::string where = "program '" + options.program + "'";
  for (const NamedFile &feed : options.feeds)
    if (!findBinding(feeds, feed.name))
      return report("kiln: error: --feed '" + feed.name + "': " + where +
                    " has no feed '" + feed.name +
                    "' (feeds: " + listNames(feeds) + ")");
  for (const NamedFile &fetch : options.fetches)
    if (!findBinding(fetches, fetch.name))
      return report("kiln: error: --fetch '" + fetch.name + "': " + where +
                    " has no fetch '" + fetch.name +
                    "' (fetches: " + listNames(fetches) + ")");
  for (size_t index = 0; index < feeds.size(); ++index) {
    const kiln_tensor_info &info = feeds[index];
    const NamedFile *given = nullptr;
    for (const NamedFile &feed : options.feeds)
      if (feed.name == info.name)
        given = &feed;
    if (!given && options.syntheticFeeds) {
      int64_t bound = 0;
      if (failed(kiln_artifact_binding_id_bound(artifact, options.program.c_str(), index,
                                                &bound)))
        return false;
      data.push_back({&info, syntheticFeed(info, bound), ""});
      continue;
    }
    if (!given)
      return report("kiln: error: " + where + " needs feed '" + info.name +
                    "' (" + describeTensor(info) + "): add --feed " +
                    info.name + "=FILE.npy or --synthetic-feeds");
    data::NpyArray array;
    std::string error;
    FeedData feed{&info, {}, given->path};
    if (!data::readNpyFile(given->path, array, error) ||
        !feedBytesFromNpy(array, given->path, info, feed.bytes, error))
      return report(error);
    data.push_back(std::move(feed));
  }
  return true;
}

/// Writes every fetch: all staged first, then all committed, so that a
/// failure to write one leaves every destination untouched.
bool writeFetches(const RunOptions &options,
                  const std::vector<kiln_tensor_info> &fetches,
                  const std::vector<std::vector<uint8_t>> &results) {
  std::vector<StagedFile> staged(options.fetches.size());
  std::string error;
  for (size_t i = 0; i < options.fetches.size(); ++i) {
    const NamedFile &fetch = options.fetches[i];
    data::NpyArray array =
        npyFromFetch(*findBinding(fetches, fetch.name), results[i]);
    std::vector<uint8_t> bytes = data::encodeNpy(array);
    if (!staged[i].stage(fetch.path, {{bytes.data(), bytes.size()}}, error))
      return report(error);
  }
  for (StagedFile &file : staged)
    if (!file.commit(error))
      return report(error);
  return true;
}

using Clock = std::chrono::steady_clock;

/// Starts the Prometheus endpoint and says where it is (the port matters
/// with --metrics-port 0); null after printing the error line.
std::unique_ptr<metrics::PrometheusMetrics>
serveMetrics(const RunOptions &options) {
  const MetricsEndpointOptions &endpoint = options.metrics;
  std::string error;
  std::unique_ptr<metrics::PrometheusMetrics> served =
      metrics::PrometheusMetrics::serve(
          endpoint.address, endpoint.port, options.artifact,
          options.training.data.empty() ? options.program : "train_step",
          error);
  if (!served) {
    report("kiln: error: --metrics-port " + std::to_string(endpoint.port) +
           ": " + error);
    return nullptr;
  }
  std::cerr << "kiln: serving metrics at " << served->url() << std::endl;
  return served;
}

volatile std::sig_atomic_t stopLingering = 0;

void onStopLingering(int) { stopLingering = 1; }

/// --metrics-linger: serves on for `seconds`, or until SIGINT or SIGTERM.
void linger(double seconds) {
  if (seconds <= 0)
    return;
  struct sigaction action = {};
  action.sa_handler = onStopLingering;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // The run's output is complete: show it now, not when the wait ends.
  std::cout.flush();
  Clock::time_point begin = Clock::now();
  while (!stopLingering &&
         std::chrono::duration<double>(Clock::now() - begin).count() < seconds)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

/// Runs init and the program once.
int runProgram(const RunOptions &options,
               metrics::PrometheusMetrics *prometheus) {
  kiln_artifact *rawArtifact = nullptr;
  if (failed(kiln_artifact_load(options.artifact.c_str(), &rawArtifact)))
    return 1;
  Artifact artifact(rawArtifact);

  std::string programs;
  if (!hasProgram(artifact.get(), options.program, programs))
    return fail("kiln: error: --program '" + options.program + "': " +
                options.artifact + " has no program '" + options.program +
                "' (programs: " + (programs.empty() ? "none" : programs) + ")");
  std::vector<kiln_tensor_info> feeds, fetches;
  std::vector<FeedData> feedData;
  if (!listBindings(artifact.get(), options.program, KILN_FEED, feeds) ||
      !listBindings(artifact.get(), options.program, KILN_FETCH, fetches) ||
      !prepareFeeds(options, artifact.get(), feeds, fetches, feedData))
    return 1;

  kiln_session *rawSession = nullptr;
  if (failed(kiln_session_create(artifact.get(), &rawSession)))
    return 1;
  Session session(rawSession);
  std::string unused;
  if (options.program != kInitProgram &&
      hasProgram(artifact.get(), kInitProgram, unused) &&
      failed(kiln_session_run(session.get(), kInitProgram.data())))
    return 1;
  const char *program = options.program.c_str();
  for (const FeedData &feed : feedData)
    if (failed(kiln_session_bind_feed(session.get(), program, feed.info->name,
                                      feed.info->dtype, feed.bytes.data(),
                                      feed.bytes.size()),
               feed.path))
      return 1;
  Clock::time_point begin = Clock::now();
  if (failed(kiln_session_run(session.get(), program)))
    return 1;
  if (prometheus)
    prometheus->programRan(
        std::chrono::duration<double>(Clock::now() - begin).count());

  if (options.summary)
    for (const kiln_tensor_info &info : fetches) {
      std::vector<uint8_t> bytes(info.byte_size);
      if (failed(kiln_session_read_fetch(session.get(), program, info.name,
                                         info.dtype, bytes.data(),
                                         bytes.size())))
        return 1;
      std::cout << summarizeTensor(info, bytes) << "\n";
    }
  std::vector<std::vector<uint8_t>> results;
  for (const NamedFile &fetch : options.fetches) {
    const kiln_tensor_info &info = *findBinding(fetches, fetch.name);
    std::vector<uint8_t> &bytes = results.emplace_back(info.byte_size);
    if (failed(kiln_session_read_fetch(session.get(), program, info.name,
                                       info.dtype, bytes.data(), bytes.size())))
      return 1;
  }
  return writeFetches(options, fetches, results) ? 0 : 1;
}

} // namespace

int runCommand(const RunOptions &options) {
  std::unique_ptr<metrics::PrometheusMetrics> prometheus;
  if (options.metrics.port >= 0 && !(prometheus = serveMetrics(options)))
    return 1;
  train::TrainOptions training = options.training;
  if (training.group.worldSize > 1) {
    // Replicas that are threads of this process meet in its memory and
    // talk over loopback.
    training.group.store = std::make_shared<collective::MemoryStore>();
    training.group.gloo.hostname = "127.0.0.1";
    training.group.gloo.prefix = "kiln-run";
  }
  int status = options.training.data.empty()
                   ? runProgram(options, prometheus.get())
                   : train::runTraining(training, std::cout, std::cerr, prometheus.get());
  if (prometheus)
    linger(options.metrics.lingerSeconds);
  return status;
}

} // namespace kiln::tool
