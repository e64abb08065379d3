//===- PrometheusMetrics.cpp - kiln run's Prometheus endpoint -------------===//

#include "runtime/metrics/PrometheusMetrics.h"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <arpa/inet.h>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kiln::metrics {

namespace {

using Clock = std::chrono::steady_clock;

/// Step times from 0.1 ms (a small model on a CPU) to 30 s.
const std::vector<double> kStepBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30};

/// Why nothing could listen on address:port. The Exposer only says that
/// civetweb did not start, so bind a socket the way civetweb does
/// (SO_REUSEADDR) and report its errno.
std::string listenFailure(const std::string &address, int port,
                          const std::string &fallback) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fallback;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in socketAddress{};
  socketAddress.sin_family = AF_INET;
  socketAddress.sin_port = htons(static_cast<uint16_t>(port));
  int failure = 0;
  if (inet_pton(AF_INET, address.c_str(), &socketAddress.sin_addr) != 1)
    failure = EINVAL;
  else if (bind(fd, reinterpret_cast<sockaddr *>(&socketAddress),
                sizeof socketAddress) != 0 ||
           listen(fd, 1) != 0)
    failure = errno;
  close(fd);
  if (failure == 0)
    return fallback;
  if (failure == EADDRINUSE)
    return "address in use";
  std::string reason = std::strerror(failure);
  reason[0] =
      static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
  return reason;
}

} // namespace

/// kiln_checkpoint_age_seconds, computed when scraped.
class PrometheusMetrics::CheckpointAge : public prometheus::Collectable {
public:
  void saved() {
    savedAt_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                       Clock::now().time_since_epoch())
                       .count());
  }

  std::vector<prometheus::MetricFamily> Collect() const override {
    int64_t savedAt = savedAt_.load();
    if (savedAt < 0)
      return {};
    Clock::time_point at{std::chrono::nanoseconds(savedAt)};
    prometheus::ClientMetric age;
    age.gauge.value = std::chrono::duration<double>(Clock::now() - at).count();
    return {{"kiln_checkpoint_age_seconds",
             "Seconds since this run last committed a checkpoint.",
             prometheus::MetricType::Gauge,
             {age}}};
  }

private:
  /// steady_clock nanoseconds; -1 until a checkpoint is saved.
  std::atomic<int64_t> savedAt_{-1};
};

struct PrometheusMetrics::Training {
  explicit Training(prometheus::Registry &registry)
      : steps(prometheus::BuildCounter()
                  .Name("kiln_steps_total")
                  .Help("Training steps this process finished.")
                  .Register(registry)
                  .Add({})),
        examples(prometheus::BuildCounter()
                     .Name("kiln_examples_total")
                     .Help("Examples (rows) the finished steps trained on.")
                     .Register(registry)
                     .Add({})),
        step(prometheus::BuildGauge()
                 .Name("kiln_step")
                 .Help("The last finished step, counted from the start of "
                       "training (a restored run goes on numbering).")
                 .Register(registry)
                 .Add({})),
        stopStep(prometheus::BuildGauge()
                     .Name("kiln_stop_step")
                     .Help("The step the run stops at (--steps).")
                     .Register(registry)
                     .Add({})),
        stepSeconds(prometheus::BuildHistogram()
                        .Name("kiln_step_duration_seconds")
                        .Help("Time of one training step: forward, backward "
                              "and update.")
                        .Register(registry)
                        .Add({}, kStepBuckets)),
        lossFamily(prometheus::BuildGauge()
                       .Name("kiln_loss")
                       .Help("The last step's mean training loss, before its "
                             "update.")
                       .Register(registry)),
        learningRateFamily(prometheus::BuildGauge()
                               .Name("kiln_learning_rate")
                               .Help("The last step's learning rate.")
                               .Register(registry)),
        examplesPerSecondFamily(
            prometheus::BuildGauge()
                .Name("kiln_examples_per_second")
                .Help("Examples per second over the last step, as in "
                      "--metrics-out.")
                .Register(registry)) {}

  prometheus::Counter &steps;
  prometheus::Counter &examples;
  prometheus::Gauge &step;
  prometheus::Gauge &stopStep;
  prometheus::Histogram &stepSeconds;
  /// Their one series each is added with the first step: no value before.
  prometheus::Family<prometheus::Gauge> &lossFamily;
  prometheus::Family<prometheus::Gauge> &learningRateFamily;
  prometheus::Family<prometheus::Gauge> &examplesPerSecondFamily;
  prometheus::Gauge *loss = nullptr;
  prometheus::Gauge *learningRate = nullptr;
  prometheus::Gauge *examplesPerSecond = nullptr;
  /// fp16 loss scaling only: registered with the first step of such a run.
  prometheus::Gauge *lossScale = nullptr;
  prometheus::Counter *skippedSteps = nullptr;
};

struct PrometheusMetrics::SingleRuns {
  explicit SingleRuns(prometheus::Registry &registry)
      : runs(prometheus::BuildCounter()
                 .Name("kiln_runs_total")
                 .Help("Runs of the program that finished.")
                 .Register(registry)
                 .Add({})),
        lastSeconds(prometheus::BuildGauge()
                        .Name("kiln_last_run_duration_seconds")
                        .Help("How long the last run of the program took.")
                        .Register(registry)
                        .Add({})) {}

  prometheus::Counter &runs;
  prometheus::Gauge &lastSeconds;
};

PrometheusMetrics::PrometheusMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      checkpointAge_(std::make_shared<CheckpointAge>()) {}

PrometheusMetrics::~PrometheusMetrics() = default;

std::unique_ptr<PrometheusMetrics>
PrometheusMetrics::serve(const std::string &address, int port,
                         const std::string &artifact,
                         const std::string &program, std::string &error) {
  std::unique_ptr<PrometheusMetrics> metrics(new PrometheusMetrics());
  metrics->address_ = address;
  prometheus::BuildGauge()
      .Name("kiln_info")
      .Help("What this kiln run runs; always 1.")
      .Register(*metrics->registry_)
      .Add({{"artifact", artifact}, {"program", program}})
      .Set(1);
  std::string where = address + ":" + std::to_string(port);
  try {
    metrics->exposer_ = std::make_unique<prometheus::Exposer>(where, 2);
  } catch (const std::exception &e) {
    error = "cannot listen on " + where + ": " +
            listenFailure(address, port, e.what());
    return nullptr;
  }
  std::vector<int> ports = metrics->exposer_->GetListeningPorts();
  metrics->port_ = ports.empty() ? port : ports.front();
  metrics->exposer_->RegisterCollectable(metrics->registry_);
  metrics->exposer_->RegisterCollectable(metrics->checkpointAge_);
  return metrics;
}

std::string PrometheusMetrics::url() const {
  return "http://" + address_ + ":" + std::to_string(port_) + "/metrics";
}

void PrometheusMetrics::trainingStarted(int64_t startStep, int64_t lastStep) {
  if (!training_)
    training_ = std::make_unique<Training>(*registry_);
  training_->step.Set(static_cast<double>(startStep));
  training_->stopStep.Set(static_cast<double>(lastStep));
}

void PrometheusMetrics::stepFinished(const train::StepReport &report) {
  if (!training_)
    trainingStarted(report.step - 1, report.step);
  Training &training = *training_;
  if (!training.loss) {
    training.loss = &training.lossFamily.Add({});
    training.learningRate = &training.learningRateFamily.Add({});
    training.examplesPerSecond = &training.examplesPerSecondFamily.Add({});
  }
  training.steps.Increment();
  training.examples.Increment(static_cast<double>(report.examples));
  training.step.Set(static_cast<double>(report.step));
  training.stepSeconds.Observe(report.seconds);
  training.loss->Set(report.loss);
  training.learningRate->Set(report.learningRate);
  training.examplesPerSecond->Set(report.examplesPerSecond);
  if (!report.lossScaling)
    return;
  if (!training.lossScale) {
    training.lossScale = &prometheus::BuildGauge()
                              .Name("kiln_loss_scale")
                              .Help("fp16 loss scaling: the scale the next step starts "
                                    "its backward pass from.")
                              .Register(*registry_)
                              .Add({});
    training.skippedSteps = &prometheus::BuildCounter()
                                 .Name("kiln_skipped_steps_total")
                                 .Help("fp16 loss scaling: steps that changed nothing, their "
                                       "gradients not finite.")
                                 .Register(*registry_)
                                 .Add({});
  }
  training.lossScale->Set(report.lossScale);
  if (report.skipped)
    training.skippedSteps->Increment();
}

void PrometheusMetrics::checkpointSaved(int64_t) { checkpointAge_->saved(); }

void PrometheusMetrics::programRan(double seconds) {
  if (!singleRuns_)
    singleRuns_ = std::make_unique<SingleRuns>(*registry_);
  singleRuns_->runs.Increment();
  singleRuns_->lastSeconds.Set(seconds);
}

} // namespace kiln::metrics
