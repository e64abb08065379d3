//===- InspectCommand.cpp - kiln inspect ----------------------------------===//

#include "tools/kiln/InspectCommand.h"

#include "runtime/artifact/DTypes.h"
#include "runtime/artifact/VerifiedArtifact.h"
#include "runtime/support/PrintableText.h"
#include "tools/kiln/JsonWriter.h"

#include <iostream>
#include <map>
#include <sstream>

namespace kiln::tool {

namespace {

using namespace artifact;
using Bindings = flatbuffers::Vector<flatbuffers::Offset<Binding>>;

std::string text(const flatbuffers::String *string) {
  return string ? string->str() : "";
}

/// `string` for the text output: control characters escaped.
std::string shown(const flatbuffers::String *string) {
  return printableText(text(string));
}

template <typename T> size_t sizeOf(const flatbuffers::Vector<T> *vector) {
  return vector ? vector->size() : 0;
}

/// Instruction counts by kind, in the schema's order of kinds.
std::map<Instruction, size_t> countInstructions(const Program &program) {
  std::map<Instruction, size_t> counts;
  if (const auto *types = program.instructions_type())
    for (uint8_t type : *types)
      ++counts[static_cast<Instruction>(type)];
  return counts;
}

/// "f32 [2, 3]" of buffer `index`.
std::string describeBuffer(const VerifiedArtifact &artifact, uint32_t index) {
  const Buffer &buffer = *artifact.root().buffers()->Get(index);
  return std::string(dtypeName(buffer.dtype())) + " " +
         shapeString(buffer.shape());
}

void printBindings(std::ostream &os, const VerifiedArtifact &artifact,
                   const char *kind, const Bindings *bindings) {
  if (bindings)
    for (const Binding *binding : *bindings)
      os << "    " << kind << " " << shown(binding->name()) << ": "
         << describeBuffer(artifact, binding->buffer()) << "\n";
}

void printText(std::ostream &os, const VerifiedArtifact &artifact) {
  const Artifact &root = artifact.root();
  os << "artifact: " << printableText(artifact.path()) << " ("
     << artifact.fileSize() << " bytes)\n"
     << "format version: " << root.format_version() << "\n"
     << "target: " << shown(root.target()) << "\n"
     << "producer: " << shown(root.producer()) << "\n"
     << "model: " << shown(root.model()) << "\n"
     << "memory: arena " << root.arena_bytes() << " bytes, state "
     << root.state_bytes() << " bytes, constants "
     << artifact.regionSize(Region_Constants) << " bytes\n";
  os << "programs: " << sizeOf(root.programs()) << "\n";
  if (const auto *programs = root.programs())
    for (const Program *program : *programs) {
      os << "  " << shown(program->name()) << ": "
         << sizeOf(program->instructions()) << " instructions";
      std::string separator = " (";
      for (const auto &[kind, count] : countInstructions(*program)) {
        os << separator << EnumNameInstruction(kind) << " " << count;
        separator = ", ";
      }
      os << (separator == ", " ? ")" : "") << "\n";
      printBindings(os, artifact, "feed", program->feeds());
      printBindings(os, artifact, "fetch", program->fetches());
    }
  const KernelLibrary *kernels = root.kernels();
  if (kernels)
    os << "kernels: " << sizeOf(kernels->symbols()) << " in a "
       << sizeOf(kernels->object()) << "-byte " << shown(kernels->format())
       << " object for cpu '" << shown(kernels->cpu()) << "', features '"
       << shown(kernels->features()) << "'\n";
  else
    os << "kernels: none\n";
  os << "variables: " << sizeOf(root.variables()) << "\n";
  if (const auto *variables = root.variables())
    for (const Variable *variable : *variables)
      os << "  " << shown(variable->name()) << ": "
         << describeBuffer(artifact, variable->buffer()) << ", "
         << EnumNameInitKind(variable->init())
         << (variable->trainable() ? ", trainable" : ", not trainable") << "\n";
}

void writeShape(JsonWriter &json, const flatbuffers::Vector<int64_t> *shape) {
  json.beginArray();
  if (shape)
    for (int64_t dim : *shape)
      json.value(dim);
  json.endArray();
}

void writeTensor(JsonWriter &json, const VerifiedArtifact &artifact,
                 uint32_t index) {
  const Buffer &buffer = *artifact.root().buffers()->Get(index);
  json.key("dtype");
  json.value(dtypeName(buffer.dtype()));
  json.key("shape");
  writeShape(json, buffer.shape());
  json.key("bytes");
  json.value(artifact.buffer(index).byteSize);
}

void writeBindings(JsonWriter &json, const VerifiedArtifact &artifact,
                   const Bindings *bindings) {
  json.beginArray();
  if (bindings)
    for (const Binding *binding : *bindings) {
      json.beginObject();
      json.key("name");
      json.value(text(binding->name()));
      writeTensor(json, artifact, binding->buffer());
      json.endObject();
    }
  json.endArray();
}

void writePrograms(JsonWriter &json, const VerifiedArtifact &artifact) {
  json.beginArray();
  if (const auto *programs = artifact.root().programs())
    for (const Program *program : *programs) {
      json.beginObject();
      json.key("name");
      json.value(text(program->name()));
      json.key("instructions");
      json.value(uint64_t(sizeOf(program->instructions())));
      json.key("instructions_by_kind");
      json.beginObject();
      for (const auto &[kind, count] : countInstructions(*program)) {
        json.key(EnumNameInstruction(kind));
        json.value(uint64_t(count));
      }
      json.endObject();
      json.key("feeds");
      writeBindings(json, artifact, program->feeds());
      json.key("fetches");
      writeBindings(json, artifact, program->fetches());
      json.endObject();
    }
  json.endArray();
}

void writeKernels(JsonWriter &json, const KernelLibrary *kernels) {
  if (!kernels)
    return json.null();
  json.beginObject();
  json.key("count");
  json.value(uint64_t(sizeOf(kernels->symbols())));
  json.key("object_bytes");
  json.value(uint64_t(sizeOf(kernels->object())));
  json.key("format");
  json.value(text(kernels->format()));
  json.key("cpu");
  json.value(text(kernels->cpu()));
  json.key("features");
  json.value(text(kernels->features()));
  json.key("symbols");
  json.beginArray();
  if (kernels->symbols())
    for (const flatbuffers::String *symbol : *kernels->symbols())
      json.value(symbol->string_view());
  json.endArray();
  json.endObject();
}

void writeVariables(JsonWriter &json, const VerifiedArtifact &artifact) {
  json.beginArray();
  if (const auto *variables = artifact.root().variables())
    for (const Variable *variable : *variables) {
      json.beginObject();
      json.key("name");
      json.value(text(variable->name()));
      writeTensor(json, artifact, variable->buffer());
      json.key("init");
      json.value(EnumNameInitKind(variable->init()));
      json.key("trainable");
      json.value(variable->trainable());
      json.endObject();
    }
  json.endArray();
}

std::string toJson(const VerifiedArtifact &artifact) {
  const Artifact &root = artifact.root();
  JsonWriter json;
  json.beginObject();
  json.key("file");
  json.value(artifact.path());
  json.key("file_bytes");
  json.value(uint64_t(artifact.fileSize()));
  json.key("format_version");
  json.value(uint64_t(root.format_version()));
  json.key("target");
  json.value(text(root.target()));
  json.key("producer");
  json.value(text(root.producer()));
  json.key("model");
  json.value(text(root.model()));
  json.key("memory");
  json.beginObject();
  json.key("arena_bytes");
  json.value(root.arena_bytes());
  json.key("state_bytes");
  json.value(root.state_bytes());
  json.key("constant_bytes");
  json.value(artifact.regionSize(Region_Constants));
  json.endObject();
  json.key("programs");
  writePrograms(json, artifact);
  json.key("kernels");
  writeKernels(json, root.kernels());
  json.key("variables");
  writeVariables(json, artifact);
  json.endObject();
  return json.str();
}

} // namespace

int inspectCommand(const InspectOptions &options) {
  std::string error;
  std::unique_ptr<VerifiedArtifact> artifact =
      VerifiedArtifact::load(options.artifact, error);
  if (!artifact) {
    std::cerr << error << "\n";
    return 1;
  }
  if (options.json) {
    std::cout << toJson(*artifact);
  } else {
    std::ostringstream os;
    printText(os, *artifact);
    std::cout << os.str();
  }
  return 0;
}

} // namespace kiln::tool
