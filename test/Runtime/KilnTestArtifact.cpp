//===- KilnTestArtifact.cpp - Writes artifacts and .npy files for lit -----===//
//
//   kiln-test-artifact sample OUT.kiln          the sample model (valid)
//   kiln-test-artifact bf16 OUT.kiln            bf16 feed copied to a fetch
//   kiln-test-artifact broken KIND OUT.kiln     the sample, broken one way
//   kiln-test-artifact flatbuffer OUT           the sample's FlatBuffer alone
//   kiln-test-artifact npy KIND OUT.npy         feeds, expected fetches and
//                                               broken .npy files
//
// The lit tests of the kiln tool (test/Runtime/) use it to make their inputs;
// the fuzzer uses `flatbuffer` for its seed corpus. Test-only.
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/ArtifactFile.h"
#include "runtime/data/Npy.h"
#include "runtime/support/StagedFile.h"
#include "test/unit/ArtifactTestBuilder.h"

#include <cstring>
#include <functional>
#include <iostream>
#include <map>

using namespace kiln;
using namespace kiln::artifact;
using namespace kiln::test;

namespace {

// The sample's feeds: x + y has both signs, so relu clips some elements.
const std::vector<float> kX = {1, -2, 3, -4, 0.5f, 0.25f, -0.75f, 8};
const std::vector<float> kY = {0.5f, 1, -4, 2, 0.25f, -0.5f, 0.5f, -1};

std::vector<uint8_t> bytesOf(const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

data::NpyArray floats(std::vector<int64_t> shape,
                      const std::vector<float> &values) {
  return {data::NpyDType::F32, std::move(shape), bytesOf(values)};
}

/// The bf16 sample: forward copies feed `h` (bf16 [4]) to fetch `h_copy`.
ArtifactSpec bf16Artifact() {
  ArtifactSpec spec;
  spec.model = "bf16";
  uint32_t in = spec.addBuffer(Region_Arena, DType_BF16, {4});
  uint32_t out = spec.addBuffer(Region_Arena, DType_BF16, {4});
  spec.programs.push_back(
      {"forward", {CopySpec{in, out}}, {{"h", in}}, {{"h_copy", out}}});
  return spec;
}

/// The sample with one thing wrong.
std::map<std::string, std::function<std::vector<uint8_t>()>> brokenArtifacts() {
  auto broken = [](std::function<void(ArtifactSpec &)> breakIt) {
    return [breakIt] {
      ArtifactSpec spec = sampleArtifact();
      breakIt(spec);
      return spec.fileBytes();
    };
  };
  return {
      {"truncated",
       [] {
         std::vector<uint8_t> bytes = sampleArtifact().fileBytes();
         bytes.resize(bytes.size() / 2);
         return bytes;
       }},
      {"corrupt",
       [] {
         std::vector<uint8_t> bytes = sampleArtifact().fileBytes();
         bytes[bytes.size() / 3] ^= 0x10;
         return bytes;
       }},
      {"identifier",
       [] {
         std::vector<uint8_t> flatbuffer = sampleArtifact().flatbuffer();
         std::memcpy(flatbuffer.data() + 4, "ONNX", 4);
         size_t size = flatbuffer.size();
         flatbuffer.resize(size + kFooterSize);
         encodeArtifactFooter(flatbuffer.data(), size,
                              flatbuffer.data() + size);
         return flatbuffer;
       }},
      {"version", broken([](ArtifactSpec &spec) { spec.formatVersion = 4; })},
      {"buffer-index", broken([](ArtifactSpec &spec) {
         std::get<GemmSpec>(spec.programs[1].instructions[2]).b = 42;
       })},
      {"misaligned",
       broken([](ArtifactSpec &spec) { spec.buffers[2].offset += 8; })},
      {"missing-symbol", broken([](ArtifactSpec &spec) {
         spec.kernels->symbols[1] = "kiln_test_missing";
       })},
      {"target", broken([](ArtifactSpec &spec) { spec.target = "cuda"; })},
      // The add kernel's output is [2, 4]: 3 rows would write past it.
      {"rows-shape", broken([](ArtifactSpec &spec) {
         auto &add = std::get<KernelCallSpec>(spec.programs[1].instructions[0]);
         add.outputs = 1;
         add.rows = 3;
       })},
      // 2 rows fit, but the test kernels have no row entry.
      {"rows-entry", broken([](ArtifactSpec &spec) {
         auto &add = std::get<KernelCallSpec>(spec.programs[1].instructions[0]);
         add.outputs = 1;
         add.rows = 2;
       })},
  };
}

/// Feeds, expected fetches and broken files.
std::map<std::string, std::function<std::vector<uint8_t>()>> npyFiles() {
  auto encoded = [](data::NpyArray array) {
    return [array] { return data::encodeNpy(array); };
  };
  std::vector<float> relu(8);
  for (size_t i = 0; i < relu.size(); ++i)
    relu[i] = std::max(kX[i] + kY[i], 0.0f);
  // 1 + 2^-8 is halfway between the bf16 values 1 and 1 + 2^-7 and rounds to
  // even (1); 1 + 3 * 2^-8 rounds up to 1 + 2^-6.
  std::vector<float> h = {1.0f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -2.5f};
  std::vector<float> hRounded = {1.0f, 1.0f, 1.0f + 0x1p-6f, -2.5f};
  return {
      {"x", encoded(floats({2, 4}, kX))},
      {"y", encoded(floats({2, 4}, kY))},
      {"relu", encoded(floats({2, 4}, relu))},
      {"h", encoded(floats({4}, h))},
      {"h-rounded", encoded(floats({4}, hRounded))},
      {"wrong-shape", encoded(floats({4, 2}, kX))},
      {"wrong-dtype",
       encoded({data::NpyDType::I32, {2, 4}, std::vector<uint8_t>(32)})},
      {"big-endian",
       [] {
         std::vector<uint8_t> bytes = data::encodeNpy(floats({2, 4}, kX));
         std::string text(bytes.begin(), bytes.end());
         bytes[text.find("<f4")] = '>';
         return bytes;
       }},
      {"fortran",
       [] {
         std::vector<uint8_t> bytes = data::encodeNpy(floats({2, 4}, kX));
         std::string text(bytes.begin(), bytes.end());
         size_t at = text.find("False");
         text.replace(at, 5, "True ");
         return std::vector<uint8_t>(text.begin(), text.end());
       }},
      {"broken-header",
       [] {
         std::vector<uint8_t> bytes = data::encodeNpy(floats({2, 4}, kX));
         bytes[10] = '[';
         return bytes;
       }},
      {"truncated",
       [] {
         std::vector<uint8_t> bytes = data::encodeNpy(floats({2, 4}, kX));
         bytes.resize(bytes.size() - 5);
         return bytes;
       }},
  };
}

int usage() {
  std::cerr << "usage: kiln-test-artifact sample|bf16|flatbuffer OUT\n"
               "       kiln-test-artifact broken|npy KIND OUT\n";
  return 1;
}

int write(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::string error;
  if (writeFileAtomically(path, {{bytes.data(), bytes.size()}}, error))
    return 0;
  std::cerr << error << "\n";
  return 1;
}

int writeKind(
    const std::map<std::string, std::function<std::vector<uint8_t>()>> &kinds,
    const std::string &kind, const std::string &path) {
  auto found = kinds.find(kind);
  if (found == kinds.end()) {
    std::cerr << "kiln-test-artifact: unknown kind '" << kind << "'\n";
    return 1;
  }
  return write(path, found->second());
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "sample")
    return write(args[1], sampleArtifact().fileBytes());
  if (args.size() == 2 && args[0] == "bf16")
    return write(args[1], bf16Artifact().fileBytes());
  if (args.size() == 2 && args[0] == "flatbuffer")
    return write(args[1], sampleArtifact().flatbuffer());
  if (args.size() == 3 && args[0] == "broken")
    return writeKind(brokenArtifacts(), args[1], args[2]);
  if (args.size() == 3 && args[0] == "npy")
    return writeKind(npyFiles(), args[1], args[2]);
  return usage();
}
