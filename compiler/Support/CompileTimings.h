//===- CompileTimings.h - Where kilnc's time goes ----------------*- C++ -*-===//
//
// Wall-clock seconds of every pass and compile phase, summed by name in the
// order each was first seen, for `kilnc --report`. kilnc installs one
// collector for the process (setActive); the pass managers of the
// compilation (kilnc's own and the kernel lowering's) time their passes
// into it through instrument(), and the phases outside MLIR (LLVM's
// optimization and code generation, linking) through a Phase in scope.
// Without an active collector both do nothing.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_SUPPORT_COMPILETIMINGS_H
#define KILN_COMPILER_SUPPORT_COMPILETIMINGS_H

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

class CompileTimings {
public:
  /// The collector of this process, or null.
  static CompileTimings *active();
  static void setActive(CompileTimings *timings);

  /// Adds `seconds` to the entry `name` (made at the end if new).
  void add(llvm::StringRef name, double seconds);
  /// Times each pass `pm` runs (nested ones included) under its argument
  /// name (`kiln-autodiff`), or its class name where it has none.
  void instrument(mlir::PassManager &pm);
  /// (name, seconds) in the order first seen.
  std::vector<std::pair<std::string, double>> entries() const;

  /// Times its own lifetime as `name` in the active collector, if any.
  class Phase {
  public:
    explicit Phase(llvm::StringRef name)
        : name_(name.str()), begin_(std::chrono::steady_clock::now()) {}
    ~Phase();

  private:
    std::string name_;
    std::chrono::steady_clock::time_point begin_;
  };

private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::string, double>> entries_;
};

} // namespace kiln

#endif // KILN_COMPILER_SUPPORT_COMPILETIMINGS_H
