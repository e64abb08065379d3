//===- ClusterSpec.h - The TF_CONFIG cluster spec ---------------*- C++ -*-===//
//
// A cluster spec names every task of a job and its address, and which task
// this process is, in TensorFlow's TF_CONFIG shape, accepted unchanged from
// what launchers write (Kubeflow's TFJob adds "environment": "cloud"; some
// add "rpc_layer"):
//
//   {"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", ...],
//                "ps": [...], "evaluator": [...]},
//    "task": {"type": "worker", "index": 1}}
//
// Keys Kiln does not use are accepted; a known key of the wrong kind, an
// address without a port, an address given twice, or a task that is not in
// the cluster is an error naming the key.
//
// Ranks: the tasks that train (chief, then workers, in index order) hold
// data-parallel ranks [ordinal * R, (ordinal + 1) * R) with R replicas each;
// the chief, or worker 0 in a cluster without one (as in TensorFlow's
// MultiWorkerMirroredStrategy), runs the coordinator and rank 0.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CLUSTER_CLUSTERSPEC_H
#define KILN_RUNTIME_CLUSTER_CLUSTERSPEC_H

#include <map>
#include <string>
#include <vector>

namespace kiln::cluster {

struct TaskId {
  std::string type;
  int index = 0;
  std::string name() const { return type + ":" + std::to_string(index); }
  bool operator==(const TaskId &other) const {
    return type == other.type && index == other.index;
  }
};

struct ClusterSpec {
  /// Addresses ("host:port") by task type, in index order.
  std::map<std::string, std::vector<std::string>> tasks;
  /// This process's task; type empty when the spec names none.
  TaskId task;

  /// The tasks that train, in rank order: the chief, then the workers.
  std::vector<TaskId> trainingTasks() const;
  /// The task that runs the coordinator: the chief, else worker 0.
  TaskId coordinatorTask() const;
  /// The address of `task` (it must exist).
  const std::string &address(const TaskId &task) const;
  /// The position of `task` in trainingTasks(), or -1.
  int trainingOrdinal(const TaskId &task) const;
};

/// Parses `text` (from `origin`, "TF_CONFIG" or a file name, used in
/// errors) into `spec`; false with `error` set to one line naming the key.
bool parseClusterSpec(const std::string &text, const std::string &origin, ClusterSpec &spec,
                      std::string &error);

/// Parses "worker:1" into `task`.
bool parseTaskId(const std::string &text, TaskId &task);

/// Splits "host:port" ("[v6]:port" too); false when there is no valid port.
bool splitAddress(const std::string &address, std::string &host, int &port);

} // namespace kiln::cluster

#endif // KILN_RUNTIME_CLUSTER_CLUSTERSPEC_H
