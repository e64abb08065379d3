//===- CpuFeatures.cpp - Can this CPU run the kernels ---------------------===//

#include "runtime/cpu/CpuFeatures.h"

namespace kiln::cpu {

namespace {

struct KnownFeature {
  std::string_view name; // LLVM's and GCC's spelling (they agree for these).
  bool (*present)();
};

// __builtin_cpu_supports takes a string literal, hence one function each.
#define KILN_CPU_FEATURE(NAME)                                                 \
  KnownFeature {                                                               \
    NAME, [] { return __builtin_cpu_supports(NAME) != 0; }                     \
  }

const KnownFeature kKnownFeatures[] = {
    KILN_CPU_FEATURE("cmov"),         KILN_CPU_FEATURE("popcnt"),
    KILN_CPU_FEATURE("sse"),          KILN_CPU_FEATURE("sse2"),
    KILN_CPU_FEATURE("sse3"),         KILN_CPU_FEATURE("ssse3"),
    KILN_CPU_FEATURE("sse4.1"),       KILN_CPU_FEATURE("sse4.2"),
    KILN_CPU_FEATURE("avx"),          KILN_CPU_FEATURE("avx2"),
    KILN_CPU_FEATURE("fma"),          KILN_CPU_FEATURE("f16c"),
    KILN_CPU_FEATURE("bmi"),          KILN_CPU_FEATURE("bmi2"),
    KILN_CPU_FEATURE("lzcnt"),        KILN_CPU_FEATURE("movbe"),
    KILN_CPU_FEATURE("adx"),          KILN_CPU_FEATURE("aes"),
    KILN_CPU_FEATURE("pclmul"),       KILN_CPU_FEATURE("vpclmulqdq"),
    KILN_CPU_FEATURE("gfni"),         KILN_CPU_FEATURE("sha"),
    KILN_CPU_FEATURE("avxvnni"),      KILN_CPU_FEATURE("avx512f"),
    KILN_CPU_FEATURE("avx512bw"),     KILN_CPU_FEATURE("avx512cd"),
    KILN_CPU_FEATURE("avx512dq"),     KILN_CPU_FEATURE("avx512vl"),
    KILN_CPU_FEATURE("avx512ifma"),   KILN_CPU_FEATURE("avx512vbmi"),
    KILN_CPU_FEATURE("avx512vbmi2"),  KILN_CPU_FEATURE("avx512vnni"),
    KILN_CPU_FEATURE("avx512bitalg"), KILN_CPU_FEATURE("avx512vpopcntdq"),
    KILN_CPU_FEATURE("avx512bf16"),   KILN_CPU_FEATURE("avx512fp16"),
    KILN_CPU_FEATURE("amx-tile"),     KILN_CPU_FEATURE("amx-int8"),
    KILN_CPU_FEATURE("amx-bf16"),     KILN_CPU_FEATURE("sse4a"),
    KILN_CPU_FEATURE("fma4"),         KILN_CPU_FEATURE("xop"),
};

#undef KILN_CPU_FEATURE

} // namespace

std::optional<bool> hostHasCpuFeature(std::string_view name) {
  for (const KnownFeature &feature : kKnownFeatures)
    if (feature.name == name)
      return feature.present();
  return std::nullopt;
}

std::vector<std::string> missingCpuFeatures(
    std::string_view features,
    const std::function<std::optional<bool>(std::string_view)> &hasFeature) {
  std::vector<std::string> missing;
  while (!features.empty()) {
    size_t comma = features.find(',');
    std::string_view item = features.substr(0, comma);
    features = comma == std::string_view::npos ? std::string_view()
                                               : features.substr(comma + 1);
    if (item.size() < 2 || item.front() != '+')
      continue;
    std::string_view name = item.substr(1);
    if (std::optional<bool> present = hasFeature(name); present && !*present)
      missing.emplace_back(name);
  }
  return missing;
}

} // namespace kiln::cpu
