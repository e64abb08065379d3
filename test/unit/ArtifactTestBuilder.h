//===- ArtifactTestBuilder.h - Artifacts built by tests ---------*- C++ -*-===//
//
// A plain description of an artifact that tests fill in (or start from the
// sample model and break one field of), serialized with the FlatBuffers
// builder. Used by the runtime's unit tests, the fuzzer's seed corpus and
// the lit tests' helper tool.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_ARTIFACTTESTBUILDER_H
#define KILN_TEST_UNIT_ARTIFACTTESTBUILDER_H

#include "proto/kiln/artifact_generated.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <variant>
#include <vector>

namespace kiln::test {

struct BufferSpec {
  artifact::Region region = artifact::Region_Arena;
  uint64_t offset = 0;
  artifact::DType dtype = artifact::DType_F32;
  std::vector<int64_t> shape;
  /// Writes the shape's 8-byte elements at 4 mod 8 in the FlatBuffer, which
  /// the FlatBuffers verifier lets through.
  bool misalignedShape = false;
};

struct VariableSpec {
  std::string name;
  uint32_t buffer = 0;
  artifact::InitKind init = artifact::InitKind_Zeros;
  double a = 0, b = 0;
  uint64_t seed = 0;
  std::optional<std::vector<uint8_t>> value;
  bool trainable = true;
  /// Set: the variable lives on parameter servers (its buffer is Remote).
  std::optional<artifact::PlacementKind> placement;
  artifact::Partitioner partitioner = artifact::Partitioner_None;
  int64_t numShards = 1;
};

struct BindingSpec {
  BindingSpec() = default;
  BindingSpec(std::string name, uint32_t buffer) : name(std::move(name)), buffer(buffer) {}
  std::string name;
  uint32_t buffer = 0;
  /// A feed's views; absent: not stated (as an older kilnc wrote).
  std::optional<std::vector<uint32_t>> views;
};

struct KernelCallSpec {
  uint32_t kernel = 0;
  std::vector<uint32_t> args;
  uint32_t outputs = 0; ///< Trailing args written; 0 = not stated.
  uint64_t rows = 0;    ///< > 0: row-parallel (KernelCall.rows).
};

struct GemmSpec {
  uint32_t a = 0, b = 0, c = 0;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transposeA = false, transposeB = false, sharedB = false;
  artifact::DType precision = artifact::DType_F32;
  int32_t aCopy = -1, bCopy = -1;
};

/// A product by blocks of rows, each handed to `update` (BlockedGemm).
struct BlockedGemmSpec {
  GemmSpec gemm;
  KernelCallSpec update;
  int64_t blockRows = 0;
  uint32_t blockArg = 0;
  int64_t rowsPerUpdateRow = 1;
};

struct CopySpec {
  uint32_t src = 0, dst = 0;
};

struct InitVariableSpec {
  uint32_t variable = 0;
};

struct SparseApplySpec {
  artifact::Optimizer optimizer = artifact::Optimizer_Sgd;
  uint32_t param = 0;
  std::vector<uint32_t> slots;
  uint32_t indices = 0, rows = 0, lr = 0, step = 0;
  double momentum = 0;
  bool dense = false;
  int64_t gatheredTag = -1;
  int64_t when = -1;
};

/// input [N, C, D...], filter [F, C / groups, K...], output [N, F, O...];
/// `kind` says which of the three is written.
struct ConvolutionSpec {
  artifact::ConvolutionKind kind = artifact::ConvolutionKind_Forward;
  uint32_t input = 0, filter = 0, output = 0;
  std::vector<int64_t> strides, dilations, padLow, padHigh;
  int64_t groups = 1;
  artifact::DType precision = artifact::DType_F32;
};

struct AllReduceStartSpec {
  uint32_t tag = 0;
  bool mean = true;
  std::vector<uint32_t> inputs;
};

struct AllReduceWaitSpec {
  uint32_t tag = 0;
  std::vector<uint32_t> outputs;
};

struct SparseAllReduceStartSpec {
  uint32_t tag = 0;
  uint32_t indices = 0, rows = 0;
};

struct SparseAllReduceWaitSpec {
  uint32_t tag = 0;
};

/// PsPull, PsPullRows, PsPush or PsPushRows: `data` is the output, the
/// gradient or the rows; `ids` is used by the row kinds.
struct ParameterAccessSpec {
  artifact::Instruction kind = artifact::Instruction_PsPull;
  uint32_t variable = 0, data = 0, ids = 0;
};

/// An instruction kind this schema does not define (a newer compiler's).
struct UnknownInstructionSpec {
  uint8_t type = 0;
};

using InstructionSpec =
    std::variant<KernelCallSpec, GemmSpec, CopySpec, InitVariableSpec,
                 SparseApplySpec, ConvolutionSpec, AllReduceStartSpec,
                 AllReduceWaitSpec, SparseAllReduceStartSpec,
                 SparseAllReduceWaitSpec, ParameterAccessSpec, UnknownInstructionSpec,
                 BlockedGemmSpec>;

struct ProgramSpec {
  std::string name;
  std::vector<InstructionSpec> instructions;
  std::vector<BindingSpec> feeds, fetches;
};

struct KernelsSpec {
  std::string format = "elf-x86_64-shared";
  std::string cpu = "x86-64";
  std::string features = "+sse2";
  std::vector<uint8_t> object;
  std::vector<std::string> symbols;
};

struct TrainingSpec {
  std::string loss = "loss", label, lossKind = "other", prediction;
  int64_t batchSize = 0;
  std::string optimizer = "sgd", stepVariable = "global_step";
  int64_t accumulateSteps = 1;
  std::string strategy;
  /// parameter_server: the servers' optimizer kind and rate; empty: none.
  std::string serverOptimizer;
  double serverLearningRate = 0.1;
};

struct ArtifactSpec {
  uint32_t formatVersion = 1;
  std::string target = "cpu";
  std::string producer = "kiln tests";
  std::string model = "test";
  uint64_t arenaBytes = 0, stateBytes = 0;
  std::vector<uint8_t> constants;
  std::vector<BufferSpec> buffers;
  std::vector<VariableSpec> variables;
  std::vector<ProgramSpec> programs;
  std::optional<KernelsSpec> kernels;
  std::optional<TrainingSpec> training;

  /// Appends a buffer at the next 64-byte boundary of `region`, growing the
  /// region (and zero-filling constants) to hold it; returns its index.
  uint32_t addBuffer(artifact::Region region, artifact::DType dtype,
                     std::vector<int64_t> shape);
  /// Appends an i64 scalar holding `value` to the constants region.
  uint32_t addI64Constant(int64_t value);
  /// Appends a variable with its own state buffer; returns its index.
  uint32_t addVariable(const std::string &name, artifact::DType dtype,
                       std::vector<int64_t> shape, artifact::InitKind init,
                       double a = 0, double b = 0, uint64_t seed = 0);

  /// The FlatBuffer.
  std::vector<uint8_t> flatbuffer() const;
  /// The FlatBuffer and its footer: the bytes of an artifact file.
  std::vector<uint8_t> fileBytes() const;
};

/// The bytes of the test kernels' shared object (RuntimeTestKernels.c).
std::vector<uint8_t> testKernelObject();

/// Symbols of the test kernels, in the order sampleArtifact() uses them.
enum SampleKernel : uint32_t {
  AddKernel = 0,
  ReluKernel = 1,
  FillOnesKernel = 2
};

/// A small model over every instruction kind:
///   init:    w = GlorotUniform(seed 7) f32 [4, 3]
///   forward: feeds x, y f32 [2, 4]
///            sum = add(x, y); relu = relu(sum)  (kernels)
///            out = relu x w                      (Gemm)
///            copy = Copy(out)
///            fetches relu f32 [2, 4], out f32 [2, 3], copy f32 [2, 3]
ArtifactSpec sampleArtifact();

} // namespace kiln::test

#endif // KILN_TEST_UNIT_ARTIFACTTESTBUILDER_H
