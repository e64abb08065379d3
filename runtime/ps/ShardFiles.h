//===- ShardFiles.h - Names in a parameter-server checkpoint ----*- C++ -*-===//
//
// What a checkpoint of a parameter-server run holds besides the chief's
// model-*.safetensors: one file per server, and manifest data entries that
// say how many servers wrote it and each one's update count
// (docs/parameter-server.md, Checkpoints).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PS_SHARDFILES_H
#define KILN_RUNTIME_PS_SHARDFILES_H

#include <cstdio>
#include <string>

namespace kiln::ps {

/// Manifest data: the number of servers that wrote the checkpoint.
constexpr const char *kServersKey = "ps.servers";

/// The most parameter servers a run may have (kiln run --ps; kiln launch
/// starts at most 256, each a process).
constexpr int kMaxServers = 1024;
/// Manifest data: 1 when the servers ran async, 0 sync (since fp16 loss
/// scaling; older checkpoints do not say).
constexpr const char *kAsyncKey = "ps.async";

/// "ps-0000I-of-0000N.safetensors": server I's part.
inline std::string serverShardFile(int index, int servers) {
  char name[64];
  std::snprintf(name, sizeof(name), "ps-%05d-of-%05d.safetensors", index, servers);
  return name;
}

/// The chief's own files of a checkpoint (model-*.safetensors), which its
/// restore reads; the servers' parts are the others.
inline bool isChiefFile(const std::string &file) { return file.rfind("model-", 0) == 0; }

/// Any server's part of a checkpoint (ps-*.safetensors).
inline bool isServerFile(const std::string &file) { return file.rfind("ps-", 0) == 0; }

/// Manifest data: server I's applied updates ("ps.I.applied_steps").
inline std::string appliedStepsKey(int index) {
  return "ps." + std::to_string(index) + ".applied_steps";
}

/// Manifest data: server I's skipped steps under fp16 loss scaling
/// ("ps.I.skipped_steps"; written when there were some).
inline std::string skippedStepsKey(int index) {
  return "ps." + std::to_string(index) + ".skipped_steps";
}

} // namespace kiln::ps

#endif // KILN_RUNTIME_PS_SHARDFILES_H
