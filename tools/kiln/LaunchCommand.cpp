//===- LaunchCommand.cpp - kiln launch: a local cluster -------------------===//
//
// A cluster on this machine: N worker tasks at 127.0.0.1 on free ports,
// worker 0 the chief (as in MultiWorkerMirroredStrategy without a chief
// task), each a child `kiln serve` with TF_CONFIG, a fresh
// KILN_CLUSTER_TOKEN and its share of the cores (OMP_NUM_THREADS, unless
// set). Every line a child prints comes out prefixed with its task. Ctrl-C
// or SIGTERM goes to every child; a child that dies takes the launcher's
// death with it (PR_SET_PDEATHSIG), so no task outlives the launch. When a
// task fails, the others fail soon after (their collectives break), and
// any still running after a grace period are stopped.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln/LaunchCommand.h"
#include "tools/kiln/OwnExecutable.h"
#include "tools/kiln/ServeCommand.h"

#include "runtime/cpu/Threads.h"

#include <arpa/inet.h>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <map>
#include <set>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace kiln::tool {
namespace {

using Clock = std::chrono::steady_clock;

volatile sig_atomic_t interrupted = 0;

void onInterrupt(int signal) { interrupted = signal; }

/// Whether `port` on 127.0.0.1 can be bound now.
bool canBind(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  bool free = bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) == 0;
  close(fd);
  return free;
}

/// A port nobody listens on now and not in `taken` (the ports this launch
/// already gave out: nobody listens on them yet either), below Linux's
/// ephemeral range (32768 and up), where the ports the kernel hands out for
/// outgoing connections and for Gloo's own listeners cannot take it before
/// the task binds it.
int freePort(const std::set<int> &taken, std::string &error) {
  static uint64_t state = static_cast<uint64_t>(getpid()) * 0x9E3779B97F4A7C15ull ^
                          static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  for (int attempt = 0; attempt < 200; ++attempt) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    int port = 20000 + static_cast<int>((state >> 33) % 12000);
    if (!taken.count(port) && canBind(port))
      return port;
  }
  error = "kiln launch: error: no free port found on 127.0.0.1 in 20000..31999";
  return 0;
}

/// 32 hex digits from the kernel's random source.
std::string randomToken() {
  unsigned char bytes[16] = {};
  int fd = open("/dev/urandom", O_RDONLY);
  if (fd >= 0) {
    ssize_t got = read(fd, bytes, sizeof(bytes));
    (void)got;
    close(fd);
  }
  std::string token;
  char hex[3];
  for (unsigned char byte : bytes) {
    std::snprintf(hex, sizeof(hex), "%02x", byte);
    token += hex;
  }
  return token;
}

struct Child {
  std::string name;
  pid_t pid = -1;
  int out = -1, err = -1; ///< Read ends of its stdout and stderr.
  std::string outLine, errLine;
  bool exited = false;
  int status = 0;
  bool server = false; ///< A ps task: it serves until the workers are done.
};

/// The tasks of a launch, in the order they start: servers first (workers
/// retry until they answer), then the workers, then the evaluator.
struct TaskPlan {
  std::string type;
  int index;
};

/// Forks `kiln serve` for task `index` with `environment` added.
bool spawn(Child &child, const std::vector<std::string> &argv,
           const std::vector<std::string> &environment, std::string &error) {
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) {
    error = std::string("kiln launch: error: cannot make a pipe: ") + std::strerror(errno);
    return false;
  }
  pid_t parent = getpid();
  std::string executable = ownExecutable(); // Before fork: it allocates.
  pid_t pid = fork();
  if (pid < 0) {
    error = std::string("kiln launch: error: cannot start ") + child.name + ": " +
            std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    // Dies with the launcher, even a killed one.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
      _exit(1);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    close(err[0]);
    close(err[1]);
    for (const std::string &entry : environment)
      putenv(const_cast<char *>(entry.c_str()));
    std::vector<char *> args;
    for (const std::string &arg : argv)
      args.push_back(const_cast<char *>(arg.c_str()));
    args.push_back(nullptr);
    execv(executable.c_str(), args.data());
    std::fprintf(stderr, "kiln launch: error: cannot run %s: %s\n", executable.c_str(),
                 std::strerror(errno));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  child.pid = pid;
  child.out = out[0];
  child.err = err[0];
  return true;
}

/// Moves what `fd` has into `pending`, printing whole lines with the task's
/// prefix to `stream`. False at end of file.
bool drain(int fd, const std::string &name, std::string &pending, std::ostream &stream) {
  char buffer[4096];
  ssize_t got = read(fd, buffer, sizeof(buffer));
  if (got <= 0) {
    if (!pending.empty())
      stream << "[" << name << "] " << pending << "\n" << std::flush;
    pending.clear();
    return false;
  }
  pending.append(buffer, static_cast<size_t>(got));
  size_t newline;
  while ((newline = pending.find('\n')) != std::string::npos) {
    // A progress line redraws with '\r': keep the latest state.
    std::string line = pending.substr(0, newline);
    size_t cr = line.rfind('\r');
    if (cr != std::string::npos)
      line = line.substr(cr + 1);
    stream << "[" << name << "] " << line << "\n";
    pending.erase(0, newline + 1);
  }
  stream << std::flush;
  return true;
}

std::string describeExit(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "stopped";
}

/// The TF_CONFIG cluster of the launch: "worker" (and "ps", "evaluator") lists.
std::string clusterJson(const std::map<std::string, std::vector<std::string>> &tasks) {
  std::string json;
  for (const auto &[type, addresses] : tasks) {
    std::string list;
    for (const std::string &address : addresses)
      list += (list.empty() ? "\"" : ", \"") + address + "\"";
    json += (json.empty() ? "{\"" : ", \"") + type + "\": [" + list + "]";
  }
  return json + "}";
}

} // namespace

int launchCommand(const LaunchOptions &options) {
  std::string error;
  std::vector<TaskPlan> plan;
  for (int i = 0; i < options.psTasks; ++i)
    plan.push_back({"ps", i});
  for (int i = 0; i < options.workers; ++i)
    plan.push_back({"worker", i});
  if (options.evaluator)
    plan.push_back({"evaluator", 0});
  std::map<std::string, std::vector<std::string>> addresses;
  std::set<int> ports;
  for (const TaskPlan &task : plan) {
    int port = freePort(ports, error);
    if (port == 0) {
      std::cerr << error << "\n";
      return 1;
    }
    ports.insert(port);
    addresses[task.type].push_back("127.0.0.1:" + std::to_string(port));
  }
  std::string cluster = clusterJson(addresses);
  std::string token = randomToken();
  int cores = kiln::cpu::usableCores();
  int replicas = options.workers * options.replicasPerWorker;
  std::string threads = std::to_string(std::max(1, cores / replicas));

  struct sigaction action {};
  action.sa_handler = onInterrupt;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);

  std::vector<Child> children(plan.size());
  for (size_t i = 0; i < children.size(); ++i) {
    Child &child = children[i];
    const TaskPlan &task = plan[i];
    bool server = task.type == "ps";
    child.name = task.type + ":" + std::to_string(task.index);
    child.server = server;
    std::vector<std::string> environment = {
        "TF_CONFIG={\"cluster\": " + cluster + ", \"task\": {\"type\": \"" + task.type +
            "\", \"index\": " + std::to_string(task.index) + "}}",
        "KILN_CLUSTER_TOKEN=" + token};
    if (!std::getenv("OMP_NUM_THREADS"))
      environment.push_back("OMP_NUM_THREADS=" + (task.type == "worker" ? threads : "1"));
    std::vector<std::string> argv = {"kiln", "serve", options.artifact};
    if (options.replicasPerWorker > 1) // ps tasks count the workers' replicas too
      argv.push_back("--replicas=" + std::to_string(options.replicasPerWorker));
    argv.insert(argv.end(), options.serveFlags.begin(), options.serveFlags.end());
    if (!spawn(child, argv, environment, error)) {
      std::cerr << error << "\n";
      children.resize(i);
      for (Child &started : children) // Stopped, then reaped below.
        kill(started.pid, SIGTERM);
      break;
    }
  }

  // The first task to fail for a reason of its own, and the first that
  // stopped because another failed (kExitAnotherTaskFailed: named only if
  // no other is).
  std::string firstFailure, firstConsequence;
  Clock::time_point failedAt{}, signalledAt{};
  bool terminated = false, killed = false;
  auto running = [&] {
    for (const Child &child : children)
      if (!child.exited)
        return true;
    return false;
  };
  auto workersDone = [&] {
    for (const Child &child : children)
      if (child.name.rfind("worker:", 0) == 0 && !child.exited)
        return false;
    return true;
  };
  bool serversStopped = false;
  while (running()) {
    // The servers outlive the workers only until they are done.
    if (!serversStopped && workersDone()) {
      for (Child &child : children)
        if (child.server && !child.exited)
          kill(child.pid, SIGTERM);
      serversStopped = true;
    }
    std::vector<pollfd> fds;
    std::vector<std::pair<Child *, bool>> owners; // (child, stderr?)
    for (Child &child : children) {
      if (child.out >= 0) {
        fds.push_back({child.out, POLLIN, 0});
        owners.push_back({&child, false});
      }
      if (child.err >= 0) {
        fds.push_back({child.err, POLLIN, 0});
        owners.push_back({&child, true});
      }
    }
    if (!fds.empty() && poll(fds.data(), fds.size(), 100) > 0) {
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
          continue;
        auto [child, isErr] = owners[i];
        int &fd = isErr ? child->err : child->out;
        if (!drain(fd, child->name, isErr ? child->errLine : child->outLine,
                   isErr ? std::cerr : std::cout)) {
          close(fd);
          fd = -1;
        }
      }
    } else if (fds.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // Of the tasks that fail in one round, one killed by a signal is the
    // cause: the others' errors are its consequence (a server killed, its
    // workers' pulls reset in the same 100 ms).
    std::string roundFailure;
    bool roundSignalled = false;
    for (Child &child : children) {
      if (child.exited || child.out >= 0 || child.err >= 0)
        continue; // Reap once its output is all read.
      if (waitpid(child.pid, &child.status, 0) == child.pid) {
        child.exited = true;
        bool stoppedServer = child.server && serversStopped;
        bool signalled = WIFSIGNALED(child.status);
        // A task ended by the stop below, or by the Ctrl-C the launcher got
        // too, did not fail.
        int signal = signalled ? WTERMSIG(child.status) : 0;
        bool stopped = (terminated || interrupted) &&
                       (signal == SIGTERM || signal == SIGKILL || signal == SIGINT);
        bool failed = (!WIFEXITED(child.status) || WEXITSTATUS(child.status) != 0) &&
                      !stoppedServer && !stopped;
        bool consequence = WIFEXITED(child.status) &&
                           WEXITSTATUS(child.status) == kExitAnotherTaskFailed;
        if (failed && consequence && firstConsequence.empty()) {
          firstConsequence = child.name + " " + describeExit(child.status);
          if (failedAt == Clock::time_point{})
            failedAt = Clock::now();
        } else if (failed && !consequence &&
                   (roundFailure.empty() || (signalled && !roundSignalled))) {
          roundFailure = child.name + " " + describeExit(child.status);
          roundSignalled = signalled;
        }
      }
    }
    if (firstFailure.empty() && !roundFailure.empty()) {
      firstFailure = roundFailure;
      failedAt = Clock::now(); // The others get their 10 s from the cause.
    }
    // Ctrl-C or a failed task: stop the others, politely first.
    // The others' collectives break when a task dies, and they take a few
    // seconds to learn from the coordinator which task it was.
    // With only consequences so far, longer: their cause may be a chief
    // lingering up to 15 s for the others to leave (CoordinatorServer).
    auto grace = std::chrono::seconds(firstFailure.empty() ? 20 : 10);
    bool stop = interrupted || ((!firstFailure.empty() || !firstConsequence.empty()) &&
                                Clock::now() - failedAt > grace);
    if (stop && !terminated) {
      for (Child &child : children)
        if (!child.exited)
          kill(child.pid, SIGTERM);
      terminated = true;
      signalledAt = Clock::now();
    }
    if (terminated && !killed && Clock::now() - signalledAt > std::chrono::seconds(10)) {
      for (Child &child : children)
        if (!child.exited)
          kill(child.pid, SIGKILL);
      killed = true;
    }
  }
  if (!error.empty())
    return 1; // A task could not be started: said above; the others were stopped.
  if (firstFailure.empty())
    firstFailure = firstConsequence;
  if (interrupted && firstFailure.empty()) {
    std::cerr << "kiln launch: error: interrupted (" << strsignal(interrupted)
              << "); every task was stopped\n";
    return 1;
  }
  if (!firstFailure.empty()) {
    std::cerr << "kiln launch: error: " << firstFailure << " (the first task to fail)\n";
    return 1;
  }
  return 0;
}

} // namespace kiln::tool
