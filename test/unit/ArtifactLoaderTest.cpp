//===- ArtifactLoaderTest.cpp - Every check of the artifact loader --------===//
//
// Each test starts from the valid sample artifact, breaks one thing and
// checks the one-line message: the file, then the field, index or offset.
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/VerifiedArtifact.h"

#include "runtime/artifact/ArtifactFile.h"
#include "test/unit/ArtifactTestBuilder.h"
#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

using namespace kiln::artifact;
using namespace kiln::test;

namespace {

// Buffer indices and program order of sampleArtifact().
enum : uint32_t { Count, X, Y, Sum, Relu, Out, CopyOut, W };
enum : size_t { InitProgram, ForwardProgram };
enum : size_t { AddCall, ReluCall, GemmCall, CopyCall };

std::string loadError(const std::vector<uint8_t> &bytes) {
  std::string error;
  auto artifact = VerifiedArtifact::fromFileBytes("test.kiln", bytes, error);
  EXPECT_EQ(artifact, nullptr);
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  return error;
}

/// The message for the sample artifact after `breakIt`.
std::string rejection(const std::function<void(ArtifactSpec &)> &breakIt) {
  ArtifactSpec spec = sampleArtifact();
  breakIt(spec);
  return loadError(spec.fileBytes());
}

ProgramSpec &forward(ArtifactSpec &spec) {
  return spec.programs[ForwardProgram];
}
GemmSpec &gemmOf(ArtifactSpec &spec) {
  return std::get<GemmSpec>(forward(spec).instructions[GemmCall]);
}
const std::string kForward = "test.kiln: error: programs[1] ('forward')";

/// Rewrites the footer after a change to the FlatBuffer bytes.
std::vector<uint8_t> withFooter(std::vector<uint8_t> flatbuffer) {
  size_t size = flatbuffer.size();
  flatbuffer.resize(size + kFooterSize);
  encodeArtifactFooter(flatbuffer.data(), size, flatbuffer.data() + size);
  return flatbuffer;
}

TEST(ArtifactLoaderTest, LoadsTheSampleAndLaysOutItsBuffers) {
  ArtifactSpec spec = sampleArtifact();
  std::string error;
  auto artifact =
      VerifiedArtifact::fromFileBytes("test.kiln", spec.fileBytes(), error);
  ASSERT_NE(artifact, nullptr) << error;
  EXPECT_EQ(artifact->bufferCount(), spec.buffers.size());
  const BufferLayout &relu = artifact->buffer(Relu);
  EXPECT_EQ(relu.region, Region_Arena);
  EXPECT_EQ(relu.offset, spec.buffers[Relu].offset);
  EXPECT_EQ(relu.byteSize, 32u);
  EXPECT_EQ(relu.elementCount, 8u);
  EXPECT_EQ(artifact->buffer(Count).elementCount, 1u); // A scalar.
  EXPECT_EQ(artifact->regionSize(Region_Arena), spec.arenaBytes);
  EXPECT_EQ(artifact->regionSize(Region_State), spec.stateBytes);
  EXPECT_EQ(artifact->regionSize(Region_Constants), spec.constants.size());
  ASSERT_NE(artifact->findProgram("forward"), nullptr);
  EXPECT_EQ(artifact->findProgram("forward")->instructions()->size(), 4u);
  EXPECT_EQ(artifact->findProgram("train_step"), nullptr);
}

TEST(ArtifactLoaderTest, LoadsFromAFile) {
  TemporaryDirectory dir;
  writeFile(dir.file("a.kiln"), sampleArtifact().fileBytes());
  std::string error;
  auto artifact = VerifiedArtifact::load(dir.file("a.kiln"), error);
  ASSERT_NE(artifact, nullptr) << error;
  EXPECT_EQ(artifact->path(), dir.file("a.kiln"));
  EXPECT_EQ(artifact->root().model()->str(), "sample");
}

// --- The file ----------------------------------------------------------------

TEST(ArtifactLoaderTest, RejectsAMissingFile) {
  std::string error;
  EXPECT_EQ(VerifiedArtifact::load("/no/such/a.kiln", error), nullptr);
  EXPECT_EQ(error, "/no/such/a.kiln: error: cannot read: No such file or "
                   "directory");
}

TEST(ArtifactLoaderTest, RejectsADirectory) {
  TemporaryDirectory dir;
  std::string error;
  EXPECT_EQ(VerifiedArtifact::load(dir.path(), error), nullptr);
  EXPECT_EQ(error, dir.path() + ": error: not a regular file");
}

TEST(ArtifactLoaderTest, RejectsAFileTooShortForAFooter) {
  TemporaryDirectory dir;
  writeFile(dir.file("short.kiln"), {1, 2, 3});
  std::string error;
  EXPECT_EQ(VerifiedArtifact::load(dir.file("short.kiln"), error), nullptr);
  EXPECT_EQ(error, dir.file("short.kiln") +
                       ": error: file of 3 bytes is too short for an artifact "
                       "(at least 24 bytes)");
  EXPECT_EQ(loadError({}), "test.kiln: error: file of 0 bytes is too short "
                           "for an artifact (at least 24 bytes)");
}

TEST(ArtifactLoaderTest, RejectsATruncatedFile) {
  std::vector<uint8_t> bytes = sampleArtifact().fileBytes();
  size_t flatbuffer = bytes.size() - kFooterSize;
  bytes.erase(bytes.begin() + 100, bytes.begin() + 101);
  EXPECT_EQ(loadError(bytes),
            "test.kiln: error: footer: length field says " +
                std::to_string(flatbuffer) + " bytes but the file holds " +
                std::to_string(flatbuffer - 1) +
                " before the footer (truncated, or not a kiln artifact)");
  // Cut at the end: the footer read is then the FlatBuffer's last bytes.
  bytes = sampleArtifact().fileBytes();
  bytes.resize(bytes.size() - 1);
  EXPECT_NE(loadError(bytes).find("footer: length field says"),
            std::string::npos);
}

TEST(ArtifactLoaderTest, RejectsAFooterClaimingMoreThanTheFile) {
  TemporaryDirectory dir;
  std::vector<uint8_t> bytes(64, 0);
  bytes[64 - kFooterSize + 7] = 0x10; // Length 2^60.
  writeFile(dir.file("huge.kiln"), bytes);
  std::string error;
  EXPECT_EQ(VerifiedArtifact::load(dir.file("huge.kiln"), error), nullptr);
  EXPECT_EQ(error, dir.file("huge.kiln") +
                       ": error: footer: length field says "
                       "1152921504606846976 bytes but the file holds 48 "
                       "before the footer (truncated, or not a kiln artifact)");
}

TEST(ArtifactLoaderTest, RejectsACorruptByte) {
  std::vector<uint8_t> bytes = sampleArtifact().fileBytes();
  bytes[bytes.size() / 2] ^= 0x01;
  std::string error = loadError(bytes);
  EXPECT_EQ(error.rfind("test.kiln: error: footer: checksum 0x", 0), 0u)
      << error;
  EXPECT_NE(error.find("does not match the contents (0x"), std::string::npos);
  EXPECT_NE(error.find("): the file is corrupt"), std::string::npos);
  // A corrupt checksum field reads the same.
  bytes = sampleArtifact().fileBytes();
  bytes.back() ^= 0x80;
  EXPECT_NE(loadError(bytes).find("footer: checksum"), std::string::npos);
}

TEST(ArtifactLoaderTest, RejectsAnotherFileIdentifier) {
  std::vector<uint8_t> flatbuffer = sampleArtifact().flatbuffer();
  flatbuffer[4] = 'N';
  flatbuffer[5] = 'O';
  flatbuffer[6] = 'P';
  flatbuffer[7] = 0x01;
  EXPECT_EQ(loadError(withFooter(flatbuffer)),
            "test.kiln: error: file identifier 'NOP\\x01' at offset 4 is not "
            "'KILN' (not a kiln artifact)");
}

TEST(ArtifactLoaderTest, RejectsAFlatBufferTheVerifierRefuses) {
  std::vector<uint8_t> flatbuffer = sampleArtifact().flatbuffer();
  // The root table offset now points past the end.
  flatbuffer[0] = 0xF0;
  flatbuffer[1] = 0xFF;
  flatbuffer[2] = 0xFF;
  flatbuffer[3] = 0x0F;
  EXPECT_EQ(loadError(withFooter(flatbuffer)),
            "test.kiln: error: the FlatBuffer fails verification: the root table offset "
            "268435440 (at offset 0) points outside the FlatBuffer's " +
                std::to_string(flatbuffer.size()) +
                " bytes or is misaligned (corrupt, or not written from "
                "proto/kiln/artifact.fbs)");
}

// Tests that a table deeper in the file that the verifier refuses is named
// with its offset: the forward program's vtable offset made to point far
// outside the file.
TEST(ArtifactLoaderTest, NamesTheTableTheVerifierRefuses) {
  std::vector<uint8_t> flatbuffer = sampleArtifact().flatbuffer();
  const uint8_t *program = reinterpret_cast<const uint8_t *>(
      GetArtifact(flatbuffer.data())->programs()->Get(ForwardProgram));
  size_t offset = program - flatbuffer.data();
  int32_t farAway = 0x7FFFFFF0;
  std::memcpy(flatbuffer.data() + offset, &farAway, sizeof farAway);
  EXPECT_EQ(loadError(withFooter(flatbuffer)),
            "test.kiln: error: the FlatBuffer fails verification: programs[1] (a table at "
            "offset " +
                std::to_string(offset) +
                ") does not verify (corrupt, or not written from proto/kiln/artifact.fbs)");
}

TEST(ArtifactLoaderTest, RejectsUnknownFormatVersions) {
  for (uint32_t version : {0u, 4u, 100u})
    EXPECT_EQ(
        rejection([&](ArtifactSpec &spec) { spec.formatVersion = version; }),
        "test.kiln: error: format_version " + std::to_string(version) +
            " is not supported (this runtime reads versions 1 to 3)");
}

// --- Buffers -----------------------------------------------------------------

TEST(ArtifactLoaderTest, RejectsUnknownDTypesAndRegions) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.buffers[X].dtype = static_cast<DType>(9);
            }),
            "test.kiln: error: buffers[1].dtype: unknown dtype 9");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.buffers[X].region = static_cast<Region>(5);
            }),
            "test.kiln: error: buffers[1].region: unknown region 5");
}

TEST(ArtifactLoaderTest, RejectsNegativeAndOverflowingShapes) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.buffers[X].shape = {2, -4};
            }),
            "test.kiln: error: buffers[1].shape[1]: dimension -4 is negative");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.buffers[X].shape = {int64_t(1) << 40, int64_t(1) << 40};
            }),
            "test.kiln: error: buffers[1].shape: element count of "
            "[1099511627776, 1099511627776] overflows 64 bits");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.buffers[X].shape = {int64_t(1) << 62};
            }),
            "test.kiln: error: buffers[1].shape: byte size of "
            "[4611686018427387904] f32 overflows 64 bits");
}

// Tests a gap the FlatBuffers verifier leaves: it aligns a vector's length,
// not its 8-byte elements (found by the fuzzer).
TEST(ArtifactLoaderTest, RejectsMisalignedShapeVectors) {
  std::string error = rejection(
      [](ArtifactSpec &spec) { spec.buffers[Out].misalignedShape = true; });
  EXPECT_EQ(error.rfind("test.kiln: error: buffers[5].shape: 8-byte "
                        "dimensions at misaligned offset ",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find(" of the FlatBuffer"), std::string::npos);
  size_t offset = std::stoul(error.substr(error.find("offset ") + 7));
  EXPECT_EQ(offset % 8, 4u);
}

TEST(ArtifactLoaderTest, RejectsMisalignedOffsets) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { spec.buffers[Y].offset = 96; }),
            "test.kiln: error: buffers[2].offset: 96 is not a multiple of 64");
}

TEST(ArtifactLoaderTest, RejectsBuffersOutsideTheirRegion) {
  ArtifactSpec sample = sampleArtifact();
  ASSERT_EQ(sample.arenaBytes, 344u);
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { spec.buffers[X].offset = 320; }),
            "test.kiln: error: buffers[1]: bytes [320, 320 + 32) lie outside "
            "the arena region (344 bytes)");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.buffers[X].offset = uint64_t(1) << 63;
            }),
            "test.kiln: error: buffers[1]: bytes [9223372036854775808, "
            "9223372036854775808 + 32) lie outside the arena region (344 "
            "bytes)");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { spec.stateBytes = 40; }),
            "test.kiln: error: buffers[7]: bytes [0, 0 + 48) lie outside the "
            "state region (40 bytes)");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { spec.constants.resize(4); }),
            "test.kiln: error: buffers[0]: bytes [0, 0 + 8) lie outside the "
            "constants region (4 bytes)");
}

// --- Variables ---------------------------------------------------------------

TEST(ArtifactLoaderTest, RejectsBadVariableBuffers) {
  EXPECT_EQ(
      rejection([](ArtifactSpec &spec) { spec.variables[0].buffer = 99; }),
      "test.kiln: error: variables[0] ('w').buffer: buffer 99 does not exist "
      "(the artifact has 8 buffers)");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { spec.variables[0].buffer = X; }),
            "test.kiln: error: variables[0] ('w').buffer: buffer 1 is in the "
            "arena region; variables live in the state region");
}

TEST(ArtifactLoaderTest, RejectsMissingAndRepeatedVariableNames) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { spec.variables[0].name = ""; }),
            "test.kiln: error: variables[0].name: missing");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.addVariable("w", DType_F32, {2}, InitKind_Zeros);
            }),
            "test.kiln: error: variables[1] ('w').name: 'w' names an earlier "
            "variable too");
}

TEST(ArtifactLoaderTest, RejectsOverlappingVariables) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              uint32_t v = spec.addVariable("v", DType_F32, {2}, InitKind_Ones);
              spec.buffers[spec.variables[v].buffer].offset = 0;
            }),
            "test.kiln: error: variables[1] ('v').buffer: its bytes overlap "
            "those of variable 'w'");
  // Overlap across an empty variable in between still counts.
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              uint32_t empty =
                  spec.addVariable("empty", DType_F32, {0}, InitKind_Zeros);
              uint32_t v = spec.addVariable("v", DType_F32, {2}, InitKind_Ones);
              spec.buffers[spec.variables[empty].buffer].offset = 0;
              spec.buffers[spec.variables[v].buffer].offset = 0;
            }),
            "test.kiln: error: variables[2] ('v').buffer: its bytes overlap "
            "those of variable 'w'");
}

TEST(ArtifactLoaderTest, RejectsBadInitializers) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.variables[0].init = static_cast<InitKind>(12);
            }),
            "test.kiln: error: variables[0] ('w').init: unknown kind 12");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.variables[0].init = InitKind_Constant;
              spec.variables[0].value = std::vector<uint8_t>(4);
            }),
            "test.kiln: error: variables[0] ('w').value: holds 4 bytes; the "
            "variable (f32 [4, 3]) has 48");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.variables[0].init = InitKind_Constant;
            }),
            "test.kiln: error: variables[0] ('w').value: holds 0 bytes; the "
            "variable (f32 [4, 3]) has 48");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.addVariable("n", DType_I32, {3}, InitKind_Uniform, 0, 1);
            }),
            "test.kiln: error: variables[1] ('n').init: Uniform initializes "
            "floats; the variable is i32");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.variables[0].init = InitKind_Uniform;
              spec.variables[0].a = 1;
              spec.variables[0].b = 0;
            }),
            "test.kiln: error: variables[0] ('w'): Uniform needs finite bounds "
            "a <= b; a = 1.000000, b = 0.000000");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.variables[0].init = InitKind_Normal;
              spec.variables[0].b = -1;
            }),
            "test.kiln: error: variables[0] ('w'): Normal needs a finite mean "
            "a and stddev b >= 0; a = 0.000000, b = -1.000000");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.variables[0].init = InitKind_TruncatedNormal;
              spec.variables[0].a = NAN;
              spec.variables[0].b = 1;
            }),
            "test.kiln: error: variables[0] ('w'): TruncatedNormal needs a "
            "finite mean a and stddev b >= 0; a = nan, b = 1.000000");
}

// --- Kernels -----------------------------------------------------------------

TEST(ArtifactLoaderTest, RejectsBadKernelLibraries) {
  EXPECT_EQ(
      rejection([](ArtifactSpec &spec) { spec.kernels->symbols[1] = ""; }),
      "test.kiln: error: kernels.symbols[1]: empty symbol name");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { spec.kernels->object.clear(); }),
            "test.kiln: error: kernels.object: empty, but 3 kernel symbols are "
            "declared");
}

// --- Instructions ------------------------------------------------------------

TEST(ArtifactLoaderTest, RejectsBadKernelCalls) {
  EXPECT_EQ(
      rejection([](ArtifactSpec &spec) {
        std::get<KernelCallSpec>(forward(spec).instructions[AddCall]).kernel =
            5;
      }),
      kForward + ".instructions[0] (KernelCall).kernel: kernel 5 does "
                 "not exist (the artifact has 3 kernels)");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { spec.kernels.reset(); }),
            kForward + ".instructions[0] (KernelCall).kernel: kernel 0 does "
                       "not exist (the artifact has 0 kernels)");
  EXPECT_EQ(
      rejection([](ArtifactSpec &spec) {
        std::get<KernelCallSpec>(forward(spec).instructions[ReluCall]).args[2] =
            50;
      }),
      kForward + ".instructions[1] (KernelCall).args[2]: buffer 50 does "
                 "not exist (the artifact has 8 buffers)");
  auto relu = [](ArtifactSpec &spec) -> KernelCallSpec & {
    return std::get<KernelCallSpec>(forward(spec).instructions[ReluCall]);
  };
  EXPECT_EQ(rejection([&](ArtifactSpec &spec) { relu(spec).outputs = 4; }),
            kForward + ".instructions[1] (KernelCall).outputs: 4 outputs of 3 "
                       "args");
  EXPECT_EQ(rejection([&](ArtifactSpec &spec) {
              relu(spec).outputs = 1;
              relu(spec).args[2] =
                  spec.addBuffer(Region_Constants, DType_F32, {2, 4});
            }),
            kForward + ".instructions[1] (KernelCall).args[2]: buffer 8 is in "
                       "the read-only constants region");
}

TEST(ArtifactLoaderTest, RejectsBadGemmOperands) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { gemmOf(spec).precision = DType_I32; }),
            kForward + ".instructions[2] (Gemm).precision: unknown precision 3 (expected "
                       "f32, f16 or bf16)");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              gemmOf(spec).precision = DType_BF16;
              gemmOf(spec).bCopy = -2;
            }),
            kForward + ".instructions[2] (Gemm).b_copy: -2 is not a copy slot (-1: none)");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { gemmOf(spec).aCopy = 0; }),
            kForward + ".instructions[2] (Gemm).a_copy: an f32 product converts no input to "
                       "keep in a copy slot");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { gemmOf(spec).a = 8; }),
            kForward + ".instructions[2] (Gemm).a: buffer 8 does not exist "
                       "(the artifact has 8 buffers)");
  EXPECT_EQ(
      rejection([](ArtifactSpec &spec) { spec.buffers[W].dtype = DType_F16; }),
      kForward + ".instructions[2] (Gemm).b: buffer 7 is f16; Gemm "
                 "takes f32");
  // A 16-bit input only of the product's own precision, and with nothing to
  // convert into a copy slot.
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              gemmOf(spec).precision = DType_BF16;
              spec.buffers[W].dtype = DType_F16;
            }),
            kForward + ".instructions[2] (Gemm).b: buffer 7 is f16; Gemm takes f32 or bf16");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              gemmOf(spec).precision = DType_BF16;
              spec.buffers[W].dtype = DType_BF16;
              gemmOf(spec).bCopy = 0;
            }),
            kForward + ".instructions[2] (Gemm).b_copy: buffer 7 is bf16 already: nothing to "
                       "convert into copy slot 0");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { gemmOf(spec).k = 5; }),
            kForward + ".instructions[2] (Gemm).a: buffer 4 holds 8 elements; "
                       "A [batch, m, k] needs 10");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              gemmOf(spec).transposeA = true;
              gemmOf(spec).m = 4;
              gemmOf(spec).k = 2;
            }),
            kForward + ".instructions[2] (Gemm).b: buffer 7 holds 12 "
                       "elements; B [batch, k, n] needs 6");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              gemmOf(spec).batch = 2;
              gemmOf(spec).m = 1;
              gemmOf(spec).sharedB = true;
              gemmOf(spec).transposeB = true;
              gemmOf(spec).n = 4;
              gemmOf(spec).k = 3;
            }),
            kForward + ".instructions[2] (Gemm).a: buffer 4 holds 8 elements; "
                       "A [batch, m, k] needs 6");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              gemmOf(spec).batch = 2;
              gemmOf(spec).m = 1;
            }),
            kForward + ".instructions[2] (Gemm).b: buffer 7 holds 12 "
                       "elements; B [batch, k, n] needs 24");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              gemmOf(spec).batch = 2;
              gemmOf(spec).m = 1;
              gemmOf(spec).sharedB = true;
              gemmOf(spec).transposeB = true;
              spec.buffers[W].shape = {2, 3};
            }),
            kForward + ".instructions[2] (Gemm).b: buffer 7 holds 6 elements; "
                       "B [n, k] needs 12");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.buffers[Out].shape = {3, 3};
              spec.buffers[CopyOut].shape = {3, 3};
              spec.arenaBytes += 12;
            }),
            kForward + ".instructions[2] (Gemm).c: buffer 5 holds 9 elements; "
                       "C [batch, m, n] needs 6");
}

TEST(ArtifactLoaderTest, AcceptsABatchOfProductsWithASharedB) {
  ArtifactSpec spec = sampleArtifact();
  gemmOf(spec).batch = 2;
  gemmOf(spec).m = 1;
  gemmOf(spec).sharedB = true;
  std::string error;
  EXPECT_NE(
      VerifiedArtifact::fromFileBytes("test.kiln", spec.fileBytes(), error),
      nullptr)
      << error;
}

/// The sample with its product computed by blocks of one row, each handed
/// to a row-parallel kernel writing `out`: buffer 8 is the block.
ArtifactSpec blockedSample() {
  ArtifactSpec spec = sampleArtifact();
  BlockedGemmSpec blocked;
  blocked.gemm = gemmOf(spec);
  blocked.gemm.c = spec.addBuffer(Region_Arena, DType_F32, {1, 3});
  blocked.update = KernelCallSpec{ReluKernel, {Count, blocked.gemm.c, Out}, 1, 2};
  blocked.blockRows = 1;
  blocked.blockArg = 1;
  forward(spec).instructions[GemmCall] = blocked;
  return spec;
}

BlockedGemmSpec &blockedOf(ArtifactSpec &spec) {
  return std::get<BlockedGemmSpec>(forward(spec).instructions[GemmCall]);
}

std::string blockedRejection(const std::function<void(ArtifactSpec &)> &breakIt) {
  ArtifactSpec spec = blockedSample();
  breakIt(spec);
  return loadError(spec.fileBytes());
}

TEST(ArtifactLoaderTest, LoadsAProductByBlocks) {
  std::string error;
  EXPECT_NE(VerifiedArtifact::fromFileBytes("test.kiln", blockedSample().fileBytes(), error),
            nullptr)
      << error;
}

TEST(ArtifactLoaderTest, RejectsBadProductsByBlocks) {
  const std::string at = kForward + ".instructions[2] (BlockedGemm)";
  EXPECT_EQ(blockedRejection([](ArtifactSpec &spec) { blockedOf(spec).blockRows = 0; }),
            at + ".block_rows: 0 is not a multiple of rows_per_update_row = 1 in [1, m = 2]");
  EXPECT_EQ(blockedRejection([](ArtifactSpec &spec) { blockedOf(spec).blockRows = 3; }),
            at + ".block_rows: 3 is not a multiple of rows_per_update_row = 1 in [1, m = 2]");
  EXPECT_EQ(blockedRejection([](ArtifactSpec &spec) { blockedOf(spec).rowsPerUpdateRow = 0; }),
            at + ".rows_per_update_row: 0 does not divide m = 2");
  EXPECT_EQ(blockedRejection([](ArtifactSpec &spec) { blockedOf(spec).rowsPerUpdateRow = 3; }),
            at + ".rows_per_update_row: 3 does not divide m = 2");
  EXPECT_EQ(blockedRejection([](ArtifactSpec &spec) { blockedOf(spec).rowsPerUpdateRow = 2; }),
            at + ".block_rows: 1 is not a multiple of rows_per_update_row = 2 in [1, m = 2]");
  EXPECT_EQ(blockedRejection(
                [](ArtifactSpec &spec) { blockedOf(spec).gemm.precision = DType_BF16; }),
            at + ".gemm: a product by blocks is one product, f32 or in one block (batch 1, "
                 "bf16, block_rows 1 of m = 2)");
  // In one block (an epilogue), a 16-bit product passes that check (and
  // meets the next: this C holds one row).
  EXPECT_EQ(blockedRejection([](ArtifactSpec &spec) {
              blockedOf(spec).gemm.precision = DType_BF16;
              blockedOf(spec).blockRows = 2;
            }),
            at + ".gemm.c: buffer 8 holds 3 elements; a block of C [block_rows, n] needs 6");
  EXPECT_EQ(blockedRejection([](ArtifactSpec &spec) { blockedOf(spec).blockRows = 2; }),
            at + ".gemm.c: buffer 8 holds 3 elements; a block of C [block_rows, n] needs 6");
  EXPECT_EQ(blockedRejection([](ArtifactSpec &spec) { blockedOf(spec).update.rows = 0; }),
            at + ".update.rows: 0 rows of 1, but the product has m = 2");
  EXPECT_EQ(blockedRejection([](ArtifactSpec &spec) { blockedOf(spec).blockArg = 2; }),
            at + ".block_arg: argument 2 is not an input of the update that is gemm.c "
                 "(buffer 8)");
  EXPECT_EQ(blockedRejection([](ArtifactSpec &spec) { blockedOf(spec).blockArg = 0; }),
            at + ".block_arg: argument 0 is not an input of the update that is gemm.c "
                 "(buffer 8)");
  EXPECT_EQ(blockedRejection([](ArtifactSpec &spec) {
              spec.buffers[blockedOf(spec).gemm.c].offset = spec.buffers[Out].offset;
            }),
            at + ".update.args[2]: output buffer 5 overlaps the block of C (buffer 8)");
  ArtifactSpec sample = blockedSample();
  EXPECT_EQ(blockedRejection([](ArtifactSpec &spec) {
              spec.buffers[Out].offset = spec.buffers[blockedOf(spec).gemm.a].offset;
            }),
            at + ".update.args[2]: output buffer 5 overlaps A (buffer " +
                std::to_string(blockedOf(sample).gemm.a) + ")");
}

TEST(ArtifactLoaderTest, RejectsFeedViewsElsewhere) {
  auto feedsOf = [](ArtifactSpec &spec) -> std::vector<BindingSpec> & {
    return forward(spec).feeds;
  };
  ArtifactSpec good = sampleArtifact();
  uint32_t x = feedsOf(good)[0].buffer;
  uint32_t view = good.addBuffer(Region_Arena, DType_F32, {8});
  good.buffers[view].offset = good.buffers[x].offset;
  feedsOf(good)[0].views = std::vector<uint32_t>{view};
  std::string error;
  EXPECT_NE(VerifiedArtifact::fromFileBytes("test.kiln", good.fileBytes(), error), nullptr)
      << error;
  const std::string at = kForward + ".feeds[0] ('x').views[0]";
  EXPECT_EQ(rejection([&](ArtifactSpec &spec) {
              feedsOf(spec)[0].views = std::vector<uint32_t>{feedsOf(spec)[1].buffer};
            }),
            at + ": buffer " + std::to_string(feedsOf(good)[1].buffer) +
                " is not a view of the feed's buffer " + std::to_string(x) +
                " (another buffer at its offset, no larger)");
  EXPECT_EQ(rejection([&](ArtifactSpec &spec) { feedsOf(spec)[0].views = std::vector<uint32_t>{x}; }),
            at + ": buffer " + std::to_string(x) + " is not a view of the feed's buffer " +
                std::to_string(x) + " (another buffer at its offset, no larger)");
  EXPECT_EQ(rejection([&](ArtifactSpec &spec) { feedsOf(spec)[0].views = std::vector<uint32_t>{99}; }),
            at + ": buffer 99 does not exist (the artifact has 8 buffers)");
}

TEST(ArtifactLoaderTest, RejectsNonPositiveGemmSizes) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { gemmOf(spec).m = 0; }),
            kForward + ".instructions[2] (Gemm).m: 0 is not a positive size");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { gemmOf(spec).batch = -1; }),
            kForward +
                ".instructions[2] (Gemm).batch: -1 is not a positive size");
}

TEST(ArtifactLoaderTest, RejectsGemmsWritingConstantsOrTheirInputs) {
  EXPECT_EQ(
      rejection([](ArtifactSpec &spec) {
        gemmOf(spec).c = spec.addBuffer(Region_Constants, DType_F32, {2, 3});
      }),
      kForward + ".instructions[2] (Gemm).c: buffer 8 is in the "
                 "read-only constants region");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.buffers[Out].offset = spec.buffers[Relu].offset;
            }),
            kForward + ".instructions[2] (Gemm).c: buffer 5 overlaps input "
                       "buffer 4");
}

TEST(ArtifactLoaderTest, RejectsBadCopies) {
  auto copyOf = [](ArtifactSpec &spec) -> CopySpec & {
    return std::get<CopySpec>(forward(spec).instructions[CopyCall]);
  };
  EXPECT_EQ(rejection([&](ArtifactSpec &spec) { copyOf(spec).src = 30; }),
            kForward + ".instructions[3] (Copy).src: buffer 30 does not exist "
                       "(the artifact has 8 buffers)");
  EXPECT_EQ(rejection([&](ArtifactSpec &spec) { copyOf(spec).dst = Relu; }),
            kForward + ".instructions[3] (Copy): src buffer 5 has 24 bytes, "
                       "dst buffer 4 has 32");
  EXPECT_EQ(rejection([&](ArtifactSpec &spec) { copyOf(spec).dst = Count; }),
            kForward + ".instructions[3] (Copy).dst: buffer 0 is in the "
                       "read-only constants region");
}

TEST(ArtifactLoaderTest, RejectsBadInitVariables) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              spec.programs[InitProgram].instructions[0] = InitVariableSpec{3};
            }),
            "test.kiln: error: programs[0] ('init').instructions[0] "
            "(InitVariable).variable: variable 3 does not exist (the artifact "
            "has 1 variables)");
}

TEST(ArtifactLoaderTest, RejectsUnknownInstructionKinds) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              forward(spec).instructions.push_back(UnknownInstructionSpec{42});
            }),
            kForward + ".instructions[4]: unknown instruction kind 42 (written "
                       "for a newer runtime?)");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              forward(spec).instructions.insert(
                  forward(spec).instructions.begin(),
                  UnknownInstructionSpec{0});
            }),
            kForward + ".instructions[0]: unknown instruction kind 0 (written "
                       "for a newer runtime?)");
}

bool loads(const ArtifactSpec &spec, std::string &error) {
  return VerifiedArtifact::fromFileBytes("test.kiln", spec.fileBytes(),
                                         error) != nullptr;
}

// --- Collectives -------------------------------------------------------------

// What the collective tests add after the sample's forward program: the
// all-reduce of x into y (both f32 [2, 4]) under tag 3, instructions 4 and 5.
const std::string kStart = kForward + ".instructions[4] (AllReduceStart)";
const std::string kWait = kForward + ".instructions[5] (AllReduceWait)";

ArtifactSpec withAllReduce(const std::function<void(ArtifactSpec &)> &change = {}) {
  ArtifactSpec spec = sampleArtifact();
  forward(spec).instructions.push_back(AllReduceStartSpec{3, true, {X}});
  forward(spec).instructions.push_back(AllReduceWaitSpec{3, {Y}});
  if (change)
    change(spec);
  return spec;
}

AllReduceStartSpec &startOf(ArtifactSpec &spec) {
  return std::get<AllReduceStartSpec>(forward(spec).instructions[4]);
}
AllReduceWaitSpec &waitOf(ArtifactSpec &spec) {
  return std::get<AllReduceWaitSpec>(forward(spec).instructions[5]);
}

// Tests that a start and its wait load, and what each check refuses: tags
// started twice, waited for without a start or never, outputs that do not
// match the inputs in number, dtype or size, or are read-only.
TEST(ArtifactLoaderTest, ChecksAllReducePairs) {
  std::string error;
  ArtifactSpec good = withAllReduce();
  EXPECT_TRUE(loads(good, error)) << error;
  EXPECT_EQ(loadError(withAllReduce([](ArtifactSpec &spec) {
              forward(spec).instructions.push_back(AllReduceStartSpec{3, true, {X}});
              forward(spec).instructions.push_back(AllReduceWaitSpec{3, {Y}});
            }).fileBytes()),
            kForward +
                ".instructions[6] (AllReduceStart).tag: tag 3 is started twice in the program");
  EXPECT_EQ(loadError(withAllReduce([](ArtifactSpec &spec) { waitOf(spec).tag = 4; })
                          .fileBytes()),
            kWait + ".tag: no all-reduce in flight under tag 4");
  EXPECT_EQ(loadError(withAllReduce([](ArtifactSpec &spec) {
              forward(spec).instructions.pop_back();
            }).fileBytes()),
            kForward +
                ": the all-reduce started under tag 3 is never waited for");
  EXPECT_EQ(loadError(withAllReduce([](ArtifactSpec &spec) { waitOf(spec).outputs = {Y, Sum}; })
                          .fileBytes()),
            kWait + ".outputs: 2 outputs for the start's 1 inputs");
  EXPECT_EQ(loadError(withAllReduce([](ArtifactSpec &spec) { waitOf(spec).outputs = {Out}; })
                          .fileBytes()),
            kWait +
                ".outputs[0]: buffer 5 has 24 bytes, the start's input 0 32");
  EXPECT_EQ(loadError(withAllReduce([](ArtifactSpec &spec) { startOf(spec).inputs = {Count}; })
                          .fileBytes()),
            kStart +
                ".inputs[0]: buffer 0 is i64, which this instruction does not take");
  EXPECT_EQ(loadError(withAllReduce([](ArtifactSpec &spec) { startOf(spec).inputs = {}; })
                          .fileBytes()),
            kStart + ".inputs: empty");
  EXPECT_EQ(loadError(withAllReduce([](ArtifactSpec &spec) {
              uint32_t constant = spec.addBuffer(Region_Constants, DType_F32, {2, 4});
              waitOf(spec).outputs = {constant};
            }).fileBytes()),
            kWait +
                ".outputs[0]: buffer 8 is in the read-only constants region");
}

// Tests the sparse all-reduce: ids [K] with rows [K, ...], and a SparseApply
// reading what it gathered only after its wait, with its buffers.
TEST(ArtifactLoaderTest, ChecksSparseAllReduces) {
  auto sparse = [](const std::function<void(ArtifactSpec &, uint32_t, uint32_t)> &change) {
    ArtifactSpec spec = sampleArtifact();
    uint32_t ids = spec.addBuffer(Region_Arena, DType_I64, {2});
    uint32_t step = spec.addBuffer(Region_Arena, DType_F32, {});
    forward(spec).instructions.push_back(SparseAllReduceStartSpec{1, ids, Out});
    forward(spec).instructions.push_back(SparseAllReduceWaitSpec{1});
    SparseApplySpec apply;
    apply.param = spec.variables[0].buffer;
    apply.indices = ids;
    apply.rows = Out;
    apply.lr = apply.step = step;
    apply.gatheredTag = 1;
    forward(spec).instructions.push_back(apply);
    change(spec, ids, step);
    return spec;
  };
  std::string error;
  ArtifactSpec good = sparse([](ArtifactSpec &, uint32_t, uint32_t) {});
  EXPECT_TRUE(loads(good, error)) << error;
  // fp16 loss scaling's skip on gathered rows (a flag the replicas share).
  ArtifactSpec skipping = sparse([](ArtifactSpec &spec, uint32_t, uint32_t) {
    spec.formatVersion = 2;
    std::get<SparseApplySpec>(forward(spec).instructions[6]).when =
        spec.addBuffer(Region_Arena, DType_I1, {});
  });
  EXPECT_TRUE(loads(skipping, error)) << error;
  EXPECT_EQ(loadError(sparse([](ArtifactSpec &spec, uint32_t, uint32_t) {
              std::swap(forward(spec).instructions[5], forward(spec).instructions[6]);
            }).fileBytes()),
            kForward +
                ".instructions[5] (SparseApply).gathered_tag: no sparse all-reduce under tag "
                "1 was waited for before it");
  EXPECT_EQ(loadError(sparse([](ArtifactSpec &spec, uint32_t, uint32_t) {
              std::get<SparseAllReduceStartSpec>(forward(spec).instructions[4]).rows =
                  spec.addBuffer(Region_Arena, DType_F32, {3, 3});
            }).fileBytes()),
            kForward +
                ".instructions[4] (SparseAllReduceStart): expects indices [K] and rows [K, "
                "...], got buffers 8 and 10");
  EXPECT_EQ(loadError(sparse([](ArtifactSpec &spec, uint32_t, uint32_t) {
              std::get<SparseAllReduceStartSpec>(forward(spec).instructions[4]).indices = X;
            }).fileBytes()),
            kForward +
                ".instructions[4] (SparseAllReduceStart).indices: buffer 1 is f32, which this "
                "instruction does not take");
  EXPECT_EQ(loadError(sparse([](ArtifactSpec &spec, uint32_t, uint32_t) {
              std::get<SparseAllReduceWaitSpec>(forward(spec).instructions[5]).tag = 2;
            }).fileBytes()),
            kForward +
                ".instructions[5] (SparseAllReduceWait).tag: no sparse all-reduce in flight "
                "under tag 2");
}

// Tests a SparseApply's `when` (fp16 loss scaling's skip): an I1 scalar
// buffer, or -1; only in format version 2 (a version-1 runtime would ignore
// it); on rows the replicas gathered too (kilnc derives the flag from what
// the replicas averaged, so they skip alike).
TEST(ArtifactLoaderTest, ChecksASparseApplysCondition) {
  auto withWhen = [](DType dtype, std::vector<int64_t> shape, int64_t at = 0) {
    ArtifactSpec spec = sampleArtifact();
    spec.formatVersion = 2;
    uint32_t ids = spec.addBuffer(Region_Arena, DType_I64, {2});
    uint32_t step = spec.addBuffer(Region_Arena, DType_F32, {});
    uint32_t when = spec.addBuffer(Region_Arena, dtype, shape);
    SparseApplySpec apply;
    apply.param = spec.variables[0].buffer;
    apply.indices = ids;
    apply.rows = Out;
    apply.lr = apply.step = step;
    apply.when = at ? at : when;
    forward(spec).instructions.push_back(apply);
    return spec;
  };
  std::string error;
  EXPECT_TRUE(loads(withWhen(DType_I1, {}), error)) << error;
  EXPECT_EQ(loadError(withWhen(DType_F32, {}).fileBytes()),
            kForward + ".instructions[4] (SparseApply).when: buffer 10 is f32, which this "
                       "instruction does not take");
  EXPECT_EQ(loadError(withWhen(DType_I1, {2}).fileBytes()),
            kForward + ".instructions[4] (SparseApply).when: must be a scalar");
  EXPECT_EQ(loadError(withWhen(DType_I1, {}, -7).fileBytes()),
            kForward + ".instructions[4] (SparseApply).when: is -7; -1 (always) or a buffer index");
  ArtifactSpec far = withWhen(DType_I1, {}, int64_t(1) << 40);
  EXPECT_EQ(loadError(far.fileBytes()),
            kForward + ".instructions[4] (SparseApply).when: buffer 1099511627776 does not "
                       "exist (the artifact has " + std::to_string(far.buffers.size()) +
                       " buffers)");
  ArtifactSpec old = withWhen(DType_I1, {});
  old.formatVersion = 1;
  EXPECT_EQ(loadError(old.fileBytes()),
            kForward + ".instructions[4] (SparseApply).when: needs format_version 2 (the "
                       "artifact says 1)");
}

// --- Convolutions ------------------------------------------------------------

// What the convolution tests add to the sample: buffers x [1, 2, 5, 5],
// w [4, 1, 3, 3] and y [1, 4, 3, 3] in the arena, and a forward convolution
// with two groups, stride 2 and padding 1 ((5 + 2 - 3) / 2 + 1 = 3) as the
// forward program's fifth instruction.
enum : uint32_t { ConvX = W + 1, ConvW, ConvY };
const std::string kConv = kForward + ".instructions[4] (Convolution)";

ConvolutionSpec &convOf(ArtifactSpec &spec) {
  return std::get<ConvolutionSpec>(forward(spec).instructions[4]);
}

ArtifactSpec withConvolution() {
  ArtifactSpec spec = sampleArtifact();
  EXPECT_EQ(spec.addBuffer(Region_Arena, DType_F32, {1, 2, 5, 5}), ConvX);
  EXPECT_EQ(spec.addBuffer(Region_Arena, DType_F32, {4, 1, 3, 3}), ConvW);
  EXPECT_EQ(spec.addBuffer(Region_Arena, DType_F32, {1, 4, 3, 3}), ConvY);
  ConvolutionSpec conv;
  conv.input = ConvX;
  conv.filter = ConvW;
  conv.output = ConvY;
  conv.strides = {2, 2};
  conv.dilations = {1, 1};
  conv.padLow = {1, 1};
  conv.padHigh = {1, 1};
  conv.groups = 2;
  forward(spec).instructions.push_back(conv);
  return spec;
}

/// The message for the sample with a convolution after `breakIt`.
std::string convRejection(const std::function<void(ArtifactSpec &)> &breakIt) {
  ArtifactSpec spec = withConvolution();
  breakIt(spec);
  return loadError(spec.fileBytes());
}

// Tests that a convolution of each kind loads, over 1 to 3 spatial
// dimensions, and that reading a filter from the constants region is fine.
TEST(ArtifactLoaderTest, AcceptsConvolutions) {
  std::string error;
  for (ConvolutionKind kind :
       {ConvolutionKind_Forward, ConvolutionKind_BackwardData,
        ConvolutionKind_BackwardFilter}) {
    ArtifactSpec spec = withConvolution();
    convOf(spec).kind = kind;
    EXPECT_TRUE(loads(spec, error))
        << EnumNameConvolutionKind(kind) << ": " << error;
  }
  ArtifactSpec constantFilter = withConvolution();
  convOf(constantFilter).filter =
      constantFilter.addBuffer(Region_Constants, DType_F32, {4, 1, 3, 3});
  EXPECT_TRUE(loads(constantFilter, error)) << error;
  // 1-D: (7 - 2 * 2 - 1) / 1 + 1 = 3 with dilation 2.
  ArtifactSpec oneD = withConvolution();
  oneD.buffers[ConvX].shape = {1, 2, 7};
  oneD.buffers[ConvW].shape = {4, 1, 3};
  oneD.buffers[ConvY].shape = {1, 4, 3};
  convOf(oneD).strides = {1};
  convOf(oneD).dilations = {2};
  convOf(oneD).padLow = {0};
  convOf(oneD).padHigh = {0};
  EXPECT_TRUE(loads(oneD, error)) << error;
  // 3-D, one group: 2x2x2 windows over 2x3x4 give 1x2x3.
  ArtifactSpec threeD = withConvolution();
  threeD.buffers[ConvX].shape = {1, 2, 2, 3, 4};
  threeD.buffers[ConvW].shape = {2, 2, 2, 2, 2};
  threeD.buffers[ConvY].shape = {1, 2, 1, 2, 3};
  convOf(threeD).strides = {1, 1, 1};
  convOf(threeD).dilations = {1, 1, 1};
  convOf(threeD).padLow = {0, 0, 0};
  convOf(threeD).padHigh = {0, 0, 0};
  convOf(threeD).groups = 1;
  EXPECT_TRUE(loads(threeD, error)) << error;
}

TEST(ArtifactLoaderTest, RejectsUnknownConvolutionKinds) {
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).kind = static_cast<ConvolutionKind>(3);
            }),
            kConv + ".kind: unknown kind 3");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).kind = static_cast<ConvolutionKind>(-1);
            }),
            kConv + ".kind: unknown kind -1");
}

// Tests a convolution's precision: f32 or bf16 (kilnc --precision=bf16).
TEST(ArtifactLoaderTest, ChecksConvolutionPrecisions) {
  std::string error;
  ArtifactSpec bf16 = withConvolution();
  convOf(bf16).precision = DType_BF16;
  EXPECT_TRUE(loads(bf16, error)) << error;
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) { convOf(spec).precision = DType_F16; }),
            kConv + ".precision: f16; a convolution computes in f32 or bf16");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) { convOf(spec).precision = DType_I32; }),
            kConv + ".precision: i32; a convolution computes in f32 or bf16");
}

TEST(ArtifactLoaderTest, RejectsConvolutionBuffersThatAreNotF32) {
  EXPECT_EQ(
      convRejection(
          [](ArtifactSpec &spec) { spec.buffers[ConvW].dtype = DType_F16; }),
      kConv + ".filter: buffer 9 is f16, which this instruction does not take");
  EXPECT_EQ(
      convRejection(
          [](ArtifactSpec &spec) { spec.buffers[ConvX].dtype = DType_I32; }),
      kConv + ".input: buffer 8 is i32, which this instruction does not take");
  EXPECT_EQ(
      convRejection(
          [](ArtifactSpec &spec) { spec.buffers[ConvY].dtype = DType_BF16; }),
      kConv +
          ".output: buffer 10 is bf16, which this instruction does not take");
  EXPECT_EQ(
      convRejection([](ArtifactSpec &spec) { convOf(spec).output = 11; }),
      kConv +
          ".output: buffer 11 does not exist (the artifact has 11 buffers)");
}

TEST(ArtifactLoaderTest, RejectsConvolutionRanks) {
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              spec.buffers[ConvW].shape = {4, 1, 9};
            }),
            kConv + ": expects input, filter and output of one rank from 3 to "
                    "5, got 4, 3 "
                    "and 4");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              spec.buffers[ConvX].shape = {1, 50};
              spec.buffers[ConvW].shape = {4, 9};
              spec.buffers[ConvY].shape = {4, 9};
            }),
            kConv + ": expects input, filter and output of one rank from 3 to "
                    "5, got 2, 2 "
                    "and 2");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              spec.buffers[ConvX].shape = {1, 2, 5, 5, 1, 1};
              spec.buffers[ConvW].shape = {4, 1, 3, 3, 1, 1};
              spec.buffers[ConvY].shape = {1, 4, 3, 3, 1, 1};
            }),
            kConv + ": expects input, filter and output of one rank from 3 to "
                    "5, got 6, 6 "
                    "and 6");
}

TEST(ArtifactLoaderTest, RejectsConvolutionListLengths) {
  EXPECT_EQ(
      convRejection([](ArtifactSpec &spec) { convOf(spec).strides = {2}; }),
      kConv + ".strides: has 1 entries for 2 spatial dimensions");
  EXPECT_EQ(
      convRejection([](ArtifactSpec &spec) { convOf(spec).dilations = {}; }),
      kConv + ".dilations: has 0 entries for 2 spatial dimensions");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).padLow = {1, 1, 1};
            }),
            kConv + ".pad_low: has 3 entries for 2 spatial dimensions");
  EXPECT_EQ(
      convRejection([](ArtifactSpec &spec) { convOf(spec).padHigh = {1}; }),
      kConv + ".pad_high: has 1 entries for 2 spatial dimensions");
}

TEST(ArtifactLoaderTest, RejectsConvolutionListValuesOutOfRange) {
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).strides = {2, 0};
            }),
            kConv + ".strides: holds 0");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).dilations = {0, 1};
            }),
            kConv + ".dilations: holds 0");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).padLow = {1, -1};
            }),
            kConv + ".pad_low: holds -1");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).padHigh = {-2, 1};
            }),
            kConv + ".pad_high: holds -2");
  // Values past 2^32 would overflow the size arithmetic.
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).strides = {2, (int64_t(1) << 32) + 1};
            }),
            kConv + ".strides: holds 4294967297");
}

TEST(ArtifactLoaderTest, RejectsConvolutionChannelsAndGroupsThatDisagree) {
  // Groups that do not divide the channels, none, or one (the filter reads
  // one channel of two).
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) { convOf(spec).groups = 3; }),
            kConv + ": channels disagree: input [N=1, C=2], filter [F=4, 1], "
                    "output [1, 4], "
                    "groups 3");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) { convOf(spec).groups = 0; }),
            kConv + ": channels disagree: input [N=1, C=2], filter [F=4, 1], "
                    "output [1, 4], "
                    "groups 0");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) { convOf(spec).groups = 1; }),
            kConv + ": channels disagree: input [N=1, C=2], filter [F=4, 1], "
                    "output [1, 4], "
                    "groups 1");
  // Filter outputs that the groups do not divide.
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              spec.buffers[ConvW].shape = {3, 1, 3, 3};
              spec.buffers[ConvY].shape = {1, 3, 3, 3};
            }),
            kConv + ": channels disagree: input [N=1, C=2], filter [F=3, 1], "
                    "output [1, 3], "
                    "groups 2");
  // An output whose channels are not the filter's outputs, or whose batch
  // is not the input's.
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              spec.buffers[ConvY].shape = {1, 2, 3, 3};
            }),
            kConv + ": channels disagree: input [N=1, C=2], filter [F=4, 1], "
                    "output [1, 2], "
                    "groups 2");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              spec.buffers[ConvY].shape = {2, 4, 3, 1};
            }),
            kConv + ": channels disagree: input [N=1, C=2], filter [F=4, 1], "
                    "output [2, 4], "
                    "groups 2");
}

TEST(ArtifactLoaderTest, RejectsConvolutionOutputSizesTheWindowDoesNotGive) {
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              spec.buffers[ConvY].shape = {1, 4, 3, 2};
            }),
            kConv + ".output: spatial dimension 1 is 2; the window gives 3");
  // Without padding, a 3-wide window does not fit a 1-wide input at all.
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              spec.buffers[ConvX].shape = {1, 2, 5, 1};
              convOf(spec).padLow = {1, 0};
              convOf(spec).padHigh = {1, 0};
            }),
            kConv + ".output: spatial dimension 1 is 3; the window gives none");
}

TEST(ArtifactLoaderTest, RejectsConvolutionsWritingConstants) {
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).output =
                  spec.addBuffer(Region_Constants, DType_F32, {1, 4, 3, 3});
            }),
            kConv + ": buffer 11 is in the read-only constants region");
  // A data gradient writes its input, a filter gradient its filter.
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).kind = ConvolutionKind_BackwardData;
              convOf(spec).input =
                  spec.addBuffer(Region_Constants, DType_F32, {1, 2, 5, 5});
            }),
            kConv + ": buffer 11 is in the read-only constants region");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).kind = ConvolutionKind_BackwardFilter;
              convOf(spec).filter =
                  spec.addBuffer(Region_Constants, DType_F32, {4, 1, 3, 3});
            }),
            kConv + ": buffer 11 is in the read-only constants region");
}

TEST(ArtifactLoaderTest, RejectsConvolutionsWritingOverAnInput) {
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              spec.buffers[ConvY].offset = spec.buffers[ConvX].offset;
            }),
            kConv + ": the buffer written (10) overlaps the input buffer 8");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              spec.buffers[ConvY].offset = spec.buffers[ConvW].offset;
            }),
            kConv + ": the buffer written (10) overlaps the filter buffer 9");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).kind = ConvolutionKind_BackwardFilter;
              spec.buffers[ConvW].offset = spec.buffers[ConvY].offset;
            }),
            kConv + ": the buffer written (9) overlaps the output buffer 10");
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              convOf(spec).kind = ConvolutionKind_BackwardData;
              spec.buffers[ConvX].offset = spec.buffers[ConvW].offset;
            }),
            kConv + ": the buffer written (8) overlaps the filter buffer 9");
}

// Tests that a convolution may not write the very buffer it reads: with
// "same" padding the output of a [1, 2, 3, 3] input and a [2, 2, 3, 3]
// filter has the input's shape, so one buffer index can name both.
TEST(ArtifactLoaderTest, RejectsConvolutionsWritingTheBufferTheyRead) {
  EXPECT_EQ(convRejection([](ArtifactSpec &spec) {
              spec.buffers[ConvX].shape = {1, 2, 3, 3};
              spec.buffers[ConvW].shape = {2, 2, 3, 3};
              spec.buffers[ConvY].shape = {1, 2, 3, 3};
              convOf(spec).strides = {1, 1};
              convOf(spec).groups = 1;
              convOf(spec).output = ConvX;
            }),
            kConv + ": the buffer written (8) overlaps the input buffer 8");
}

// --- Programs and bindings ---------------------------------------------------

TEST(ArtifactLoaderTest, RejectsMissingAndRepeatedProgramNames) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { forward(spec).name = ""; }),
            "test.kiln: error: programs[1].name: missing");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) { forward(spec).name = "init"; }),
            "test.kiln: error: programs[1] ('init').name: 'init' names an "
            "earlier program too");
}

TEST(ArtifactLoaderTest, RejectsBadFeeds) {
  EXPECT_EQ(
      rejection([](ArtifactSpec &spec) { forward(spec).feeds[1].name = ""; }),
      kForward + ".feeds[1].name: missing");
  EXPECT_EQ(
      rejection([](ArtifactSpec &spec) { forward(spec).feeds[1].name = "x"; }),
      kForward + ".feeds[1] ('x').name: 'x' names an earlier binding "
                 "too");
  EXPECT_EQ(
      rejection([](ArtifactSpec &spec) { forward(spec).feeds[0].buffer = 8; }),
      kForward + ".feeds[0] ('x').buffer: buffer 8 does not exist (the "
                 "artifact has 8 buffers)");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              forward(spec).feeds[0].buffer = Count;
            }),
            kForward + ".feeds[0] ('x').buffer: buffer 0 is in the read-only "
                       "constants region");
  EXPECT_EQ(
      rejection([](ArtifactSpec &spec) { forward(spec).feeds[1].buffer = X; }),
      kForward + ".feeds[1] ('y').buffer: buffer 1 is bound to an "
                 "earlier feed too");
}

TEST(ArtifactLoaderTest, RejectsBadFetches) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              forward(spec).fetches[2].name = "out";
            }),
            kForward + ".fetches[2] ('out').name: 'out' names an earlier "
                       "binding too");
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              forward(spec).fetches[0].buffer = 100;
            }),
            kForward + ".fetches[0] ('relu').buffer: buffer 100 does not "
                       "exist (the artifact has 8 buffers)");
}

// --- Parameter servers ------------------------------------------------------

// The sample plus a table "emb" [10, 4] and a dense "bias" [3] held by
// parameter servers, and forward instructions 4-7: pull rows of emb at ids
// ([2] i64) into rows ([2, 4]), push them back, pull bias into b ([3]),
// push b.
struct WithServers {
  ArtifactSpec spec = sampleArtifact();
  uint32_t emb, bias, ids, rows, b;
  WithServers() {
    emb = spec.addVariable("emb", DType_F32, {10, 4}, InitKind_Normal, 0, 1, 3);
    spec.variables[emb].buffer = spec.addBuffer(Region_Remote, DType_F32, {10, 4});
    spec.variables[emb].placement = PlacementKind_Table;
    bias = spec.addVariable("bias", DType_F32, {3}, InitKind_Zeros);
    spec.variables[bias].buffer = spec.addBuffer(Region_Remote, DType_F32, {3});
    spec.variables[bias].placement = PlacementKind_Dense;
    ids = spec.addBuffer(Region_Arena, DType_I64, {2});
    rows = spec.addBuffer(Region_Arena, DType_F32, {2, 4});
    b = spec.addBuffer(Region_Arena, DType_F32, {3});
    auto &code = forward(spec).instructions;
    code.push_back(ParameterAccessSpec{Instruction_PsPullRows, emb, rows, ids});
    code.push_back(ParameterAccessSpec{Instruction_PsPushRows, emb, rows, ids});
    code.push_back(ParameterAccessSpec{Instruction_PsPull, bias, b});
    code.push_back(ParameterAccessSpec{Instruction_PsPush, bias, b});
  }
  std::string error() { return loadError(spec.fileBytes()); }
};

TEST(ArtifactLoaderTest, AcceptsParameterServerVariablesAndAccess) {
  WithServers with;
  std::string error;
  auto artifact = VerifiedArtifact::fromFileBytes("test.kiln", with.spec.fileBytes(), error);
  ASSERT_NE(artifact, nullptr) << error;
  // A remote buffer takes no memory.
  EXPECT_EQ(artifact->buffer(with.spec.variables[with.emb].buffer).region, Region_Remote);
}

TEST(ArtifactLoaderTest, RejectsBadParameterServerAccess) {
  {
    WithServers with; // Pulling a variable the process holds.
    std::get<ParameterAccessSpec>(forward(with.spec).instructions[6]).variable = 0;
    EXPECT_EQ(with.error(), kForward + ".instructions[6] (PsPull).variable: variable 'w' is "
                                       "not held by parameter servers");
  }
  {
    WithServers with; // Rows of a dense variable.
    std::get<ParameterAccessSpec>(forward(with.spec).instructions[4]).variable = with.bias;
    EXPECT_EQ(with.error(), kForward + ".instructions[4] (PsPullRows).variable: variable "
                                       "'bias' is placed as Dense, not a table: its rows "
                                       "cannot be named");
  }
  {
    WithServers with; // Rows of the wrong width.
    with.spec.buffers[with.rows].shape = {2, 5};
    EXPECT_EQ(with.error(), kForward + ".instructions[4] (PsPullRows).output: buffer " +
                                std::to_string(with.rows) + " is [2, 5]; expected [2, 4]");
  }
  {
    WithServers with; // A whole pull of a hash table.
    with.spec.variables[with.bias].placement = PlacementKind_Hash;
    EXPECT_EQ(with.error(), kForward + ".instructions[6] (PsPull).variable: variable 'bias' "
                                       "is placed as Hash: a hash table is only accessed by "
                                       "rows");
  }
  {
    WithServers with; // A kernel reading a remote buffer.
    uint32_t remote = with.spec.variables[with.emb].buffer;
    std::get<KernelCallSpec>(forward(with.spec).instructions[AddCall]).args[0] = remote;
    EXPECT_EQ(with.error(), kForward + ".instructions[0] (KernelCall).args[0]: buffer " +
                                std::to_string(remote) +
                                " is a parameter-server variable's, which has no memory here");
  }
}

TEST(ArtifactLoaderTest, RejectsBadParameterServerVariables) {
  {
    WithServers with; // Placed, but in the state region.
    with.spec.variables[with.bias].buffer = W;
    EXPECT_EQ(with.error(), "test.kiln: error: variables[2] ('bias').buffer: buffer " +
                                std::to_string(W) +
                                " is in the state region; a parameter-server variable's is "
                                "remote");
  }
  {
    WithServers with; // A remote buffer without a placement.
    with.spec.variables[with.emb].placement.reset();
    EXPECT_EQ(with.error(), "test.kiln: error: variables[1] ('emb').buffer: buffer " +
                                std::to_string(with.spec.variables[with.emb].buffer) +
                                " is in the remote region; variables live in the state "
                                "region");
  }
  {
    WithServers with; // A hash table drawn from a constant.
    with.spec.variables[with.emb].placement = PlacementKind_Hash;
    with.spec.variables[with.emb].init = InitKind_Constant;
    with.spec.variables[with.emb].value = std::vector<uint8_t>(160);
    EXPECT_EQ(with.error(), "test.kiln: error: variables[1] ('emb').init: a hash table's rows "
                            "are drawn per id; it cannot have a constant initializer");
  }
}

// Tests that names read from the artifact cannot break the message's line.
TEST(ArtifactLoaderTest, EscapesControlCharactersInNames) {
  EXPECT_EQ(rejection([](ArtifactSpec &spec) {
              forward(spec).name = "for\nward";
              forward(spec).feeds[1].name = "x";
            }),
            "test.kiln: error: programs[1] ('for\\x0award').feeds[1] ('x')"
            ".name: 'x' names an earlier binding too");
}

// Tests what the rules allow: fetching a variable or a constant, a name that
// is both a feed and a fetch, two fetches of one buffer, empty programs.
TEST(ArtifactLoaderTest, AcceptsWhatTheRulesAllow) {
  ArtifactSpec spec = sampleArtifact();
  forward(spec).fetches.push_back({"w", W});
  forward(spec).fetches.push_back({"count", Count});
  forward(spec).fetches.push_back({"x", X});
  forward(spec).fetches.push_back({"again", X});
  spec.programs.push_back({"nothing", {}, {}, {}});
  std::string error;
  EXPECT_NE(
      VerifiedArtifact::fromFileBytes("test.kiln", spec.fileBytes(), error),
      nullptr)
      << error;
}

} // namespace
