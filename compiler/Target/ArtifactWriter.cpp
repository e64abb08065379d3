//===- ArtifactWriter.cpp - ExecutionPlan + kernels → .kiln file ----------===//

#include "compiler/Target/ArtifactWriter.h"

#include "compiler/Target/KernelModule.h"
#include "dialects/Kiln/TrainSpec.h"
#include "passes/Graph/LossScaling.h"
#include "proto/kiln/artifact_generated.h"
#include "runtime/artifact/ArtifactFile.h"

#include "mlir/IR/Diagnostics.h"

namespace fb = kiln::artifact;
using namespace mlir;

namespace kiln {
namespace {

fb::DType dtypeOf(Type type) {
  if (type.isF32())
    return fb::DType_F32;
  if (type.isF16())
    return fb::DType_F16;
  if (type.isBF16())
    return fb::DType_BF16;
  if (type.isInteger(32))
    return fb::DType_I32;
  if (type.isInteger(64))
    return fb::DType_I64;
  assert(type.isInteger(1) && "the dialect allows no other element type");
  return fb::DType_I1;
}

fb::Region regionOf(Region region) {
  switch (region) {
  case Region::Arena:
    return fb::Region_Arena;
  case Region::State:
    return fb::Region_State;
  case Region::Remote:
    return fb::Region_Remote;
  case Region::Constants:
    return fb::Region_Constants;
  }
  llvm_unreachable("unknown region");
}

fb::InitKind initKindOf(InitKind kind) {
  switch (kind) {
  case InitKind::zeros: return fb::InitKind_Zeros;
  case InitKind::ones: return fb::InitKind_Ones;
  case InitKind::constant: return fb::InitKind_Constant;
  case InitKind::uniform: return fb::InitKind_Uniform;
  case InitKind::normal: return fb::InitKind_Normal;
  case InitKind::truncated_normal: return fb::InitKind_TruncatedNormal;
  case InitKind::glorot_uniform: return fb::InitKind_GlorotUniform;
  case InitKind::glorot_normal: return fb::InitKind_GlorotNormal;
  }
  llvm_unreachable("unknown initializer kind");
}

/// The bytes of a dense constant as the runtime lays them out: row-major,
/// little-endian, bools one byte each, splats expanded.
std::vector<uint8_t> bytesOf(DenseElementsAttr value) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  std::vector<uint8_t> bytes;
  bytes.reserve(tensorBytes(type));
  if (type.getElementType().isInteger(1)) {
    for (bool b : value.getValues<bool>())
      bytes.push_back(b ? 1 : 0);
    return bytes;
  }
  unsigned width = type.getElementType().getIntOrFloatBitWidth() / 8;
  auto append = [&](const APInt &bits) {
    uint64_t raw = bits.getZExtValue();
    for (unsigned i = 0; i < width; ++i)
      bytes.push_back(static_cast<uint8_t>(raw >> (8 * i)));
  };
  if (llvm::isa<FloatType>(type.getElementType()))
    for (APFloat f : value.getValues<APFloat>())
      append(f.bitcastToAPInt());
  else
    for (APInt i : value.getValues<APInt>())
      append(i);
  return bytes;
}

fb::Optimizer optimizerOf(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::sgd: return fb::Optimizer_Sgd;
  case OptimizerKind::momentum: return fb::Optimizer_Momentum;
  case OptimizerKind::adam: return fb::Optimizer_Adam;
  case OptimizerKind::adagrad: return fb::Optimizer_Adagrad;
  }
  llvm_unreachable("unknown optimizer");
}

class Serializer {
public:
  explicit Serializer(const ExecutionPlan &plan) : plan(plan) {}

  std::vector<uint8_t> run(const std::vector<uint8_t> &kernelObject,
                           const HostTarget &host, StringRef modelName);

private:
  using Instructions =
      std::pair<std::vector<uint8_t>, std::vector<flatbuffers::Offset<void>>>;

  flatbuffers::Offset<fb::Program> initProgram();
  flatbuffers::Offset<fb::Program> program(const ProgramPlan &program);
  void addStep(const Step &step, Instructions &out);
  flatbuffers::Offset<fb::KernelCall> kernelCall(const KernelStep &kernel);
  flatbuffers::Offset<fb::Gemm> gemmOf(const GemmStep &gemm);
  flatbuffers::Offset<fb::Training> training();
  /// A variable's kdist.placement as the artifact's Placement; 0 for none.
  flatbuffers::Offset<fb::Placement> placementOf(DictionaryAttr placement);
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Binding>>>
  bindings(ArrayRef<NamedBuffer> named, bool feeds = false);

  const ExecutionPlan &plan;
  flatbuffers::FlatBufferBuilder fbb;
};

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Binding>>>
Serializer::bindings(ArrayRef<NamedBuffer> named, bool feeds) {
  std::vector<flatbuffers::Offset<fb::Binding>> list;
  for (const NamedBuffer &binding : named) {
    // A feed's views: the buffers of its slot (reshapes of it).
    flatbuffers::Offset<flatbuffers::Vector<uint32_t>> views = 0;
    if (feeds) {
      std::vector<uint32_t> same;
      for (auto [i, buffer] : llvm::enumerate(plan.buffers))
        if (static_cast<int>(i) != binding.buffer &&
            buffer.slot == plan.buffers[binding.buffer].slot)
          same.push_back(static_cast<uint32_t>(i));
      views = fbb.CreateVector(same);
    }
    list.push_back(fb::CreateBinding(fbb, fbb.CreateString(binding.name), binding.buffer,
                                     binding.idBound, binding.paddedIds, views,
                                     binding.idsPerExample, binding.offsetsStride,
                                     binding.ignoredId.value_or(0),
                                     binding.ignoredId.has_value()));
  }
  return fbb.CreateVector(list);
}

flatbuffers::Offset<fb::Program> Serializer::initProgram() {
  std::vector<uint8_t> kinds;
  std::vector<flatbuffers::Offset<void>> instructions;
  for (unsigned i = 0; i < plan.variables.size(); ++i) {
    if (plan.variables[i].placement)
      continue; // The parameter servers draw it.
    kinds.push_back(fb::Instruction_InitVariable);
    instructions.push_back(fb::CreateInitVariable(fbb, i).Union());
  }
  return fb::CreateProgram(fbb, fbb.CreateString("init"), fbb.CreateVector(kinds),
                           fbb.CreateVector(instructions), bindings({}), bindings({}));
}

flatbuffers::Offset<fb::KernelCall> Serializer::kernelCall(const KernelStep &kernel) {
  std::vector<uint32_t> args(kernel.inputs.begin(), kernel.inputs.end());
  args.insert(args.end(), kernel.outputs.begin(), kernel.outputs.end());
  return fb::CreateKernelCall(fbb, kernel.kernel, fbb.CreateVector(args), kernel.outputs.size(),
                              kernel.rows);
}

flatbuffers::Offset<fb::Gemm> Serializer::gemmOf(const GemmStep &gemm) {
  fb::DType precision = !gemm.precision            ? fb::DType_F32
                        : gemm.precision.isBF16() ? fb::DType_BF16
                                                  : fb::DType_F16;
  return fb::CreateGemm(fbb, gemm.a, gemm.b, gemm.c, gemm.batch, gemm.m, gemm.n, gemm.k,
                        gemm.transposeA, gemm.transposeB, gemm.sharedB, precision, gemm.copyA,
                        gemm.copyB);
}

void Serializer::addStep(const Step &step, Instructions &out) {
  auto &[kinds, instructions] = out;
  if (const auto *kernel = std::get_if<KernelStep>(&step)) {
    kinds.push_back(fb::Instruction_KernelCall);
    instructions.push_back(kernelCall(*kernel).Union());
  } else if (const auto *gemm = std::get_if<GemmStep>(&step)) {
    kinds.push_back(fb::Instruction_Gemm);
    instructions.push_back(gemmOf(*gemm).Union());
  } else if (const auto *conv = std::get_if<ConvStep>(&step)) {
    auto longs = [&](ArrayRef<int64_t> values) {
      return fbb.CreateVector(std::vector<int64_t>(values.begin(), values.end()));
    };
    fb::ConvolutionKind kind = conv->kind == ConvStep::Forward ? fb::ConvolutionKind_Forward
                               : conv->kind == ConvStep::BackwardData
                                   ? fb::ConvolutionKind_BackwardData
                                   : fb::ConvolutionKind_BackwardFilter;
    kinds.push_back(fb::Instruction_Convolution);
    instructions.push_back(fb::CreateConvolution(fbb, kind, conv->input, conv->filter,
                                                 conv->output, longs(conv->strides),
                                                 longs(conv->dilations), longs(conv->padLow),
                                                 longs(conv->padHigh), conv->groups,
                                                 conv->bf16 ? fb::DType_BF16 : fb::DType_F32)
                               .Union());
  } else if (const auto *copy = std::get_if<CopyStep>(&step)) {
    kinds.push_back(fb::Instruction_Copy);
    instructions.push_back(fb::CreateCopy(fbb, copy->src, copy->dst).Union());
  } else if (const auto *start = std::get_if<AllReduceStartStep>(&step)) {
    std::vector<uint32_t> inputs(start->inputs.begin(), start->inputs.end());
    kinds.push_back(fb::Instruction_AllReduceStart);
    instructions.push_back(fb::CreateAllReduceStart(fbb, start->tag, start->mean,
                                                    fbb.CreateVector(inputs))
                               .Union());
  } else if (const auto *start = std::get_if<SparseAllReduceStartStep>(&step)) {
    kinds.push_back(fb::Instruction_SparseAllReduceStart);
    instructions.push_back(fb::CreateSparseAllReduceStart(fbb, start->tag, start->mean,
                                                          start->indices, start->rows)
                               .Union());
  } else if (const auto *wait = std::get_if<SparseAllReduceWaitStep>(&step)) {
    kinds.push_back(fb::Instruction_SparseAllReduceWait);
    instructions.push_back(fb::CreateSparseAllReduceWait(fbb, wait->tag).Union());
  } else if (const auto *wait = std::get_if<AllReduceWaitStep>(&step)) {
    std::vector<uint32_t> outputs(wait->outputs.begin(), wait->outputs.end());
    kinds.push_back(fb::Instruction_AllReduceWait);
    instructions.push_back(
        fb::CreateAllReduceWait(fbb, wait->tag, fbb.CreateVector(outputs)).Union());
  } else if (const auto *access = std::get_if<ParameterStep>(&step)) {
    uint32_t variable = access->variable;
    switch (access->kind) {
    case ParameterStep::Pull:
      kinds.push_back(fb::Instruction_PsPull);
      instructions.push_back(fb::CreatePsPull(fbb, variable, access->data).Union());
      break;
    case ParameterStep::PullRows:
      kinds.push_back(fb::Instruction_PsPullRows);
      instructions.push_back(
          fb::CreatePsPullRows(fbb, variable, access->ids, access->data).Union());
      break;
    case ParameterStep::Push:
      kinds.push_back(fb::Instruction_PsPush);
      instructions.push_back(fb::CreatePsPush(fbb, variable, access->data).Union());
      break;
    case ParameterStep::PushRows:
      kinds.push_back(fb::Instruction_PsPushRows);
      instructions.push_back(
          fb::CreatePsPushRows(fbb, variable, access->ids, access->data).Union());
      break;
    }
  } else {
    const auto &apply = std::get<SparseApplyStep>(step);
    SparseApplyOp op = apply.op;
    std::vector<uint32_t> slots(apply.slots.begin(), apply.slots.end());
    kinds.push_back(fb::Instruction_SparseApply);
    instructions.push_back(
        fb::CreateSparseApply(fbb, optimizerOf(op.getOptimizer()), apply.param,
                              fbb.CreateVector(slots), apply.indices, apply.rows, apply.lr,
                              apply.step, op.getMomentum().convertToDouble(),
                              op.getNesterov(), op.getBeta1().convertToDouble(),
                              op.getBeta2().convertToDouble(),
                              op.getEpsilon().convertToDouble(),
                              op.getWeightDecay().convertToDouble(), op.getDense(),
                              apply.gatheredTag, apply.when)
            .Union());
  }
}

flatbuffers::Offset<fb::Program> Serializer::program(const ProgramPlan &program) {
  Instructions instructions;
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const auto *gemm = std::get_if<GemmStep>(&program.steps[i]);
    if (!gemm || gemm->blockRows == 0) {
      addStep(program.steps[i], instructions);
      continue;
    }
    // With the reader that follows it (compileKernels has checked it).
    const auto &update = std::get<KernelStep>(program.steps[++i]);
    instructions.first.push_back(fb::Instruction_BlockedGemm);
    instructions.second.push_back(fb::CreateBlockedGemm(fbb, gemmOf(*gemm), kernelCall(update),
                                                        gemm->blockRows, update.blockedInput,
                                                        gemm->rowsPerKernelRow)
                                      .Union());
  }
  return fb::CreateProgram(fbb, fbb.CreateString(program.name),
                           fbb.CreateVector(instructions.first),
                           fbb.CreateVector(instructions.second),
                           bindings(program.feeds, /*feeds=*/true), bindings(program.fetches));
}

flatbuffers::Offset<fb::Placement> Serializer::placementOf(DictionaryAttr placement) {
  if (!placement)
    return 0;
  auto text = [&](StringRef key) {
    auto value = placement.getAs<StringAttr>(key);
    return value ? value.getValue() : StringRef();
  };
  auto number = [&](StringRef key, int64_t fallback) {
    auto value = placement.getAs<IntegerAttr>(key);
    return value ? value.getInt() : fallback;
  };
  fb::PlacementKind kind = text("kind") == "hash"    ? fb::PlacementKind_Hash
                           : text("kind") == "table" ? fb::PlacementKind_Table
                                                     : fb::PlacementKind_Dense;
  StringRef name = text("partitioner");
  fb::Partitioner partitioner = name == "fixed_shards"      ? fb::Partitioner_FixedShards
                                : name == "min_shard_bytes" ? fb::Partitioner_MinShardBytes
                                : name == "max_shard_bytes" ? fb::Partitioner_MaxShardBytes
                                                            : fb::Partitioner_None;
  return fb::CreatePlacement(fbb, kind, partitioner, std::max<int64_t>(1, number("num_shards", 1)),
                             number("min_shard_bytes", 256 << 10),
                             number("max_shard_bytes", 0), number("max_shards", 0),
                             text("row_split") == "mod");
}

flatbuffers::Offset<fb::Training> Serializer::training() {
  if (!plan.training)
    return 0;
  const TrainingInfo &info = *plan.training;
  flatbuffers::Offset<fb::ServerOptimizer> serverOptimizer = 0;
  if (info.strategy == "parameter_server") {
    OptimizerSettings o = OptimizerSettings::from(info.optimizerSpec);
    serverOptimizer = fb::CreateServerOptimizer(
        fbb, fbb.CreateString(o.kind), o.lr, o.momentum, o.nesterov, o.beta1, o.beta2,
        o.epsilon, o.weightDecay, o.initialAccumulator, o.lazySparse,
        fbb.CreateString(o.schedule), o.warmupSteps, o.decaySteps, o.minLr);
  }
  return fb::CreateTraining(fbb, fbb.CreateString(info.loss), fbb.CreateString(info.label),
                            fbb.CreateString(info.lossKind),
                            fbb.CreateString(info.prediction), info.batchSize,
                            fbb.CreateString(info.optimizer),
                            fbb.CreateString(info.stepVariable), info.accumulateSteps,
                            fbb.CreateString(info.strategy), serverOptimizer);
}

std::vector<uint8_t> Serializer::run(const std::vector<uint8_t> &kernelObject,
                                     const HostTarget &host, StringRef modelName) {
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  for (const Buffer &buffer : plan.buffers) {
    const Slot &slot = plan.slots[buffer.slot];
    std::vector<int64_t> shape(buffer.type.getShape().begin(), buffer.type.getShape().end());
    buffers.push_back(fb::CreateBuffer(fbb, regionOf(slot.region), slot.offset + buffer.offset,
                                       dtypeOf(buffer.type.getElementType()),
                                       fbb.CreateVector(shape)));
  }

  std::vector<flatbuffers::Offset<fb::Variable>> variables;
  for (const PlannedVariable &planned : plan.variables) {
    VariableOp op = planned.op;
    InitializerAttr init = op.getInitializer();
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> value = 0;
    if (init.getKind() == InitKind::constant)
      value = fbb.CreateVector(
          bytesOf(llvm::cast<DenseElementsAttr>(init.getValue())));
    variables.push_back(fb::CreateVariable(
        fbb, fbb.CreateString(op.getSymName().str()), planned.buffer,
        initKindOf(init.getKind()), init.getFirst(), init.getSecond(),
        init.getSeed(), value, op.getTrainable(), placementOf(planned.placement)));
  }

  std::vector<uint8_t> constants(plan.constantsBytes, 0);
  for (const auto &[slot, data] : plan.constantData) {
    std::vector<uint8_t> bytes = bytesOf(data);
    std::copy(bytes.begin(), bytes.end(), constants.begin() + plan.slots[slot].offset);
  }

  std::vector<flatbuffers::Offset<fb::Program>> programs = {initProgram()};
  for (const ProgramPlan &planned : plan.programs)
    programs.push_back(program(planned));
  auto trainingTable = training();
  std::vector<std::string> symbols;
  for (unsigned i = 0; i < plan.kernelFunctions; ++i)
    symbols.push_back(kernelSymbol(i));
  auto kernels = fb::CreateKernelLibrary(
      fbb, fbb.CreateString("elf-x86_64-shared"), fbb.CreateString(host.cpu),
      fbb.CreateString(host.features), fbb.CreateVector(kernelObject),
      fbb.CreateVectorOfStrings(symbols));

  bool skipsRowUpdates = llvm::any_of(plan.programs, [](const ProgramPlan &planned) {
    return llvm::any_of(planned.steps, [](const Step &step) {
      const auto *apply = std::get_if<SparseApplyStep>(&step);
      return apply && apply->when >= 0;
    });
  });
  bool sendsSkipMarkers = llvm::any_of(plan.programs, [](const ProgramPlan &planned) {
    bool pushes = llvm::any_of(planned.steps, [](const Step &step) {
      const auto *parameter = std::get_if<ParameterStep>(&step);
      return parameter && (parameter->kind == ParameterStep::Push ||
                           parameter->kind == ParameterStep::PushRows);
    });
    return pushes && llvm::any_of(planned.fetches, [](const NamedBuffer &fetch) {
             return llvm::StringRef(fetch.name) == kSkippedStepOutput;
           });
  });
  uint32_t version = sendsSkipMarkers ? kArtifactFormatVersionWithSkipMarkers
                     : skipsRowUpdates ? kArtifactFormatVersionWithWhen
                                       : kArtifactFormatVersion;
  auto artifact = fb::CreateArtifact(
      fbb, version,
      fbb.CreateString("cpu"), fbb.CreateString("kilnc 0.1"),
      fbb.CreateString(modelName.str()), plan.arenaBytes, plan.stateBytes,
      fbb.CreateVector(constants), fbb.CreateVector(buffers), fbb.CreateVector(variables),
      fbb.CreateVector(programs), kernels, trainingTable);
  fb::FinishArtifactBuffer(fbb, artifact);
  return std::vector<uint8_t>(fbb.GetBufferPointer(),
                              fbb.GetBufferPointer() + fbb.GetSize());
}

} // namespace

std::vector<uint8_t> serializeArtifact(const ExecutionPlan &plan,
                                       const std::vector<uint8_t> &kernelObject,
                                       const HostTarget &host, StringRef modelName) {
  return Serializer(plan).run(kernelObject, host, modelName);
}

LogicalResult writeArtifactFile(const std::vector<uint8_t> &flatbuffer, StringRef path,
                                Location loc) {
  std::string error;
  if (artifact::writeArtifactFile(path.str(), flatbuffer.data(), flatbuffer.size(), error))
    return success();
  // The message reads "PATH: error: REASON"; the location already names PATH.
  StringRef reason(error);
  size_t at = reason.find("error: ");
  if (at != StringRef::npos)
    reason = reason.drop_front(at + strlen("error: "));
  return emitError(FileLineColLoc::get(loc.getContext(), path, 0, 0)) << reason;
}

} // namespace kiln
