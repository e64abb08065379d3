//===- VerificationFailure.cpp - Where a FlatBuffer fails to verify -------===//

#include "runtime/artifact/VerificationFailure.h"

#include "proto/kiln/artifact_generated.h"

namespace kiln::artifact {

namespace {

using flatbuffers::Offset;
using flatbuffers::Table;
using flatbuffers::uoffset_t;
using flatbuffers::Vector;
using flatbuffers::voffset_t;

std::string at(const uint8_t *base, const void *where) {
  return std::to_string(static_cast<const uint8_t *>(where) - base);
}

/// The root's fields in the generated Artifact::Verify's order (a field
/// added to the schema and not here is not named: its failures keep the
/// generic message).
class RootWalk {
public:
  RootWalk(const uint8_t *base, size_t size, const Table &root)
      : base_(base), verifier_(base, size, /*max_depth=*/64, /*max_tables=*/size / 4 + 1),
        root_(root) {}

  std::string run() {
    if (!root_.VerifyTableStart(verifier_))
      return "the root table (at offset " + at(base_, &root_) +
             ") or its vtable lies outside the FlatBuffer or is misaligned";
    std::string where;
    (scalar<uint32_t>("format_version", Artifact::VT_FORMAT_VERSION, where) &&
     string("target", Artifact::VT_TARGET, where) &&
     string("producer", Artifact::VT_PRODUCER, where) &&
     string("model", Artifact::VT_MODEL, where) &&
     scalar<uint64_t>("arena_bytes", Artifact::VT_ARENA_BYTES, where) &&
     scalar<uint64_t>("state_bytes", Artifact::VT_STATE_BYTES, where) &&
     bytes("constants", Artifact::VT_CONSTANTS, where) &&
     tables<Buffer>("buffers", Artifact::VT_BUFFERS, where) &&
     tables<Variable>("variables", Artifact::VT_VARIABLES, where) &&
     tables<Program>("programs", Artifact::VT_PROGRAMS, where) &&
     table<KernelLibrary>("kernels", Artifact::VT_KERNELS, where) &&
     table<Training>("training", Artifact::VT_TRAINING, where));
    return where;
  }

private:
  template <typename T> bool scalar(const char *name, voffset_t field, std::string &where) {
    if (root_.VerifyField<T>(verifier_, field, sizeof(T)))
      return true;
    where = std::string("field '") + name + "' of the root table lies outside the FlatBuffer";
    return false;
  }
  /// The field's offset itself, then `object` (null: absent) by `check`.
  template <typename T, typename Check>
  bool pointer(const char *name, voffset_t field, std::string &where, Check check) {
    if (!root_.VerifyOffset(verifier_, field)) {
      where = std::string("field '") + name + "' of the root table points outside the "
              "FlatBuffer";
      return false;
    }
    const T *object = root_.GetPointer<const T *>(field);
    if (!object || check(object))
      return true;
    if (where.empty())
      where = std::string("field '") + name + "' (at offset " + at(base_, object) +
              ") does not verify";
    return false;
  }
  bool string(const char *name, voffset_t field, std::string &where) {
    return pointer<flatbuffers::String>(name, field, where, [&](const flatbuffers::String *s) {
      return verifier_.VerifyString(s);
    });
  }
  bool bytes(const char *name, voffset_t field, std::string &where) {
    return pointer<Vector<uint8_t>>(name, field, where, [&](const Vector<uint8_t> *v) {
      return verifier_.VerifyVector(v);
    });
  }
  template <typename T> bool table(const char *name, voffset_t field, std::string &where) {
    return pointer<T>(name, field, where, [&](const T *t) { return verifier_.VerifyTable(t); });
  }
  /// A vector of tables: the vector, then each element, named by index.
  template <typename T> bool tables(const char *name, voffset_t field, std::string &where) {
    return pointer<Vector<Offset<T>>>(name, field, where, [&](const Vector<Offset<T>> *v) {
      if (!verifier_.VerifyVector(v))
        return false;
      for (uoffset_t i = 0; i < v->size(); ++i)
        if (!verifier_.VerifyTable(v->Get(i))) {
          where = std::string(name) + "[" + std::to_string(i) + "] (a table at offset " +
                  at(base_, v->Get(i)) + ") does not verify";
          return false;
        }
      return true;
    });
  }

  const uint8_t *base_;
  flatbuffers::Verifier verifier_;
  const Table &root_;
};

} // namespace

std::string locateVerificationFailure(const uint8_t *flatbuffer, size_t size) {
  if (size < 2 * sizeof(uoffset_t))
    return "the FlatBuffer's " + std::to_string(size) + " bytes cannot hold a root table";
  uoffset_t root = flatbuffers::ReadScalar<uoffset_t>(flatbuffer);
  if (root % sizeof(uoffset_t) != 0 || root < 2 * sizeof(uoffset_t) ||
      root > size - sizeof(uoffset_t))
    return "the root table offset " + std::to_string(root) +
           " (at offset 0) points outside the FlatBuffer's " + std::to_string(size) +
           " bytes or is misaligned";
  return RootWalk(flatbuffer, size, *flatbuffers::GetRoot<Table>(flatbuffer)).run();
}

} // namespace kiln::artifact
