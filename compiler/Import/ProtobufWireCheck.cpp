//===- ProtobufWireCheck.cpp - Where a binary protobuf file goes wrong ----===//

#include "compiler/Import/ProtobufWireCheck.h"

#include "runtime/support/PrintableText.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

namespace pb = google::protobuf;

namespace kiln {
namespace {

/// Protobuf's own limit on nested messages.
constexpr int kMaxDepth = 100;

/// The first problem found.
struct Failure {
  std::string text;
};

/// Walks the fields of one message, [p, end), within a file starting at
/// `file` and ending at `fileEnd`.
class WireWalker {
public:
  WireWalker(const uint8_t *file, const uint8_t *fileEnd) : file_(file), fileEnd_(fileEnd) {}

  /// The first problem in a message of `type` (null: unknown, only its
  /// framing is checked) at `path` ("" at the top); `endGroup`, the number
  /// of the group this walk is inside (whose tag is at `groupStart`), or 0.
  std::optional<Failure> walk(const uint8_t *p, const uint8_t *end, const pb::Descriptor *type,
                              const std::string &path, int depth, uint32_t endGroup = 0,
                              const uint8_t *groupStart = nullptr) {
    if (depth > kMaxDepth)
      return corrupt(p, "'" + path + "' is nested more than " + std::to_string(kMaxDepth) +
                            " messages deep");
    std::map<int, int> seen; // Occurrences of each repeated field so far.
    while (p < end) {
      const uint8_t *fieldStart = p;
      std::optional<uint64_t> tag = varint(p, end);
      if (!tag)
        return endsInside(fieldStart, end, "a field's tag" + in(path));
      if (p - fieldStart > 5) // Protobuf reads a tag as 32 bits.
        return corrupt(fieldStart, "a field's tag of more than 5 bytes" + in(path));
      uint64_t number = *tag >> 3;
      unsigned wire = static_cast<unsigned>(*tag & 7);
      if (number == 0 || number > 0x1fffffff)
        return corrupt(fieldStart, "a field numbered " + std::to_string(number) + in(path));
      const pb::FieldDescriptor *field =
          type ? type->FindFieldByNumber(static_cast<int>(number)) : nullptr;
      int index = field && field->is_repeated() ? seen[field->number()]++ : -1;
      // Named when needed: most fields are read past without a word.
      auto name = [&] { return fieldName(path, field, number, index); };
      switch (wire) {
      case 0: // Varint.
        if (!varint(p, end))
          return endsInside(fieldStart, end, "'" + name() + "'");
        break;
      case 1:   // 64 bits.
      case 5: { // 32 bits.
        size_t need = wire == 1 ? 8 : 4;
        if (static_cast<size_t>(end - p) < need)
          return endsInside(fieldStart, end, "'" + name() + "'");
        p += need;
        break;
      }
      case 2: { // Length-delimited.
        std::optional<uint64_t> length = varint(p, end);
        if (!length)
          return endsInside(fieldStart, end, "the length of '" + name() + "'");
        bool isMessage = field && field->type() == pb::FieldDescriptor::TYPE_MESSAGE;
        if (*length > static_cast<uint64_t>(end - p)) {
          std::string holds = "'" + name() + "' (" + std::to_string(*length) +
                              " bytes from offset " + std::to_string(fieldStart - file_) + ")";
          if (end != fileEnd_)
            return corrupt(fieldStart, holds + " runs past the end of " + limitName(path));
          // Cut short: a message field may name where inside it.
          if (isMessage)
            if (std::optional<Failure> inner =
                    walk(p, end, field->message_type(), name(), depth + 1))
              return inner;
          return Failure{"the file ends at offset " + std::to_string(end - file_) + ", inside " +
                         holds};
        }
        const uint8_t *payloadEnd = p + *length;
        if (isMessage) {
          if (std::optional<Failure> inner =
                  walk(p, payloadEnd, field->message_type(), name(), depth + 1))
            return inner;
        } else if (field && field->type() == pb::FieldDescriptor::TYPE_STRING &&
                   field->file()->syntax() == pb::FileDescriptor::SYNTAX_PROTO3 &&
                   !isUtf8(p, payloadEnd)) {
          return corrupt(fieldStart, "'" + name() + "' is not UTF-8 text");
        } else if (field && field->is_packable() && !packedValuesFit(*field, p, payloadEnd)) {
          return corrupt(fieldStart, "'" + name() + "' holds " + std::to_string(*length) +
                                         " bytes, not a whole number of packed values");
        }
        p = payloadEnd;
        break;
      }
      case 3: { // Start of a group, to its end-group tag.
        const pb::Descriptor *group =
            field && field->type() == pb::FieldDescriptor::TYPE_GROUP ? field->message_type()
                                                                       : nullptr;
        if (std::optional<Failure> inner =
                walk(p, end, group, name(), depth + 1, static_cast<uint32_t>(number), fieldStart))
          return inner;
        p = groupEnd_;
        break;
      }
      case 4: // End of a group.
        if (number != endGroup)
          return corrupt(fieldStart, "an end-group tag for field " + std::to_string(number) +
                                         " with no group open" + in(path));
        groupEnd_ = p;
        return std::nullopt;
      default:
        return corrupt(fieldStart, "'" + name() + "' has wire type " + std::to_string(wire) +
                                       ", which protobuf does not define");
      }
    }
    if (endGroup != 0)
      return endsInside(groupStart, end, "group '" + path + "'");
    return std::nullopt;
  }

private:
  /// Reads a varint at `p` (advanced past it); none when `end` or the
  /// tenth byte comes first.
  static std::optional<uint64_t> varint(const uint8_t *&p, const uint8_t *end) {
    uint64_t value = 0;
    for (int shift = 0; shift < 70 && p < end; shift += 7) {
      uint8_t byte = *p++;
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return value;
    }
    return std::nullopt;
  }

  /// Whether [p, end) is a whole number of `field`'s packed values.
  static bool packedValuesFit(const pb::FieldDescriptor &field, const uint8_t *p,
                              const uint8_t *end) {
    switch (field.type()) {
    case pb::FieldDescriptor::TYPE_FIXED32:
    case pb::FieldDescriptor::TYPE_SFIXED32:
    case pb::FieldDescriptor::TYPE_FLOAT:
      return (end - p) % 4 == 0;
    case pb::FieldDescriptor::TYPE_FIXED64:
    case pb::FieldDescriptor::TYPE_SFIXED64:
    case pb::FieldDescriptor::TYPE_DOUBLE:
      return (end - p) % 8 == 0;
    default: // Varints.
      while (p < end)
        if (!varint(p, end))
          return false;
      return true;
    }
  }

  static bool isUtf8(const uint8_t *p, const uint8_t *end) {
    std::string_view text(reinterpret_cast<const char *>(p), end - p);
    while (!text.empty()) {
      size_t length = utf8SequenceLength(text);
      if (length == 0)
        return false;
      text.remove_prefix(length);
    }
    return true;
  }

  /// "PATH.name", "PATH.name[index]" for a repeated field, or "PATH.field
  /// N" for a field the schema does not declare.
  static std::string fieldName(const std::string &path, const pb::FieldDescriptor *field,
                               uint64_t number, int index) {
    std::string prefix = path.empty() ? "" : path + ".";
    if (!field)
      return prefix + "field " + std::to_string(number);
    std::string name = prefix + field->name();
    if (index >= 0)
      name += "[" + std::to_string(index) + "]";
    return name;
  }

  static std::string in(const std::string &path) {
    return path.empty() ? std::string() : " in '" + path + "'";
  }

  static std::string limitName(const std::string &path) {
    return path.empty() ? std::string("the file") : "'" + path + "'";
  }

  Failure corrupt(const uint8_t *at, const std::string &what) const {
    return Failure{"at offset " + std::to_string(at - file_) + ": " + what};
  }

  /// The message's end came inside `what`, which starts at `at`.
  Failure endsInside(const uint8_t *at, const uint8_t *end, const std::string &what) const {
    if (end == fileEnd_)
      return Failure{"the file ends at offset " + std::to_string(end - file_) + ", inside " +
                     what + " (from offset " + std::to_string(at - file_) + ")"};
    return corrupt(at, what + " runs past the end of its message");
  }

  const uint8_t *file_, *fileEnd_;
  const uint8_t *groupEnd_ = nullptr; ///< Past the end-group tag last closed.
};

} // namespace

std::string describeWireFailure(llvm::StringRef bytes, const pb::Descriptor &type) {
  const auto *begin = reinterpret_cast<const uint8_t *>(bytes.data());
  WireWalker walker(begin, begin + bytes.size());
  std::optional<Failure> failure = walker.walk(begin, begin + bytes.size(), &type, "", 0);
  return failure ? failure->text : std::string();
}

std::string protobufParseFailure(llvm::StringRef bytes, const pb::Descriptor &type) {
  std::string where = describeWireFailure(bytes, type);
  return where.empty() ? "protobuf parse failed" : "protobuf parse failed: " + where;
}

} // namespace kiln
