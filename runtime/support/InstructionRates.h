//===- InstructionRates.h - bf16 dot products against f32 FMAs --*- C++ -*-===//
//
// Whether AVX512_BF16 pays depends on the core, not on the flag: on an AMD
// EPYC (Zen 4) kiln's bf16 products ran 1.5-1.6x as fast as f32, where an
// Intel Xeon of the Sapphire Rapids generation without AMX (flags AVX512_BF16
// and AVX512_FP16) issues one VDPBF16PS every two cycles against two FMAs a
// cycle: 0.48x the multiply-adds of f32, and bf16 products through oneDNN
// two thirds of f32's speed (docs/performance.md). The runtime measures both
// instructions once per process, on the calling thread, in well under a
// millisecond, and computes bf16 products natively only where the dot
// products are not much slower (LowPrecisionGemm); kilnc's report says the
// same. KILN_EMULATE_LOW_PRECISION=0 or 1 pins the choice.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SUPPORT_INSTRUCTIONRATES_H
#define KILN_RUNTIME_SUPPORT_INSTRUCTIONRATES_H

#include <optional>

namespace kiln {

/// Multiply-adds a second of one core: 16 independent chains of AVX512_BF16
/// VDPBF16PS (32 each) and of AVX-512 VFMADD231PS (16 each), the fastest of
/// five interleaved runs of each.
struct DotProductRates {
  double bf16Macs = 0;
  double f32Macs = 0;
  /// bf16Macs / f32Macs: above 1 where bf16 products can be the faster.
  double ratio() const { return f32Macs > 0 ? bf16Macs / f32Macs : 0; }
};

/// This core's rates, measured on the first call; nullopt on a CPU without
/// AVX512_BF16.
const std::optional<DotProductRates> &bf16DotProductRates();

/// Below this ratio a CPU without AMX emulates bf16 products. Not 1: the
/// bf16 kernels still halve the bytes they read, and the choice must not
/// flip between runs on one machine (0.44-0.56 measured on the Xeon
/// without AMX; AMD's Zen 4, 1.5x faster in bf16, far above).
constexpr double kMinNativeBF16Ratio = 0.75;

/// KILN_EMULATE_LOW_PRECISION: true for "1" (emulate every bf16 product),
/// false for "0" (the CPU's bf16 instructions wherever it has them, even
/// slower), nullopt when unset (or anything else): the measured choice.
std::optional<bool> lowPrecisionEmulationSetByEnvironment();

/// Whether the measured choice on this CPU is to emulate although it has
/// AVX512_BF16: no AMX (`hasAmx`; oneDNN takes its tiles whatever the
/// rates) and the dot products below kMinNativeBF16Ratio.
bool bf16DotProductsTooSlow(bool hasAmx);

} // namespace kiln

#endif // KILN_RUNTIME_SUPPORT_INSTRUCTIONRATES_H
