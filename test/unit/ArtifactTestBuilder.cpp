//===- ArtifactTestBuilder.cpp - Artifacts built by tests -----------------===//

#include "test/unit/ArtifactTestBuilder.h"

#include "runtime/artifact/ArtifactFile.h"
#include "runtime/artifact/DTypes.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace kiln::test {

using namespace artifact;

namespace {

uint64_t alignTo64(uint64_t value) { return (value + 63) / 64 * 64; }

using Builder = flatbuffers::FlatBufferBuilder;

flatbuffers::Offset<KernelCall> buildKernelCall(Builder &fbb, const KernelCallSpec &call) {
  return CreateKernelCall(fbb, call.kernel, fbb.CreateVector(call.args), call.outputs,
                          call.rows);
}

flatbuffers::Offset<Gemm> buildGemm(Builder &fbb, const GemmSpec &gemm) {
  return CreateGemm(fbb, gemm.a, gemm.b, gemm.c, gemm.batch, gemm.m, gemm.n, gemm.k,
                    gemm.transposeA, gemm.transposeB, gemm.sharedB, gemm.precision, gemm.aCopy,
                    gemm.bCopy);
}

flatbuffers::Offset<void>
buildInstruction(Builder &fbb, const InstructionSpec &spec, uint8_t &type) {
  if (const auto *call = std::get_if<KernelCallSpec>(&spec)) {
    type = Instruction_KernelCall;
    return buildKernelCall(fbb, *call).Union();
  }
  if (const auto *gemm = std::get_if<GemmSpec>(&spec)) {
    type = Instruction_Gemm;
    return buildGemm(fbb, *gemm).Union();
  }
  if (const auto *blocked = std::get_if<BlockedGemmSpec>(&spec)) {
    type = Instruction_BlockedGemm;
    return CreateBlockedGemm(fbb, buildGemm(fbb, blocked->gemm),
                             buildKernelCall(fbb, blocked->update), blocked->blockRows,
                             blocked->blockArg, blocked->rowsPerUpdateRow)
        .Union();
  }
  if (const auto *copy = std::get_if<CopySpec>(&spec)) {
    type = Instruction_Copy;
    return CreateCopy(fbb, copy->src, copy->dst).Union();
  }
  if (const auto *init = std::get_if<InitVariableSpec>(&spec)) {
    type = Instruction_InitVariable;
    return CreateInitVariable(fbb, init->variable).Union();
  }
  if (const auto *apply = std::get_if<SparseApplySpec>(&spec)) {
    type = Instruction_SparseApply;
    return CreateSparseApply(fbb, apply->optimizer, apply->param,
                             fbb.CreateVector(apply->slots), apply->indices,
                             apply->rows, apply->lr, apply->step,
                             apply->momentum, /*nesterov=*/false,
                             /*beta1=*/0.9, /*beta2=*/0.999,
                             /*epsilon=*/1e-8, /*weight_decay=*/0, apply->dense,
                             apply->gatheredTag, apply->when)
        .Union();
  }
  if (const auto *start = std::get_if<AllReduceStartSpec>(&spec)) {
    type = Instruction_AllReduceStart;
    return CreateAllReduceStart(fbb, start->tag, start->mean,
                                fbb.CreateVector(start->inputs))
        .Union();
  }
  if (const auto *wait = std::get_if<AllReduceWaitSpec>(&spec)) {
    type = Instruction_AllReduceWait;
    return CreateAllReduceWait(fbb, wait->tag, fbb.CreateVector(wait->outputs))
        .Union();
  }
  if (const auto *start = std::get_if<SparseAllReduceStartSpec>(&spec)) {
    type = Instruction_SparseAllReduceStart;
    return CreateSparseAllReduceStart(fbb, start->tag, /*mean=*/true,
                                      start->indices, start->rows)
        .Union();
  }
  if (const auto *wait = std::get_if<SparseAllReduceWaitSpec>(&spec)) {
    type = Instruction_SparseAllReduceWait;
    return CreateSparseAllReduceWait(fbb, wait->tag).Union();
  }
  if (const auto *conv = std::get_if<ConvolutionSpec>(&spec)) {
    type = Instruction_Convolution;
    return CreateConvolution(fbb, conv->kind, conv->input, conv->filter,
                             conv->output, fbb.CreateVector(conv->strides),
                             fbb.CreateVector(conv->dilations),
                             fbb.CreateVector(conv->padLow),
                             fbb.CreateVector(conv->padHigh), conv->groups, conv->precision)
        .Union();
  }
  if (const auto *access = std::get_if<ParameterAccessSpec>(&spec)) {
    type = access->kind;
    switch (access->kind) {
    case Instruction_PsPull:
      return CreatePsPull(fbb, access->variable, access->data).Union();
    case Instruction_PsPullRows:
      return CreatePsPullRows(fbb, access->variable, access->ids, access->data).Union();
    case Instruction_PsPush:
      return CreatePsPush(fbb, access->variable, access->data).Union();
    default:
      return CreatePsPushRows(fbb, access->variable, access->ids, access->data).Union();
    }
  }
  // An unknown kind still needs a table to point at.
  type = std::get<UnknownInstructionSpec>(spec).type;
  return CreateInitVariable(fbb, 0).Union();
}

/// A shape vector; misaligned on request. The builder writes back to front
/// and the finished buffer's size is a multiple of 8, so elements starting
/// 4 (mod 8) bytes from the end start 4 (mod 8) bytes from the beginning.
flatbuffers::Offset<flatbuffers::Vector<int64_t>>
buildShape(Builder &fbb, const BufferSpec &spec) {
  if (!spec.misalignedShape)
    return fbb.CreateVector(spec.shape);
  size_t bytes = spec.shape.size() * sizeof(int64_t);
  size_t start = (fbb.GetSize() + 3) / 4 * 4 + bytes; // From the end.
  if (start % 8 == 0)
    fbb.PushElement<uint32_t>(0);
  fbb.StartVector(spec.shape.size() * 2, sizeof(uint32_t));
  for (size_t i = spec.shape.size(); i-- > 0;) {
    fbb.PushElement<uint32_t>(uint32_t(uint64_t(spec.shape[i]) >> 32));
    fbb.PushElement<uint32_t>(uint32_t(spec.shape[i]));
  }
  return fbb.EndVector(spec.shape.size());
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<Binding>>>
buildBindings(Builder &fbb, const std::vector<BindingSpec> &specs) {
  std::vector<flatbuffers::Offset<Binding>> bindings;
  for (const BindingSpec &spec : specs)
    bindings.push_back(CreateBinding(fbb, fbb.CreateString(spec.name), spec.buffer, 0, false,
                                     spec.views ? fbb.CreateVector(*spec.views) : 0));
  return fbb.CreateVector(bindings);
}

flatbuffers::Offset<Program> buildProgram(Builder &fbb,
                                          const ProgramSpec &spec) {
  std::vector<uint8_t> types;
  std::vector<flatbuffers::Offset<void>> values;
  for (const InstructionSpec &instruction : spec.instructions) {
    uint8_t type = 0;
    values.push_back(buildInstruction(fbb, instruction, type));
    types.push_back(type);
  }
  return CreateProgram(fbb, fbb.CreateString(spec.name),
                       fbb.CreateVector(types), fbb.CreateVector(values),
                       buildBindings(fbb, spec.feeds),
                       buildBindings(fbb, spec.fetches));
}

} // namespace

uint32_t ArtifactSpec::addBuffer(Region region, DType dtype,
                                 std::vector<int64_t> shape) {
  uint64_t bytes = dtypeSize(dtype);
  for (int64_t dim : shape)
    bytes *= uint64_t(dim);
  uint64_t offset = 0;
  switch (region) {
  case Region_Arena:
    offset = alignTo64(arenaBytes);
    arenaBytes = offset + bytes;
    break;
  case Region_State:
    offset = alignTo64(stateBytes);
    stateBytes = offset + bytes;
    break;
  case Region_Constants:
    offset = alignTo64(constants.size());
    constants.resize(offset + bytes);
    break;
  default: // Remote: no memory.
    break;
  }
  buffers.push_back({region, offset, dtype, std::move(shape)});
  return buffers.size() - 1;
}

uint32_t ArtifactSpec::addI64Constant(int64_t value) {
  uint32_t buffer = addBuffer(Region_Constants, DType_I64, {});
  for (int i = 0; i < 8; ++i)
    constants[buffers[buffer].offset + i] = uint8_t(uint64_t(value) >> (8 * i));
  return buffer;
}

uint32_t ArtifactSpec::addVariable(const std::string &name, DType dtype,
                                   std::vector<int64_t> shape, InitKind init,
                                   double a, double b, uint64_t seed) {
  uint32_t buffer = addBuffer(Region_State, dtype, std::move(shape));
  VariableSpec variable;
  variable.name = name;
  variable.buffer = buffer;
  variable.init = init;
  variable.a = a;
  variable.b = b;
  variable.seed = seed;
  variables.push_back(variable);
  return variables.size() - 1;
}

std::vector<uint8_t> ArtifactSpec::flatbuffer() const {
  Builder fbb;
  std::vector<flatbuffers::Offset<Buffer>> builtBuffers;
  for (const BufferSpec &spec : buffers)
    builtBuffers.push_back(CreateBuffer(fbb, spec.region, spec.offset,
                                        spec.dtype, buildShape(fbb, spec)));
  std::vector<flatbuffers::Offset<Variable>> builtVariables;
  for (const VariableSpec &spec : variables)
    builtVariables.push_back(CreateVariable(
        fbb, fbb.CreateString(spec.name), spec.buffer, spec.init, spec.a,
        spec.b, spec.seed, spec.value ? fbb.CreateVector(*spec.value) : 0,
        spec.trainable,
        spec.placement ? CreatePlacement(fbb, *spec.placement, spec.partitioner, spec.numShards)
                       : 0));
  std::vector<flatbuffers::Offset<Program>> builtPrograms;
  for (const ProgramSpec &spec : programs)
    builtPrograms.push_back(buildProgram(fbb, spec));
  flatbuffers::Offset<KernelLibrary> builtKernels = 0;
  if (kernels)
    builtKernels = CreateKernelLibrary(
        fbb, fbb.CreateString(kernels->format), fbb.CreateString(kernels->cpu),
        fbb.CreateString(kernels->features), fbb.CreateVector(kernels->object),
        fbb.CreateVectorOfStrings(kernels->symbols));
  flatbuffers::Offset<Training> builtTraining = 0;
  if (training)
    builtTraining = CreateTraining(
        fbb, fbb.CreateString(training->loss), fbb.CreateString(training->label),
        fbb.CreateString(training->lossKind), fbb.CreateString(training->prediction),
        training->batchSize, fbb.CreateString(training->optimizer),
        fbb.CreateString(training->stepVariable), training->accumulateSteps,
        training->strategy.empty() ? 0 : fbb.CreateString(training->strategy),
        training->serverOptimizer.empty()
            ? 0
            : CreateServerOptimizer(fbb, fbb.CreateString(training->serverOptimizer),
                                    training->serverLearningRate));
  auto root = CreateArtifact(
      fbb, formatVersion, fbb.CreateString(target), fbb.CreateString(producer),
      fbb.CreateString(model), arenaBytes, stateBytes,
      fbb.CreateVector(constants), fbb.CreateVector(builtBuffers),
      fbb.CreateVector(builtVariables), fbb.CreateVector(builtPrograms),
      builtKernels, builtTraining);
  FinishArtifactBuffer(fbb, root);
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<uint8_t> ArtifactSpec::fileBytes() const {
  std::vector<uint8_t> bytes = flatbuffer();
  size_t size = bytes.size();
  bytes.resize(size + kFooterSize);
  encodeArtifactFooter(bytes.data(), size, bytes.data() + size);
  return bytes;
}

std::vector<uint8_t> testKernelObject() {
  std::ifstream file(KILN_TEST_KERNELS, std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "cannot read the test kernels %s\n",
                 KILN_TEST_KERNELS);
    std::abort();
  }
  return {std::istreambuf_iterator<char>(file),
          std::istreambuf_iterator<char>()};
}

ArtifactSpec sampleArtifact() {
  ArtifactSpec spec;
  spec.model = "sample";
  spec.kernels = KernelsSpec{};
  spec.kernels->object = testKernelObject();
  spec.kernels->symbols = {"kiln_test_add_f32", "kiln_test_relu_f32",
                           "kiln_test_fill_ones_f32"};
  uint32_t count = spec.addI64Constant(8);
  uint32_t x = spec.addBuffer(Region_Arena, DType_F32, {2, 4});
  uint32_t y = spec.addBuffer(Region_Arena, DType_F32, {2, 4});
  uint32_t sum = spec.addBuffer(Region_Arena, DType_F32, {2, 4});
  uint32_t relu = spec.addBuffer(Region_Arena, DType_F32, {2, 4});
  uint32_t out = spec.addBuffer(Region_Arena, DType_F32, {2, 3});
  uint32_t copy = spec.addBuffer(Region_Arena, DType_F32, {2, 3});
  uint32_t w = spec.addVariable("w", DType_F32, {4, 3}, InitKind_GlorotUniform,
                                0, 0, /*seed=*/7);
  uint32_t wBuffer = spec.variables[w].buffer;
  spec.programs.push_back({"init", {InitVariableSpec{w}}, {}, {}});
  GemmSpec gemm;
  gemm.a = relu;
  gemm.b = wBuffer;
  gemm.c = out;
  gemm.m = 2;
  gemm.n = 3;
  gemm.k = 4;
  spec.programs.push_back({"forward",
                           {KernelCallSpec{AddKernel, {count, x, y, sum}},
                            KernelCallSpec{ReluKernel, {count, sum, relu}},
                            gemm, CopySpec{out, copy}},
                           {{"x", x}, {"y", y}},
                           {{"relu", relu}, {"out", out}, {"copy", copy}}});
  return spec;
}

} // namespace kiln::test
