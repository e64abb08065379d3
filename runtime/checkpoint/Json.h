//===- Json.h - Strict JSON for checkpoint files ----------------*- C++ -*-===//
//
// Checkpoint manifests and safetensors headers are read with nlohmann-json
// into an ordered_json (object keys in file order), more strictly than the
// library's own parse: a key twice in one object is refused, nesting is
// bounded (hostile input cannot exhaust the stack), a NUL byte is refused
// rather than ending the text, and every integer that fits in int64 is
// stored as one (number_integer; a larger one becomes a double).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CHECKPOINT_JSON_H
#define KILN_RUNTIME_CHECKPOINT_JSON_H

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::checkpoint {

/// Deepest nesting of arrays and objects parseJsonStrict accepts.
constexpr int kMaxJsonDepth = 64;

/// Parses all of `size` bytes at `text` as one JSON value (whitespace around
/// it allowed) into `out`. On failure sets `problem` to "at byte OFFSET:
/// WHAT" and returns false, leaving `out` alone. OFFSET is the byte at fault
/// (the text's size for its end), counted from `offsetBase`: where the text
/// starts in its file. WHAT is nlohmann's message for malformed text,
/// "duplicate key "K"" (at the second key), "nesting deeper than 64" or
/// "unexpected byte 0x00".
bool parseJsonStrict(const char *text, size_t size, nlohmann::ordered_json &out,
                     std::string &problem, size_t offsetBase = 0);

/// "null", "a boolean", "an integer", "a number", "a string", "an array",
/// "an object": for messages.
const char *jsonKindName(nlohmann::ordered_json::value_t kind);
inline const char *jsonKindName(const nlohmann::ordered_json &value) {
  return jsonKindName(value.type());
}

/// Reads `value`, the field called `field` in messages, as an array of
/// non-negative integers into `out`. Returns "" or the problem ("shape is a
/// string, expected an array of non-negative integers", "shape[1] is -3,
/// expected a non-negative integer").
std::string readNonNegativeIntegers(const nlohmann::ordered_json &value,
                                    const std::string &field,
                                    std::vector<int64_t> &out);

/// Whether `text` is valid UTF-8, as JSON text must be: what a checkpoint
/// writes as a JSON string has to read back.
bool isValidUtf8(const std::string &text);

} // namespace kiln::checkpoint

#endif // KILN_RUNTIME_CHECKPOINT_JSON_H
