//===- PrometheusMetrics.h - kiln run's Prometheus endpoint -----*- C++ -*-===//
//
// `kiln run --metrics-port PORT` serves the run's metrics at
// http://ADDRESS:PORT/metrics in Prometheus' text format, through
// prometheus-cpp's Exposer (an embedded civetweb server with its own
// threads). Its own library, kiln_prometheus, so that nothing else in the
// runtime links an HTTP server.
//
//   kiln_info{artifact,program}       gauge, always 1: what is running
//   training (a TrainingObserver of runtime/train/TrainingLoop.h):
//   kiln_steps_total                  counter: steps this process trained
//   kiln_examples_total               counter: rows those steps trained on
//   kiln_examples_per_second          gauge: the last step's rate
//   kiln_loss                         gauge: the last step's mean loss
//   kiln_learning_rate                gauge: the last step's learning rate
//   kiln_step                         gauge: the last finished step, counted
//                                     from the start of training
//   kiln_stop_step                    gauge: the step the run stops at
//   kiln_step_duration_seconds        histogram: one step (forward,
//                                     backward, update), 0.1 ms .. 30 s
//   kiln_checkpoint_age_seconds       gauge: seconds since this run last
//                                     committed a checkpoint, computed at
//                                     scrape time; absent until it has one
//   kiln_loss_scale                   gauge, fp16 only: the next step's scale
//   kiln_skipped_steps_total          counter, fp16 only: steps skipped
//                                     (gradients not finite)
//   a single run (no --data):
//   kiln_runs_total                   counter: runs of the program finished
//   kiln_last_run_duration_seconds    gauge: how long the last one took
//
// Loss, learning rate and rate appear with the first step, the training
// series with training. Other parts of a run add their own families to
// registry(): the place for collective (allreduce bytes, latency, timeouts)
// and parameter-server RPC metrics (pull/push latency, retries, errors),
// each fed by an observer of its layer the way training is.
//
// Threads: call the methods from one thread (the training thread); scrapes
// run on the server's threads and read only prometheus-cpp's thread-safe
// metrics and an atomic time.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_METRICS_PROMETHEUSMETRICS_H
#define KILN_RUNTIME_METRICS_PROMETHEUSMETRICS_H

#include "runtime/train/TrainingLoop.h"

#include <memory>
#include <string>

namespace prometheus {
class Exposer;
class Registry;
} // namespace prometheus

namespace kiln::metrics {

class PrometheusMetrics final : public train::TrainingObserver {
public:
  /// Starts serving on `address` (IPv4) and `port`; 0 picks a free port,
  /// port() tells which. `artifact` and `program` label kiln_info. On
  /// failure sets `error` to "cannot listen on ADDRESS:PORT: REASON" (REASON
  /// such as "address in use") and returns null.
  static std::unique_ptr<PrometheusMetrics>
  serve(const std::string &address, int port, const std::string &artifact,
        const std::string &program, std::string &error);
  ~PrometheusMetrics() override;

  /// The port it listens on.
  int port() const { return port_; }
  /// http://ADDRESS:PORT/metrics
  std::string url() const;
  /// Where other parts of the run register their metric families.
  prometheus::Registry &registry() { return *registry_; }

  void trainingStarted(int64_t startStep, int64_t lastStep) override;
  void stepFinished(const train::StepReport &report) override;
  void checkpointSaved(int64_t step) override;

  /// A single run of the program (no training) finished in `seconds`.
  void programRan(double seconds);

private:
  class CheckpointAge;
  struct Training;
  struct SingleRuns;

  PrometheusMetrics();

  std::string address_;
  int port_ = 0;
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<CheckpointAge> checkpointAge_;
  std::unique_ptr<Training> training_;
  std::unique_ptr<SingleRuns> singleRuns_;
  /// Last, so that serving stops before the metrics go.
  std::unique_ptr<prometheus::Exposer> exposer_;
};

} // namespace kiln::metrics

#endif // KILN_RUNTIME_METRICS_PROMETHEUSMETRICS_H
