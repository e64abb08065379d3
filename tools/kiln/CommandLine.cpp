//===- CommandLine.cpp - kiln's command line ------------------------------===//
//
// CLI11 reads the structure: the subcommand, --flag VALUE and --flag=VALUE,
// --help, and leaves what it does not know as extras. Every value is kept
// as text and checked afterwards, so that each error names the flag and the
// value in kiln's words, and an unknown flag gets the nearest known one.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln/CommandLine.h"

#include "runtime/support/PrintableText.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cmath>
#include <set>

namespace kiln::tool {

namespace {

const char *const kUsage =
    R"(usage: kiln run ARTIFACT [--program NAME] [--feed NAME=FILE.npy]... [--fetch NAME=FILE.npy]...
                [--synthetic-feeds] [--summary]
       kiln run ARTIFACT --data FILE --steps N [--shuffle] [--seed S] [--prefetch N]
                [--skip-bad-rows] [--metrics-out FILE.jsonl] [--logdir DIR] [--profile]
                [--profile-slowest N] [--save DIR] [--save-every N] [--keep N]
                [--restore DIR] [--eval-data FILE] [--eval-every N]
       kiln run ... --metrics-port PORT [--metrics-address ADDR] [--metrics-linger SECONDS]
       kiln run ... --replicas N [--all-reduce ALGO] [--collective-timeout SECONDS]
       kiln run ... --threads N
       kiln serve ARTIFACT [--task TYPE:INDEX] [--cluster FILE] [--replicas N]
                [--connect-timeout SECONDS] [--tls-cert F --tls-key F --tls-ca F]
                --data FILE --steps N ...
       kiln launch ARTIFACT --workers N [--replicas-per-worker R] --data FILE --steps N ...
       kiln inspect ARTIFACT [--json]

run      runs the artifact's init program, then --program (default forward),
         with each feed read from a .npy file and each fetch written to one;
         --synthetic-feeds makes up the feeds not given, --summary prints the
         fetches; with --data, trains: N is the step to stop at
         (docs/training.md); --metrics-port serves Prometheus metrics
serve    runs one task of a data-parallel cluster, whose spec is --cluster
         or the TF_CONFIG variable (docs/distributed.md)
launch   runs a whole data-parallel cluster of N workers on this machine
inspect  prints what the artifact holds, as text or JSON

kiln COMMAND --help lists the command's options.
)";

const char *const kRunDescription =
    R"(Runs the artifact's init program, then --program, with each feed read from a
.npy file and each fetch written to one. With --data, trains the artifact
instead (docs/training.md).
)";

const char *const kServeDescription =
    R"(Runs one task of a data-parallel cluster: its spec comes from --cluster FILE or
the TF_CONFIG environment variable, in TensorFlow's shape; every task needs the
same KILN_CLUSTER_TOKEN. The chief (or worker 0) also serves the coordinator.
Trains like kiln run --data (docs/distributed.md).
)";

const char *const kLaunchDescription =
    R"(Starts a data-parallel cluster of --workers tasks on this machine (127.0.0.1,
free ports, a fresh KILN_CLUSTER_TOKEN), each a kiln serve with the training
flags given here, and prefixes their lines with their task. Exits 1, naming the
task, when any of them fails (docs/distributed.md).
)";

const char *const kInspectDescription =
    R"(Verifies the artifact and prints what it holds (programs, feeds, fetches,
kernels, variables) without loading its kernels.
)";

const char *const kSingleRunGroup = "Options";
const char *const kTrainingGroup = "Training (with --data)";
const char *const kMetricsGroup = "Prometheus metrics";
const char *const kClusterGroup = "Cluster";
const char *const kThreadsGroup = "Threads";
/// The most batches --prefetch reads ahead (each holds a whole batch).
constexpr int64_t kMaxPrefetch = 64;

/// A subcommand's help: the usage line first, then CLI11's option table.
class HelpFormatter : public CLI::Formatter {
public:
  std::string make_help(const CLI::App *app, std::string,
                        CLI::AppFormatMode mode) const override {
    std::string text = "usage: kiln " + app->get_name() +
                       " ARTIFACT [OPTIONS]\n\n" + app->get_description() +
                       make_positionals(app) + make_groups(app, mode);
    // CLI11 ends each group with a blank line and starts the next with one.
    for (size_t at; (at = text.find("\n\n\n")) != std::string::npos;)
      text.erase(at, 1);
    return text;
  }
};

/// The flags that carry numbers, kept as text until checked.
struct NumberFlags {
  std::string steps, seed, saveEvery, keep, evalEvery, replicas, collectiveTimeout;
  std::string connectTimeout, workers, psServers, staleness, admitAfter, evict, compress;
  std::string metricsPort, metricsLinger, threads, prefetch, profileSlowest;
  bool sync = false; ///< --sync, the parameter servers' default said aloud.
  bool noPrefetch = false; ///< --no-prefetch: async pulls only when a step asks.
};

/// kiln's subcommands, each flag bound to where its value goes.
struct KilnApp {
  KilnApp();

  CLI::App app{"", "kiln"};
  CLI::App *run = nullptr;
  CLI::App *serve = nullptr;
  CLI::App *launch = nullptr;
  CLI::App *inspect = nullptr;
  RunOptions runOptions;
  ServeOptions serveOptions;
  LaunchOptions launchOptions;
  InspectOptions inspectOptions;
  std::vector<std::string> feeds, fetches;
  NumberFlags numbers;
};

/// One flag: a value kept as text, or a switch.
struct FlagSpec {
  const char *flag;
  std::string *text;
  bool *on;
  const char *metavar;
  const char *help;
};

void addFlags(CLI::App *command, const char *group,
              std::initializer_list<FlagSpec> flags) {
  for (const FlagSpec &spec : flags) {
    CLI::Option *option =
        spec.on ? command->add_flag(spec.flag, *spec.on, spec.help)
                      ->disable_flag_override()
                : command->add_option(spec.flag, *spec.text, spec.help)
                      ->option_text(spec.metavar);
    option->group(group);
  }
}

/// The training flags, bound to kiln.runOptions.training whichever command
/// parses them; `replicasFlag` names the replica count's flag.
void addTrainingFlags(KilnApp &kiln, CLI::App *command, const char *replicasFlag,
                      const char *replicasHelp) {
  train::TrainOptions &training = kiln.runOptions.training;
  NumberFlags &numbers = kiln.numbers;
  addFlags(
      command, kTrainingGroup,
      {{"--data", &training.data, nullptr, "FILE",
        ".npz, .csv/.tsv or synthetic[:ROWS]: train on it"},
       {"--steps", &numbers.steps, nullptr, "N",
        "the step to stop at (counted from the start)"},
       {"--shuffle", nullptr, &training.shuffle, "",
        "a new order of the rows every epoch"},
       {"--prefetch", &numbers.prefetch, nullptr, "N",
        "batches read ahead on a background thread (default: 2 with --shuffle in one "
        "process, without parameter servers, whose threads leave a core free; else 0: each "
        "read in place or written straight into the feeds when its step needs it)"},
       {"--seed", &numbers.seed, nullptr, "S",
        "the shuffle's seed (default 0)"},
       {"--skip-bad-rows", nullptr, &training.skipBadRows, "",
        "drop rows with NaN/Inf or out-of-range ids"},
       {"--profile", nullptr, &training.profile, "",
        "after the run, where the train step's time went: by kind of instruction, and the "
        "slowest (timed after the 26 warm-up steps that choose each product's and kernel's threads)"},
       {"--profile-slowest", &numbers.profileSlowest, nullptr, "N",
        "with --profile: how many of the slowest instructions it names (default 5)"},
       {"--metrics-out", &training.metricsOut, nullptr, "FILE.jsonl",
        "one JSON line per step and per evaluation"},
       {"--logdir", &training.logdir, nullptr, "DIR",
        "TensorBoard event files"},
       {"--save", &training.saveDir, nullptr, "DIR",
        "write checkpoints to DIR, always one at the end"},
       {"--save-every", &numbers.saveEvery, nullptr, "N",
        "and one every N steps"},
       {"--keep", &numbers.keep, nullptr, "N", "checkpoints kept (default 5)"},
       {"--restore", &training.restore, nullptr, "DIR",
        "go on from DIR's newest checkpoint (or ckpt-N)"},
       {"--eval-data", &training.evalData, nullptr, "FILE",
        "evaluate forward on FILE at the end"},
       {"--eval-every", &numbers.evalEvery, nullptr, "N",
        "and every N steps"},
       {"--all-reduce", &kiln.runOptions.allReduce, nullptr, "ALGO",
        "ring, halving-doubling, bcube or auto (the default)"},
       {"--collectives", &kiln.runOptions.collectives, nullptr, "TRANSPORT",
        "auto (shared memory when every replica runs on this host, the default) or gloo"},
       {"--collective-timeout", &numbers.collectiveTimeout, nullptr, "SECONDS",
        "fail a collective that takes longer (default 300)"}});
  addFlags(command, kTrainingGroup,
           {{replicasFlag, &numbers.replicas, nullptr, "N", replicasHelp},
            {"--sync", nullptr, &numbers.sync, "",
             "parameter servers apply the mean of every worker's push once a step (the default)"},
            {"--async", nullptr, &training.ps.async, "",
             "parameter servers apply each push on arrival"},
            {"--no-prefetch", nullptr, &numbers.noPrefetch, "",
             "async: do not send a step's first pulls while the step before computes"},
            {"--staleness", &numbers.staleness, nullptr, "K",
             "async, but no worker more than K steps ahead of the slowest"},
            {"--admit-after", &numbers.admitAfter, nullptr, "K",
             "hash-table ids get a row once pulled K times (default 1)"},
            {"--evict", &numbers.evict, nullptr, "POLICY",
             "hash rows: ttl:STEPS (untouched that long), lfu:ROWS (per table and server), or both"},
            {"--ps-report", nullptr, &training.ps.report, "",
             "print each parameter server's statistics at the end"},
            {"--compress", &numbers.compress, nullptr, "fp16",
             "push gradients to the parameter servers as IEEE f16 (none: f32, the default)"}});
  if (command->get_name() != "serve")
    addFlags(command, kTrainingGroup,
             {{"--ps", &numbers.psServers, nullptr, "N",
               command->get_name() == "run"
                   ? "parameter servers in this process (default 1; a "
                     "--strategy=parameter-server artifact)"
                   : "parameter-server tasks (a --strategy=parameter-server artifact)"}});
}

/// --threads, for the commands that compute.
void addThreadsFlag(KilnApp &kiln, CLI::App *command, const char *help) {
  addFlags(command, kThreadsGroup, {{"--threads", &kiln.numbers.threads, nullptr, "N", help}});
}

void addRunFlags(KilnApp &kiln) {
  CLI::App *run = kiln.run;
  RunOptions &options = kiln.runOptions;
  NumberFlags &numbers = kiln.numbers;
  run->add_option("ARTIFACT", options.artifact,
                  "the compiled artifact (kilnc -o)")
      ->type_name("");
  addFlags(run, kSingleRunGroup,
           {{"--program", &options.program, nullptr, "NAME",
             "the program to run after init (default forward)"}});
  for (auto [flag, values, help] :
       {std::tuple("--feed", &kiln.feeds,
                   "a feed's value, read from a .npy file"),
        std::tuple("--fetch", &kiln.fetches,
                   "write a fetch to a .npy file after the run")})
    run->add_option(flag, *values, help)
        ->option_text("NAME=FILE.npy ...")
        ->allow_extra_args(false)
        ->group(kSingleRunGroup);
  addFlags(run, kSingleRunGroup,
           {{"--synthetic-feeds", nullptr, &options.syntheticFeeds, "",
             "make up the feeds not given with --feed"},
            {"--summary", nullptr, &options.summary, "",
             "print each fetch's shape, min, mean and max"}});
  addTrainingFlags(kiln, run, "--replicas",
                   "data-parallel replicas in this process, one thread each (an "
                   "artifact compiled with kilnc --strategy=data-parallel)");
  addThreadsFlag(kiln, run,
                 "OpenMP threads for GEMMs, convolutions and row-parallel kernels, shared "
                 "by the replicas (default: OMP_NUM_THREADS, else the cores)");
  addFlags(run, kMetricsGroup,
           {{"--metrics-port", &numbers.metricsPort, nullptr, "PORT",
             "serve /metrics on PORT (0: any free port, printed)"},
            {"--metrics-address", &options.metrics.address, nullptr, "ADDR",
             "the IPv4 address to listen on (default 127.0.0.1)"},
            {"--metrics-linger", &numbers.metricsLinger, nullptr, "SECONDS",
             "serve on SECONDS after the run (SIGTERM ends it)"}});
}

void addServeFlags(KilnApp &kiln) {
  CLI::App *serve = kiln.serve;
  ServeOptions &options = kiln.serveOptions;
  serve->add_option("ARTIFACT", kiln.runOptions.artifact, "the compiled artifact (kilnc -o)")
      ->type_name("");
  addTrainingFlags(kiln, serve, "--replicas",
                   "data-parallel replicas this task runs, one thread each (default 1)");
  addThreadsFlag(kiln, serve,
                 "OpenMP threads of this task, shared by its replicas (default: "
                 "OMP_NUM_THREADS, else the cores)");
  addFlags(serve, kClusterGroup,
           {{"--task", &options.task, nullptr, "TYPE:INDEX",
             "this task, such as worker:1 (default: TF_CONFIG's task)"},
            {"--cluster", &options.clusterFile, nullptr, "FILE.json",
             "the cluster spec (default: the TF_CONFIG variable)"},
            {"--connect-timeout", &kiln.numbers.connectTimeout, nullptr, "SECONDS",
             "how long to wait for the chief's coordinator (default 60)"},
            {"--tls-cert", &options.tlsCert, nullptr, "FILE.pem",
             "this task's certificate: the coordinator's RPCs use TLS"},
            {"--tls-key", &options.tlsKey, nullptr, "FILE.pem", "its private key"},
            {"--tls-ca", &options.tlsCa, nullptr, "FILE.pem",
             "the authority the peers' certificates are checked against"}});
}

void addLaunchFlags(KilnApp &kiln) {
  CLI::App *launch = kiln.launch;
  launch->add_option("ARTIFACT", kiln.launchOptions.artifact, "the compiled artifact (kilnc -o)")
      ->type_name("");
  addTrainingFlags(kiln, launch, "--replicas-per-worker",
                   "data-parallel replicas each worker runs, one thread each (default 1)");
  addThreadsFlag(kiln, launch,
                 "OpenMP threads of every task (default: OMP_NUM_THREADS, else each "
                 "worker its share of the cores and each parameter server one)");
  addFlags(launch, kClusterGroup,
           {{"--workers", &kiln.numbers.workers, nullptr, "N", "worker tasks to start"},
            {"--evaluator", nullptr, &kiln.launchOptions.evaluator, "",
             "an evaluator task: evaluates each checkpoint in --save DIR on --eval-data"}});
}

KilnApp::KilnApp() {
  app.set_help_flag("-h,--help", "print the usage and exit");
  app.require_subcommand(0, 1);
  app.allow_extras();
  // A flag given twice keeps its last value, as before CLI11.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.formatter(std::make_shared<HelpFormatter>());

  run = app.add_subcommand("run", kRunDescription);
  serve = app.add_subcommand("serve", kServeDescription);
  launch = app.add_subcommand("launch", kLaunchDescription);
  inspect = app.add_subcommand("inspect", kInspectDescription);
  for (CLI::App *command : {run, serve, launch, inspect}) {
    command->set_help_flag("-h,--help", "print this help and exit");
    command->allow_extras();
  }
  addRunFlags(*this);
  addServeFlags(*this);
  addLaunchFlags(*this);
  inspect
      ->add_option("ARTIFACT", inspectOptions.artifact, "the compiled artifact")
      ->type_name("");
  addFlags(
      inspect, "Options",
      {{"--json", nullptr, &inspectOptions.json, "", "print one JSON object"}});
}

bool isOption(const std::string &arg) {
  return arg.size() > 1 && arg[0] == '-' && arg != "--";
}

std::vector<std::string> optionNames(const CLI::App &app) {
  std::vector<std::string> names;
  for (const CLI::Option *option : app.get_options()) {
    for (const std::string &name : option->get_lnames())
      names.push_back("--" + name);
    for (const std::string &name : option->get_snames())
      names.push_back("-" + name);
  }
  return names;
}

/// The error line for an argument CLI11 did not take, reported against the
/// flags of `app`.
std::string extraArgumentError(const std::string &arg, const CLI::App &app) {
  if (!isOption(arg))
    return "kiln: error: unexpected argument '" + arg + "'";
  std::string flag = arg.substr(0, arg.find('='));
  std::string error = "kiln: error: unknown option '" + flag + "'";
  std::string nearest = nearestName(flag, optionNames(app));
  return nearest.empty() ? error : error + " (did you mean '" + nearest + "'?)";
}

std::string unknownCommandError(const std::string &command) {
  std::string nearest = nearestName(command, {"run", "serve", "launch", "inspect"});
  return "kiln: error: unknown command '" + command + "' " +
         (nearest.empty() ? "(commands: run, serve, launch, inspect; kiln --help)"
                          : "(did you mean '" + nearest + "'?)");
}

/// What CLI11 refused, in kiln's words.
std::string parseErrorLine(const CLI::ParseError &error) {
  std::string what = error.what();
  size_t colon = what.find(": ");
  // "--fetch: 1 required TEXT missing"
  if (dynamic_cast<const CLI::ArgumentMismatch *>(&error) &&
      colon != std::string::npos &&
      what.find(" required ", colon) != std::string::npos &&
      what.compare(what.size() - 8, 8, " missing") == 0)
    return "kiln: error: " + what.substr(0, colon) + " needs a value";
  // "--summary was given a disallowed flag override"
  size_t override = what.find(" was given a disallowed flag override");
  if (override != std::string::npos) {
    std::string flag = what.substr(0, override);
    return "kiln: error: " + (flag[0] == '-' ? flag : "--" + flag) +
           " takes no value";
  }
  return "kiln: error: " + what;
}

bool fail(const std::string &message, std::string &error) {
  error = message;
  return false;
}

/// Reads a non-negative integer flag value; an empty `value` (the flag not
/// given) leaves `out` as it is.
bool parseCount(const std::string &flag, const std::string &value, int64_t &out,
                std::string &error) {
  if (value.empty())
    return true;
  try {
    size_t used = 0;
    long long parsed = std::stoll(value, &used);
    if (used == value.size() && parsed >= 0 && !std::isspace(value[0])) {
      out = parsed;
      return true;
    }
  } catch (const std::exception &) {
  }
  return fail("kiln: error: " + flag + " '" + value +
                  "': expected a whole number >= 0",
              error);
}

/// --threads into `threads` (0 when not given).
bool parseThreads(const KilnApp &kiln, int &threads, std::string &error) {
  int64_t value = 0;
  bool counted = parseCount("--threads", kiln.numbers.threads, value, error);
  if (!counted || (!kiln.numbers.threads.empty() && (value < 1 || value > kMaxThreads)))
    return fail("kiln: error: --threads '" + kiln.numbers.threads + "': expected 1.." +
                    std::to_string(kMaxThreads),
                error);
  threads = static_cast<int>(value);
  return true;
}

bool parseNamedFile(const std::string &flag, const std::string &value,
                    NamedFile &file, std::string &error) {
  size_t equals = value.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == value.size())
    return fail("kiln: error: " + flag + " '" + value +
                    "': expected NAME=FILE.npy",
                error);
  file = {value.substr(0, equals), value.substr(equals + 1)};
  return true;
}

bool parseFeedsAndFetches(const KilnApp &kiln, RunOptions &options,
                          std::string &error) {
  std::set<std::string> feedNames, fetchPaths;
  for (const std::string &value : kiln.feeds) {
    NamedFile feed;
    if (!parseNamedFile("--feed", value, feed, error))
      return false;
    if (!feedNames.insert(feed.name).second)
      return fail("kiln: error: --feed '" + feed.name + "' is given twice",
                  error);
    options.feeds.push_back(feed);
  }
  for (const std::string &value : kiln.fetches) {
    NamedFile fetch;
    if (!parseNamedFile("--fetch", value, fetch, error))
      return false;
    if (!fetchPaths.insert(fetch.path).second)
      return fail("kiln: error: --fetch: two fetches would write '" +
                      fetch.path + "'",
                  error);
    options.fetches.push_back(fetch);
  }
  return true;
}

/// The longest wait a seconds flag takes: a week (a deadline of now() plus
/// 1e16 seconds overflowed the clock's 64-bit nanoseconds).
constexpr double kMaxWaitSeconds = 7 * 24 * 3600;

/// Reads a number of seconds from `minimum` to kMaxWaitSeconds; empty
/// leaves `out`.

bool parseSeconds(const std::string &flag, const std::string &value, double minimum,
                  double &out, std::string &error) {
  if (value.empty())
    return true;
  char *end = nullptr;
  double seconds = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || *end != '\0' || std::isspace(value[0]) ||
      !std::isfinite(seconds) || seconds < minimum || seconds > kMaxWaitSeconds)
    return fail("kiln: error: " + flag + " '" + value + "': expected a number of seconds from " +
                    (minimum > 0 ? "0.1" : "0") + " to 604800 (a week)",
                error);
  out = seconds;
  return true;
}

bool parseMetricsFlags(const KilnApp &kiln, MetricsEndpointOptions &metrics,
                       std::string &error) {
  const NumberFlags &numbers = kiln.numbers;
  if (numbers.metricsPort.empty()) {
    for (const char *flag : {"--metrics-address", "--metrics-linger"})
      if (kiln.run->count(flag))
        return fail("kiln: error: " + std::string(flag) +
                        " needs --metrics-port PORT",
                    error);
    return true;
  }
  int64_t port = -1;
  if (!parseCount("--metrics-port", numbers.metricsPort, port, error) ||
      port > 65535)
    return fail("kiln: error: --metrics-port '" + numbers.metricsPort +
                    "': expected a port number, 1..65535 (or 0: any free port)",
                error);
  metrics.port = static_cast<int>(port);
  in_addr address;
  if (inet_pton(AF_INET, metrics.address.c_str(), &address) != 1)
    return fail("kiln: error: --metrics-address '" + metrics.address +
                    "': expected an IPv4 address such as 127.0.0.1",
                error);
  return parseSeconds("--metrics-linger", numbers.metricsLinger, 0, metrics.lingerSeconds,
                      error);
}

/// The first flag of `group` given, other than `except`; empty if none.
std::string firstGiven(const CLI::App &command, const std::string &group,
                       const std::string &except) {
  for (const CLI::Option *option : command.get_options())
    if (option->get_group() == group && option->count() &&
        option->nonpositional() && option->get_name() != except)
      return option->get_name();
  return "";
}

constexpr int64_t kMaxCollectiveTimeoutSeconds = 7 * 24 * 3600;

/// --replicas (`replicasFlag`), --all-reduce and --collective-timeout into
/// `group`.
bool parseReplicaFlags(const KilnApp &kiln, const std::string &replicasFlag,
                       train::ReplicaGroup &group, std::string &error) {
  const NumberFlags &numbers = kiln.numbers;
  int64_t replicas = 1, timeout = 300;
  if (!parseCount(replicasFlag, numbers.replicas, replicas, error) ||
      !parseCount("--collective-timeout", numbers.collectiveTimeout, timeout, error))
    return false;
  if (replicas < 1 || replicas > 1024)
    return fail("kiln: error: " + replicasFlag + " '" + numbers.replicas +
                    "': expected 1..1024",
                error);
  // At most a week: deadlines are now() + timeout on a clock counting
  // nanoseconds in 64 bits, which an absurd timeout would overflow.
  if (timeout < 1 || timeout > kMaxCollectiveTimeoutSeconds)
    return fail("kiln: error: --collective-timeout '" + numbers.collectiveTimeout +
                    "': expected whole seconds 1.." +
                    std::to_string(kMaxCollectiveTimeoutSeconds) + " (a week)",
                error);
  const std::string &algorithm = kiln.runOptions.allReduce;
  if (!algorithm.empty() &&
      !collective::parseAllReduceAlgorithm(algorithm, group.gloo.algorithm))
    return fail("kiln: error: --all-reduce '" + algorithm +
                    "': expected ring, halving-doubling, bcube or auto",
                error);
  const std::string &transport = kiln.runOptions.collectives;
  if (!transport.empty() && transport != "auto" && transport != "gloo")
    return fail("kiln: error: --collectives '" + transport + "': expected auto or gloo", error);
  group.gloo.transport = transport == "gloo" ? collective::CollectiveTransport::Gloo
                                             : collective::CollectiveTransport::Auto;
  group.worldSize = group.localReplicas = static_cast<int>(replicas);
  group.gloo.timeout = std::chrono::seconds(timeout);
  return true;
}

/// --evict ttl:T,lfu:R (either or both) into `ps`.
bool parseEvictPolicy(const std::string &value, train::ParameterServerOptions &ps,
                      std::string &error) {
  std::string rest = value;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string item = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    size_t colon = item.find(':');
    std::string kind = item.substr(0, colon), number;
    if (colon != std::string::npos)
      number = item.substr(colon + 1);
    int64_t parsed = 0;
    std::string ignored;
    bool ok = !number.empty() && parseCount("--evict", number, parsed, ignored) && parsed >= 1;
    if (ok && kind == "ttl")
      ps.evictTtl = parsed;
    else if (ok && kind == "lfu")
      ps.maxRows = parsed;
    else
      return fail("kiln: error: --evict '" + value +
                      "': expected ttl:STEPS, lfu:ROWS or both, comma-separated, each >= 1",
                  error);
  }
  return true;
}

/// --ps, --sync, --async, --staleness and the hash-row flags into `ps`; the
/// deadline of a call is the collective timeout (a sync push waits for the
/// slowest worker as long).
bool parseParameterServerFlags(const KilnApp &kiln, train::TrainOptions &training,
                               std::string &error) {
  const NumberFlags &numbers = kiln.numbers;
  train::ParameterServerOptions &ps = training.ps;
  int64_t servers = 1, staleness = -1;
  if (!parseCount("--ps", numbers.psServers, servers, error) ||
      !parseCount("--staleness", numbers.staleness, staleness, error) ||
      !parseCount("--admit-after", numbers.admitAfter, ps.admitAfter, error) ||
      !parseEvictPolicy(numbers.evict, ps, error))
    return false;
  if (!numbers.compress.empty() && numbers.compress != "fp16" && numbers.compress != "none")
    return fail("kiln: error: --compress '" + numbers.compress + "': expected fp16 or none",
                error);
  ps.compressFp16 = numbers.compress == "fp16";
  if (!numbers.admitAfter.empty() && ps.admitAfter < 1)
    return fail("kiln: error: --admit-after '" + numbers.admitAfter + "': expected 1 or more",
                error);
  if (servers < 1 || servers > 1024)
    return fail("kiln: error: --ps '" + numbers.psServers + "': expected 1..1024", error);
  if (numbers.sync && (ps.async || !numbers.staleness.empty()))
    return fail("kiln: error: --sync cannot go with --async or --staleness: choose one mode",
                error);
  ps.requested = !numbers.psServers.empty() || numbers.sync || ps.async ||
                 !numbers.staleness.empty() || !numbers.admitAfter.empty() ||
                 !numbers.evict.empty() || ps.report || !numbers.compress.empty() ||
                 numbers.noPrefetch;
  ps.prefetch = !numbers.noPrefetch;
  // --staleness K is asynchronous training with a bound.
  if (!numbers.staleness.empty())
    ps.async = true;
  ps.localServers = static_cast<int>(servers);
  ps.staleness = numbers.staleness.empty() ? -1 : staleness;
  ps.deadline = training.group.gloo.timeout;
  return true;
}

bool parseTrainingFlags(const KilnApp &kiln, const CLI::App &command,
                        train::TrainOptions &training, std::string &error) {
  const NumberFlags &numbers = kiln.numbers;
  int64_t keep = training.keep, seed = 0, prefetch = training.prefetchBatches;
  if (!parseCount("--steps", numbers.steps, training.steps, error) ||
      !parseCount("--seed", numbers.seed, seed, error) ||
      !parseCount("--save-every", numbers.saveEvery, training.saveEvery,
                  error) ||
      !parseCount("--keep", numbers.keep, keep, error) ||
      !parseCount("--eval-every", numbers.evalEvery, training.evalEvery, error) ||
      !parseCount("--prefetch", numbers.prefetch, prefetch, error) ||
      !parseCount("--profile-slowest", numbers.profileSlowest, training.profileSlowest, error))
    return false;
  if (!numbers.profileSlowest.empty() && !training.profile)
    return fail("kiln: error: --profile-slowest applies to --profile only", error);
  if (prefetch > kMaxPrefetch)
    return fail("kiln: error: --prefetch '" + numbers.prefetch + "': expected 0.." +
                    std::to_string(kMaxPrefetch) + " batches",
                error);
  training.prefetchBatches = static_cast<int>(prefetch);
  training.keep = static_cast<int>(std::min<int64_t>(keep, 1 << 30));
  training.seed = static_cast<uint64_t>(seed);
  std::string replicasFlag =
      &command == kiln.launch ? "--replicas-per-worker" : "--replicas";
  if (!parseReplicaFlags(kiln, replicasFlag, training.group, error) ||
      !parseParameterServerFlags(kiln, training, error))
    return false;

  if (training.data.empty()) {
    if (&command != kiln.run)
      return fail("kiln: error: kiln " + command.get_name() +
                      " trains: it needs --data FILE (or --data synthetic) and --steps N",
                  error);
    std::string flag = firstGiven(command, kTrainingGroup, "--data");
    if (!flag.empty())
      return fail("kiln: error: " + flag +
                      " is a training flag: it needs --data FILE (or --data "
                      "synthetic)",
                  error);
    return true;
  }
  std::string flag = firstGiven(command, kSingleRunGroup, "--help");
  if (!flag.empty())
    return fail("kiln: error: " + flag +
                    " is for a single run: training (--data) runs train_step "
                    "on the data",
                error);
  if (training.steps < 1)
    return fail(
        "kiln: error: --data needs --steps N (the step to stop at, N >= 1)",
        error);
  return true;
}

/// The arguments CLI11 left over: the first one, if any, as an error line.
bool checkExtras(const KilnApp &kiln, const CLI::App *command,
                 std::string &error) {
  std::vector<std::string> extras = kiln.app.remaining(false);
  if (command) {
    std::vector<std::string> own = command->remaining(false);
    extras.insert(extras.end(), own.begin(), own.end());
  }
  // A flag given an empty value ("--threads ''") was read as not given.
  if (command)
    for (const CLI::Option *option : command->get_options())
      for (const std::string &value : option->results())
        if (value.empty() && option->get_type_size() != 0)
          return fail(option->get_name().rfind("-", 0) == 0
                          ? "kiln: error: " + option->get_name() + " '': needs a value"
                          : "kiln: error: the " + option->get_name() + " argument is empty",
                      error);
  if (extras.empty())
    return true;
  if (!command && !isOption(extras.front()))
    return fail(unknownCommandError(extras.front()), error);
  return fail(extraArgumentError(extras.front(), command ? *command : kiln.app),
              error);
}

CommandLine errorResult(const std::string &line) {
  CommandLine result;
  result.message = printableText(line) + "\n";
  return result;
}

CommandLine helpResult(const std::string &text) {
  CommandLine result;
  result.command = CommandLine::Command::Help;
  result.message = text;
  return result;
}

CommandLine parseServe(KilnApp &kiln) {
  std::string error;
  ServeOptions &options = kiln.serveOptions;
  options.training = kiln.runOptions.training;
  if (!checkExtras(kiln, kiln.serve, error) ||
      !parseTrainingFlags(kiln, *kiln.serve, options.training, error) ||
      !parseSeconds("--connect-timeout", kiln.numbers.connectTimeout, 0.1,
                    options.connectSeconds, error) ||
      !parseThreads(kiln, options.threads, error))
    return errorResult(error);
  if (kiln.runOptions.artifact.empty())
    return errorResult("kiln: error: kiln serve needs an artifact file");
  bool anyTls = !options.tlsCert.empty() || !options.tlsKey.empty() || !options.tlsCa.empty();
  if (anyTls && (options.tlsCert.empty() || options.tlsKey.empty() || options.tlsCa.empty()))
    return errorResult("kiln: error: TLS needs all of --tls-cert, --tls-key and --tls-ca");
  options.training.artifact = kiln.runOptions.artifact;
  CommandLine result;
  result.command = CommandLine::Command::Serve;
  result.serve = std::move(options);
  return result;
}

/// The launcher's own flags and the artifact; the rest goes to each task's
/// kiln serve as given.
std::vector<std::string> serveFlagsOf(const std::vector<std::string> &args,
                                      const std::string &artifact) {
  std::vector<std::string> flags;
  bool artifactSeen = false;
  for (size_t i = 1; i < args.size(); ++i) { // args[0] is "launch".
    const std::string &arg = args[i];
    std::string name = arg.substr(0, arg.find('='));
    if (name == "--workers" || name == "--replicas-per-worker" || name == "--ps") {
      if (arg.find('=') == std::string::npos)
        ++i; // Its value.
      continue;
    }
    if (name == "--evaluator")
      continue;
    if (!artifactSeen && arg == artifact) {
      artifactSeen = true;
      continue;
    }
    flags.push_back(arg);
  }
  return flags;
}

CommandLine parseLaunch(KilnApp &kiln, const std::vector<std::string> &args) {
  std::string error;
  LaunchOptions &options = kiln.launchOptions;
  train::TrainOptions training = kiln.runOptions.training;
  int64_t workers = 0;
  if (!checkExtras(kiln, kiln.launch, error) ||
      !parseTrainingFlags(kiln, *kiln.launch, training, error) ||
      !parseCount("--workers", kiln.numbers.workers, workers, error) ||
      !parseThreads(kiln, options.threads, error))
    return errorResult(error);
  if (options.artifact.empty())
    return errorResult("kiln: error: kiln launch needs an artifact file");
  if (workers < 1 || workers > 256)
    return errorResult("kiln: error: kiln launch needs --workers N, 1..256");
  options.workers = static_cast<int>(workers);
  options.replicasPerWorker = training.group.localReplicas;
  options.psTasks = kiln.numbers.psServers.empty() ? 0 : training.ps.localServers;
  // Processes on this machine, as --workers: more are a fork bomb, not a
  // cluster (kiln run's in-process --ps may have up to 1024).
  if (options.psTasks > 256)
    return errorResult("kiln: error: kiln launch starts each --ps server as a process on this "
                       "machine: --ps N, 1..256");
  if (options.evaluator && (training.saveDir.empty() || training.evalData.empty()))
    return errorResult("kiln: error: --evaluator evaluates the checkpoints of --save DIR on "
                       "--eval-data FILE: give both");
  options.serveFlags = serveFlagsOf(args, options.artifact);
  CommandLine result;
  result.command = CommandLine::Command::Launch;
  result.launch = std::move(options);
  return result;
}

} // namespace

std::string nearestName(const std::string &typed,
                        const std::vector<std::string> &candidates) {
  auto normalize = [](const std::string &name) {
    std::string text =
        name.substr(std::min(name.find_first_not_of('-'), name.size()));
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    return text;
  };
  // Edit distance with adjacent transpositions (optimal string alignment).
  auto distance = [](const std::string &a, const std::string &b) {
    std::vector<std::vector<size_t>> d(a.size() + 1,
                                       std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i)
      d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j)
      d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
        d[i][j] = std::min(
            {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    return d[a.size()][b.size()];
  };
  std::string word = normalize(typed);
  // A third of the word may be wrong, at most 3 letters; short words must
  // match but for case and dashes.
  size_t limit =
      word.size() < 3
          ? 0
          : std::min<size_t>(3, std::max<size_t>(1, word.size() / 3));
  std::string best;
  size_t bestDistance = limit + 1;
  for (const std::string &candidate : candidates) {
    size_t d = distance(word, normalize(candidate));
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

CommandLine parseCommandLine(const std::vector<std::string> &args) {
  if (args.empty()) {
    CommandLine result;
    result.message = kUsage;
    return result;
  }
  if (args.front() == "help")
    return helpResult(kUsage);
  KilnApp kiln;
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    kiln.app.parse(reversed);
  } catch (const CLI::CallForHelp &) {
    std::vector<CLI::App *> chosen = kiln.app.get_subcommands();
    return helpResult(chosen.empty() ? std::string(kUsage)
                                     : chosen.front()->help());
  } catch (const CLI::ParseError &e) {
    return errorResult(parseErrorLine(e));
  }

  std::string error;
  CommandLine result;
  if (kiln.run->parsed()) {
    RunOptions &options = kiln.runOptions;
    if (!checkExtras(kiln, kiln.run, error) ||
        !parseFeedsAndFetches(kiln, options, error) ||
        !parseTrainingFlags(kiln, *kiln.run, options.training, error) ||
        !parseMetricsFlags(kiln, options.metrics, error) ||
        !parseThreads(kiln, options.threads, error))
      return errorResult(error);
    if (options.artifact.empty())
      return errorResult("kiln: error: kiln run needs an artifact file");
    options.training.artifact = options.artifact;
    result.command = CommandLine::Command::Run;
    result.run = std::move(options);
    return result;
  }
  if (kiln.serve->parsed())
    return parseServe(kiln);
  if (kiln.launch->parsed())
    return parseLaunch(kiln, args);
  if (kiln.inspect->parsed()) {
    if (!checkExtras(kiln, kiln.inspect, error))
      return errorResult(error);
    if (kiln.inspectOptions.artifact.empty())
      return errorResult("kiln: error: kiln inspect needs an artifact file");
    result.command = CommandLine::Command::Inspect;
    result.inspect = kiln.inspectOptions;
    return result;
  }
  if (!checkExtras(kiln, nullptr, error))
    return errorResult(error);
  // Only options that take no command, such as "--": show the usage.
  result.message = kUsage;
  return result;
}

int threadsFlagOf(const std::vector<std::string> &args) {
  std::string value;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--threads" && i + 1 < args.size())
      value = args[i + 1];
    else if (args[i].rfind("--threads=", 0) == 0)
      value = args[i].substr(std::string("--threads=").size());
  }
  if (value.empty() || value.size() > 4 ||
      value.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  int threads = std::stoi(value);
  return threads >= 1 && threads <= kMaxThreads ? threads : 0;
}

} // namespace kiln::tool
