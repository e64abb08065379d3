//===- ParameterAccess.h - Where a program's ps instructions go -*- C++ -*-===//
//
// The PsPull, PsPullRows, PsPush and PsPushRows instructions of a
// parameter-server artifact (artifact.fbs) call this interface; the
// parameter-server client (runtime/ps/ParameterClient.h) implements it, over
// gRPC or with servers in the same process. Variables are named by their
// index in the artifact's `variables`; tensors are f32, ids i32 or i64.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_EXEC_PARAMETERACCESS_H
#define KILN_RUNTIME_EXEC_PARAMETERACCESS_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::exec {

/// One variable to pull: whole (`ids` null) or the rows at `ids` (`count`
/// of them, i32 or i64), written to `out` ([count, row] for rows).
struct PullOrder {
  uint32_t variable = 0;
  float *out = nullptr;
  const void *ids = nullptr;
  bool ids64 = false;
  int64_t count = 0;
};

class ParameterAccess {
public:
  virtual ~ParameterAccess() = default;
  /// Pulls every order together: one request per server that holds a part
  /// of any of them (a program's consecutive pull instructions come here
  /// as one call).
  virtual bool pull(const std::vector<PullOrder> &orders, std::string &error) = 0;
  /// May start pulling `orders` for the next step now (their `out` unused,
  /// their ids copied), to be taken by that step's pull of the same orders.
  /// The default does nothing. False with `error` for orders pull() would
  /// refuse.
  virtual bool prefetch(const std::vector<PullOrder> &orders, std::string &error) {
    (void)orders;
    (void)error;
    return true;
  }
  /// Queues the dense gradient of `variable` for the step's push.
  virtual bool pushDense(uint32_t variable, const float *gradient, std::string &error) = 0;
  /// Queues rows[k] as the gradient of id ids[k] of table `variable`.
  virtual bool pushRows(uint32_t variable, const void *ids, bool ids64, int64_t count,
                        const float *rows, std::string &error) = 0;
};

} // namespace kiln::exec

#endif // KILN_RUNTIME_EXEC_PARAMETERACCESS_H
