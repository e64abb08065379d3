//===- Synthetic.cpp - A deterministic, learnable CTR-like data set -------===//
//
// The exact rule (docs/runtime.md, "Training data"):
//  - mix and the streams are SplitMix64 (SplitMix.h): mix(x) is its output
//    function of x + 0x9e3779b97f4a7c15, a stream seeded with s returns
//    mix(s), mix(s + g), ...; uniform() = (next >> 11) * 2^-53; normal() is
//    Box-Muller, cosine branch, from two draws (the first moved to (0, 1]).
//  - Row i draws from the stream seeded with mix(seed ^ mix(i)); the feeds
//    other than the label, in `specs` order, element by element: f32 values
//    normal(); ids floor((bound + 1)^uniform()) - 1, capped at bound - 1 (a
//    log-uniform, Zipf-like law: id 0 is the most frequent), bound =
//    idBound, or 1000 where idBound is 0. A feed of padded id lists (an
//    embedding bag's, [B, ..., L]) draws per list a length n =
//    1 + floor(uniform() * L), then n ids, then pads with -1.
//  - Hidden weights: an f32 element e of feed f has weight
//    normal() of the stream seeded with key(seed, f, e, -1, k), an id v in
//    element e of feed f has effect normal() of key(seed, f, e, v, k), where
//    k numbers the label output (label element times classes plus class)
//    and key hashes its parts with mix in turn. In a padded feed, e is the
//    list's index (an id's effect does not depend on its place in the list)
//    and padding has no effect and is no term.
//  - score_k = (sum of weight * value + sum of effects) * 2 / sqrt(terms).
//    A float label element is 1 when uniform() < sigmoid(score - 1) (the
//    draws continue the row's stream), else 0: a click rate near 0.3. An
//    integer label element is the class c in [0, idBound) (2 classes where
//    idBound is 0) with the highest score, unless classes x terms exceeds
//    kScoredClassTerms: then (a language model's next-token label over a
//    vocabulary) each term votes for one class, uniform() * classes of the
//    stream seeded with the term's key for output e (the label element),
//    with weight value * normal() (an f32 element) or exp(normal() / 2) (an
//    id), the draws continuing that stream; the label element is the class
//    with the largest total of the classes voted for (ties: the smallest).
//    Each term then costs two draws, not one per class.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Dataset.h"

#include "runtime/data/DatasetRows.h"
#include "runtime/data/SplitMix.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace kiln::data {

namespace {

constexpr int64_t kDefaultIdBound = 1000;
constexpr int64_t kDefaultClasses = 2;
/// Classes times terms above which an integer label is voted, not scored.
constexpr int64_t kScoredClassTerms = 16384;

uint64_t mix(uint64_t x) { return splitMix(x); }
using Stream = SplitMixStream;

uint64_t key(uint64_t seed, uint64_t feed, uint64_t element, int64_t value,
             uint64_t output) {
  uint64_t h = mix(seed);
  for (uint64_t part : {feed, element, static_cast<uint64_t>(value), output})
    h = mix(h ^ part);
  return h;
}

int64_t idBoundOf(const FeedSpec &spec) {
  return spec.idBound > 0 ? spec.idBound : kDefaultIdBound;
}

/// The length of a padded feed's id lists; 0 for any other feed.
int64_t listLengthOf(const FeedSpec &spec) {
  return spec.paddedIds && !spec.exampleShape.empty() ? spec.exampleShape.back() : 0;
}

/// Writes integer `value` as element `e` of an I64 or I32 example.
void storeInteger(uint8_t *out, int64_t e, ElementType type, int64_t value) {
  if (type == ElementType::I64) {
    std::memcpy(out + e * 8, &value, 8);
  } else {
    int32_t narrow = static_cast<int32_t>(value);
    std::memcpy(out + e * 4, &narrow, 4);
  }
}

/// Draws one row's features; the label's column is left as it is.
void drawFeatures(Dataset &data, size_t label, int64_t row, Stream &stream) {
  for (size_t f = 0; f < data.specs.size(); ++f) {
    if (f == label)
      continue;
    const FeedSpec &spec = data.specs[f];
    int64_t count = exampleElements(spec);
    uint8_t *out = data.columns[f].data() + row * exampleBytes(spec);
    double logBound = std::log(static_cast<double>(idBoundOf(spec)) + 1.0);
    int64_t listLength = listLengthOf(spec), listEnd = 0;
    for (int64_t e = 0; e < count; ++e) {
      if (spec.type == ElementType::F32) {
        float value = static_cast<float>(stream.normal());
        std::memcpy(out + e * 4, &value, 4);
        continue;
      }
      if (listLength > 1 && e % listLength == 0)
        listEnd = e + 1 + static_cast<int64_t>(stream.uniform() * static_cast<double>(listLength));
      int64_t id = -1;
      if (listLength <= 1 || e < listEnd) {
        id = static_cast<int64_t>(std::exp(stream.uniform() * logBound)) - 1;
        id = std::min(std::max<int64_t>(id, 0), idBoundOf(spec) - 1);
      }
      storeInteger(out, e, spec.type, id);
    }
  }
}

/// Calls `term(f, place, id, value)` for each term of one row: an f32
/// element (id -1, its value) or an id (value 0) that is not padding; `place`
/// is the element, or in a list input the list.
template <typename Term>
void forEachTerm(const Dataset &data, size_t label, int64_t row, Term term) {
  for (size_t f = 0; f < data.specs.size(); ++f) {
    if (f == label)
      continue;
    const FeedSpec &spec = data.specs[f];
    int64_t count = exampleElements(spec);
    const uint8_t *in = data.columns[f].data() + row * exampleBytes(spec);
    int64_t listLength = listLengthOf(spec);
    for (int64_t e = 0; e < count; ++e) {
      if (spec.type == ElementType::F32) {
        float value;
        std::memcpy(&value, in + e * 4, 4);
        term(f, static_cast<uint64_t>(e), int64_t(-1), static_cast<double>(value));
        continue;
      }
      int64_t id = 0;
      if (spec.type == ElementType::I64) {
        std::memcpy(&id, in + e * 8, 8);
      } else {
        int32_t narrow;
        std::memcpy(&narrow, in + e * 4, 4);
        id = narrow;
      }
      if (listLength > 0 && id == -1)
        continue;
      term(f, static_cast<uint64_t>(listLength > 0 ? e / listLength : e), id, 0.0);
    }
  }
}

/// The hidden score of output `k` for one row.
double score(const Dataset &data, size_t label, int64_t row, uint64_t seed,
             uint64_t k) {
  double sum = 0;
  int64_t terms = 0;
  forEachTerm(data, label, row, [&](size_t f, uint64_t place, int64_t id, double value) {
    ++terms;
    sum += id == -1 ? value * Stream(key(seed, f, place, -1, k)).normal()
                    : Stream(key(seed, f, place, id, k)).normal();
  });
  return terms ? sum * 2.0 / std::sqrt(static_cast<double>(terms)) : 0.0;
}

/// The terms of a row: the elements of every feed but the label (padding
/// included: a bound, not the count).
int64_t termsOf(const Dataset &data, size_t label) {
  int64_t terms = 0;
  for (size_t f = 0; f < data.specs.size(); ++f)
    if (f != label)
      terms += exampleElements(data.specs[f]);
  return terms;
}

/// The voted class of integer label element `e` of one row (the rule above).
int64_t votedClass(const Dataset &data, size_t label, int64_t row, uint64_t seed, uint64_t e,
                   int64_t classes) {
  std::vector<std::pair<int64_t, double>> totals; // By class, in the order voted.
  forEachTerm(data, label, row, [&](size_t f, uint64_t place, int64_t id, double value) {
    Stream term(key(seed, f, place, id, e));
    int64_t vote =
        std::min<int64_t>(static_cast<int64_t>(term.uniform() * classes), classes - 1);
    double weight = id == -1 ? value * term.normal() : std::exp(0.5 * term.normal());
    auto found = std::find_if(totals.begin(), totals.end(),
                              [&](const auto &total) { return total.first == vote; });
    if (found == totals.end())
      totals.emplace_back(vote, weight);
    else
      found->second += weight;
  });
  int64_t best = 0;
  double bestTotal = -INFINITY;
  for (const auto &[c, total] : totals)
    if (total > bestTotal || (total == bestTotal && c < best)) {
      best = c;
      bestTotal = total;
    }
  return best;
}

void drawLabel(Dataset &data, size_t label, int64_t row, uint64_t seed,
               Stream &stream) {
  const FeedSpec &spec = data.specs[label];
  int64_t count = exampleElements(spec);
  uint8_t *out = data.columns[label].data() + row * exampleBytes(spec);
  if (spec.type == ElementType::F32) {
    for (int64_t e = 0; e < count; ++e) {
      double z = score(data, label, row, seed, e) - 1.0;
      float click = stream.uniform() < 1.0 / (1.0 + std::exp(-z)) ? 1.0f : 0.0f;
      std::memcpy(out + e * 4, &click, 4);
    }
    return;
  }
  int64_t classes = spec.idBound > 0 ? spec.idBound : kDefaultClasses;
  bool voted = classes * termsOf(data, label) > kScoredClassTerms;
  for (int64_t e = 0; e < count; ++e) {
    if (voted) {
      storeInteger(out, e, spec.type, votedClass(data, label, row, seed, e, classes));
      continue;
    }
    int64_t best = 0;
    double bestScore = -INFINITY;
    for (int64_t c = 0; c < classes; ++c) {
      double s = score(data, label, row, seed, e * classes + c);
      if (s > bestScore) {
        bestScore = s;
        best = c;
      }
    }
    storeInteger(out, e, spec.type, best);
  }
}

} // namespace

Dataset syntheticDataset(const std::vector<FeedSpec> &specs,
                         const std::string &labelFeed, int64_t rows,
                         uint64_t seed) {
  std::string problem;
  if (!checkSpecs(specs, problem))
    throw std::invalid_argument("syntheticDataset: " + problem);
  if (rows < 0)
    throw std::invalid_argument("syntheticDataset: negative row count " +
                                std::to_string(rows));
  size_t label = specs.size();
  for (size_t f = 0; f < specs.size(); ++f)
    if (specs[f].name == labelFeed)
      label = f;
  if (!labelFeed.empty() && label == specs.size())
    throw std::invalid_argument("syntheticDataset: no input named '" +
                                labelFeed + "' for the label");
  Dataset data;
  data.path = "synthetic(seed " + std::to_string(seed) + ")";
  data.rows = rows;
  data.specs = specs;
  for (const FeedSpec &spec : specs)
    data.columns.emplace_back(rows * exampleBytes(spec));
  for (int64_t row = 0; row < rows; ++row) {
    Stream stream(mix(seed ^ mix(static_cast<uint64_t>(row))));
    drawFeatures(data, label, row, stream);
    if (label < specs.size())
      drawLabel(data, label, row, seed, stream);
  }
  return data;
}

} // namespace kiln::data
