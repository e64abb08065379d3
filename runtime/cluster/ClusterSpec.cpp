//===- ClusterSpec.cpp - The TF_CONFIG cluster spec -----------------------===//

#include "runtime/cluster/ClusterSpec.h"

#include <nlohmann/json.hpp>

#include <set>

namespace kiln::cluster {
namespace {

using Json = nlohmann::json;

const char *const kTaskTypes[] = {"chief", "worker", "ps", "evaluator"};

bool knownType(const std::string &type) {
  for (const char *known : kTaskTypes)
    if (type == known)
      return true;
  return false;
}

bool parseCluster(const Json &cluster, const std::string &origin, ClusterSpec &spec,
                  std::string &error) {
  if (!cluster.is_object()) {
    error = origin + ": error: 'cluster': expected an object of task lists, such as "
                     "{\"worker\": [\"host:port\", ...]}";
    return false;
  }
  std::set<std::string> seen;
  for (const auto &[type, list] : cluster.items()) {
    std::string key = "'cluster." + type + "'";
    std::string field = "cluster." + type;
    if (!knownType(type)) {
      error = origin + ": error: " + key +
              ": unknown task type (expected chief, worker, ps or evaluator)";
      return false;
    }
    if (!list.is_array()) {
      error = origin + ": error: " + key + ": expected a list of \"host:port\" strings";
      return false;
    }
    std::vector<std::string> &addresses = spec.tasks[type];
    for (size_t i = 0; i < list.size(); ++i) {
      std::string host;
      int port = 0;
      std::string item = "'" + field + "[" + std::to_string(i) + "]'";
      if (!list[i].is_string() || !splitAddress(list[i].get<std::string>(), host, port)) {
        error = origin + ": error: " + item + ": expected \"host:port\" with a port 1..65535, got " +
                list[i].dump();
        return false;
      }
      if (!seen.insert(list[i].get<std::string>()).second) {
        error = origin + ": error: " + item + ": address " + list[i].get<std::string>() +
                " is given to another task too";
        return false;
      }
      addresses.push_back(list[i].get<std::string>());
    }
  }
  // One chief, and one evaluator (TensorFlow's SidecarEvaluator: two would
  // evaluate every checkpoint twice into one metrics file).
  for (const char *single : {"chief", "evaluator"})
    if (spec.tasks.count(single) && spec.tasks[single].size() > 1) {
      error = origin + ": error: 'cluster." + single + "': a cluster has at most one " + single +
              ", got " + std::to_string(spec.tasks[single].size());
      return false;
    }
  if (spec.trainingTasks().empty()) {
    error = origin + ": error: 'cluster': no chief or worker to train";
    return false;
  }
  return true;
}

bool parseTask(const Json &task, const std::string &origin, ClusterSpec &spec,
               std::string &error) {
  if (!task.is_object() || !task.contains("type") || !task["type"].is_string()) {
    error = origin + ": error: 'task': expected {\"type\": \"worker\", \"index\": N}";
    return false;
  }
  spec.task.type = task["type"].get<std::string>();
  const Json index = task.value("index", Json(0));
  if (!index.is_number_integer()) {
    error = origin + ": error: 'task.index': expected a whole number, got " + index.dump();
    return false;
  }
  auto it = spec.tasks.find(spec.task.type);
  if (it == spec.tasks.end()) {
    error = origin + ": error: 'task.type': '" + spec.task.type +
            "' has no list in 'cluster'";
    return false;
  }
  int64_t value = index.get<int64_t>();
  if (value < 0 || value >= static_cast<int64_t>(it->second.size())) {
    error = origin + ": error: 'task.index': " + std::to_string(value) + " is out of range: " +
            "'cluster." + spec.task.type + "' has " + std::to_string(it->second.size()) +
            " task" + (it->second.size() == 1 ? "" : "s");
    return false;
  }
  spec.task.index = static_cast<int>(value);
  return true;
}

} // namespace

std::vector<TaskId> ClusterSpec::trainingTasks() const {
  std::vector<TaskId> list;
  for (const char *type : {"chief", "worker"}) {
    auto it = tasks.find(type);
    if (it != tasks.end())
      for (size_t i = 0; i < it->second.size(); ++i)
        list.push_back({type, static_cast<int>(i)});
  }
  return list;
}

TaskId ClusterSpec::coordinatorTask() const {
  auto chief = tasks.find("chief");
  if (chief != tasks.end() && !chief->second.empty())
    return {"chief", 0};
  return {"worker", 0};
}

const std::string &ClusterSpec::address(const TaskId &task) const {
  return tasks.at(task.type).at(task.index);
}

int ClusterSpec::trainingOrdinal(const TaskId &task) const {
  std::vector<TaskId> list = trainingTasks();
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i] == task)
      return static_cast<int>(i);
  return -1;
}

bool splitAddress(const std::string &address, std::string &host, int &port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    return false;
  host = address.substr(0, colon);
  if (host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string::npos)
    return false; // An IPv6 address needs brackets.
  std::string digits = address.substr(colon + 1);
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  port = std::stoi(digits);
  return !host.empty() && port >= 1 && port <= 65535;
}

bool parseTaskId(const std::string &text, TaskId &task) {
  size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    return false;
  std::string digits = text.substr(colon + 1);
  if (digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  task = {text.substr(0, colon), std::stoi(digits)};
  return true;
}

bool parseClusterSpec(const std::string &text, const std::string &origin, ClusterSpec &spec,
                      std::string &error) {
  spec = ClusterSpec();
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error &e) {
    error = origin + ": error: not JSON: at byte " + std::to_string(e.byte) + ": " +
            std::string(e.what()).substr(std::string(e.what()).find(':') + 2);
    return false;
  }
  if (!root.is_object()) {
    error = origin + ": error: expected a JSON object with 'cluster' and 'task'";
    return false;
  }
  if (!root.contains("cluster")) {
    error = origin + ": error: 'cluster' is missing";
    return false;
  }
  if (!parseCluster(root["cluster"], origin, spec, error))
    return false;
  if (root.contains("task") && !parseTask(root["task"], origin, spec, error))
    return false;
  for (const char *key : {"environment", "rpc_layer"})
    if (root.contains(key) && !root[key].is_string()) {
      error = origin + ": error: '" + key + "': expected a string, got " + root[key].dump();
      return false;
    }
  return true;
}

} // namespace kiln::cluster
