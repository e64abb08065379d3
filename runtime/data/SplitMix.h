//===- SplitMix.h - The random streams of the data sets ---------*- C++ -*-===//
//
// Internal to runtime/data. SplitMix64 (Steele, Lea and Flood, 2014), fixed
// here so that shuffled orders are the same everywhere and synthetic data
// wherever libm agrees (std::normal_distribution and std::shuffle differ
// between standard libraries).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DATA_SPLITMIX_H
#define KILN_RUNTIME_DATA_SPLITMIX_H

#include <cmath>
#include <cstdint>

namespace kiln::data {

constexpr uint64_t kSplitMixGamma = 0x9e3779b97f4a7c15ull;

/// SplitMix64's output function applied to x + gamma.
inline uint64_t splitMix(uint64_t x) {
  uint64_t z = x + kSplitMixGamma;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The SplitMix64 stream seeded with `seed`: splitMix(seed),
/// splitMix(seed + gamma), ...
class SplitMixStream {
public:
  explicit SplitMixStream(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t value = splitMix(state_);
    state_ += kSplitMixGamma;
    return value;
  }

  /// In [0, 1): the top 53 bits of next().
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }

  /// In [0, bound): the high 64 bits of next() * bound.
  uint64_t below(uint64_t bound) {
    return static_cast<uint64_t>(
        (static_cast<unsigned __int128>(next()) * bound) >> 64);
  }

  /// N(0, 1) by Box-Muller (the cosine branch) from two draws, the first
  /// moved to (0, 1].
  double normal() {
    double u1 = static_cast<double>((next() >> 11) + 1) * 0x1p-53;
    double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) *
           std::cos(2.0 * 3.14159265358979323846 * u2);
  }

private:
  uint64_t state_;
};

} // namespace kiln::data

#endif // KILN_RUNTIME_DATA_SPLITMIX_H
