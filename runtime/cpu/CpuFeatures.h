//===- CpuFeatures.h - Can this CPU run the kernels -------------*- C++ -*-===//
//
// An artifact's kernels are compiled for the target features named in
// `kernels.features`, in LLVM's spelling ("+avx2,+fma,-sse4a"). Running them
// on a CPU without one of those features ends in SIGILL, so the runtime
// refuses such an artifact up front. Features the runtime cannot test (LLVM
// knows more than the CPU identification the compiler exposes) are not
// reported: the table in CpuFeatures.cpp lists those it tests.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_CPUFEATURES_H
#define KILN_RUNTIME_CPU_CPUFEATURES_H

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cpu {

/// Whether this CPU has the feature LLVM calls `name` ("avx2"); nullopt when
/// the runtime cannot test it.
std::optional<bool> hostHasCpuFeature(std::string_view name);

/// The features that `features` requires ("+name"), that `hasFeature` can
/// test, and that it says are missing, in their order in `features`.
std::vector<std::string> missingCpuFeatures(
    std::string_view features,
    const std::function<std::optional<bool>(std::string_view)> &hasFeature =
        hostHasCpuFeature);

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_CPUFEATURES_H
