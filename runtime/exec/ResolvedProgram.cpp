//===- ResolvedProgram.cpp - A program, addresses resolved ----------------===//

#include "runtime/exec/ResolvedProgram.h"

#include "runtime/cpu/RowRanges.h"
#include "runtime/cpu/Threads.h"
#include "runtime/exec/VariableInit.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <tuple>

namespace kiln::exec {

using namespace artifact;

ResolvedProgram::SparseStep
ResolvedProgram::resolveSparseApply(const Artifact &root, const SparseApply &apply,
                                    const FeedSites &addresses) {
  SparseStep step;
  cpu::SparseHyperParameters &hyper = step.hyper;
  switch (apply.optimizer()) {
  case Optimizer_Momentum: hyper.optimizer = cpu::SparseOptimizer::Momentum; break;
  case Optimizer_Adam: hyper.optimizer = cpu::SparseOptimizer::Adam; break;
  case Optimizer_Adagrad: hyper.optimizer = cpu::SparseOptimizer::Adagrad; break;
  default: hyper.optimizer = cpu::SparseOptimizer::Sgd; break;
  }
  hyper.momentum = apply.momentum();
  hyper.nesterov = apply.nesterov();
  hyper.beta1 = apply.beta1();
  hyper.beta2 = apply.beta2();
  hyper.epsilon = apply.epsilon();
  hyper.weightDecay = apply.weight_decay();
  hyper.dense = apply.dense();
  const Buffer &param = *root.buffers()->Get(apply.param());
  const Buffer &rows = *root.buffers()->Get(apply.rows());
  cpu::SparseUpdate &update = step.update;
  update.param = reinterpret_cast<float *>(addresses[apply.param()]);
  if (apply.slots())
    for (uint32_t slot : *apply.slots())
      update.slots.push_back(reinterpret_cast<float *>(addresses[slot]));
  // update.indices and update.rows: the caller's sites (the step in place).
  update.indices64 = root.buffers()->Get(apply.indices())->dtype() == DType_I64;
  update.count = rows.shape()->Get(0);
  update.tableRows = param.shape()->Get(0);
  update.rowWidth = 1;
  for (flatbuffers::uoffset_t d = 1; d < param.shape()->size(); ++d)
    update.rowWidth *= param.shape()->Get(d);
  update.lr = reinterpret_cast<const float *>(addresses[apply.lr()]);
  update.step = reinterpret_cast<const float *>(addresses[apply.step()]);
  if (apply.when() >= 0)
    step.when = reinterpret_cast<const uint8_t *>(addresses[static_cast<uint32_t>(apply.when())]);
  step.gatheredTag = apply.gathered_tag();
  return step;
}

cpu::GemmShape gemmShapeOf(const Gemm &gemm) {
  cpu::GemmShape shape{gemm.batch(),       gemm.m(),           gemm.n(),       gemm.k(),
                       gemm.transpose_a(), gemm.transpose_b(), gemm.shared_b()};
  shape.precision = gemm.precision() == DType_BF16  ? cpu::GemmPrecision::BF16
                    : gemm.precision() == DType_F16 ? cpu::GemmPrecision::F16
                                                    : cpu::GemmPrecision::F32;
  return shape;
}

ResolvedProgram::ConvStep
ResolvedProgram::resolveConvolution(const Artifact &root, const Convolution &conv,
                                    const FeedSites &addresses, size_t index) {
  auto shapeOf = [&](uint32_t buffer) {
    const auto *shape = root.buffers()->Get(buffer)->shape();
    return std::vector<int64_t>(shape->begin(), shape->end());
  };
  auto list = [](const flatbuffers::Vector<int64_t> *values) {
    return std::vector<int64_t>(values->begin(), values->end());
  };
  cpu::ConvolutionShape shape;
  shape.kind = conv.kind() == ConvolutionKind_BackwardData ? cpu::ConvolutionKind::BackwardData
               : conv.kind() == ConvolutionKind_BackwardFilter
                   ? cpu::ConvolutionKind::BackwardFilter
                   : cpu::ConvolutionKind::Forward;
  shape.input = shapeOf(conv.input());
  shape.filter = shapeOf(conv.filter());
  shape.output = shapeOf(conv.output());
  shape.strides = list(conv.strides());
  shape.dilations = list(conv.dilations());
  shape.padLow = list(conv.pad_low());
  shape.padHigh = list(conv.pad_high());
  shape.groups = conv.groups();
  shape.bf16 = conv.precision() == DType_BF16;
  auto address = [&](uint32_t buffer) { return reinterpret_cast<float *>(addresses[buffer]); };
  std::string problem;
  ConvStep step{cpu::Convolution::create(shape, address(conv.input()), address(conv.filter()),
                                         address(conv.output()), problem)};
  if (!step.convolution && resolveError_.empty())
    resolveError_ = "instructions[" + std::to_string(index) + "] (Convolution): " + problem;
  return step;
}

std::pair<float *, size_t>
ResolvedProgram::inPlaceSpan(const flatbuffers::Vector<uint32_t> &inputs,
                             const flatbuffers::Vector<uint32_t> &outputs,
                             const FeedSites &addresses,
                             const VerifiedArtifact &artifact) {
  if (inputs.size() == 0 || inputs.size() != outputs.size())
    return {nullptr, 0};
  uint8_t *begin = addresses[inputs.Get(0)], *end = begin;
  for (flatbuffers::uoffset_t i = 0; i < inputs.size(); ++i) {
    uint8_t *at = addresses[inputs.Get(i)];
    // In order, each within an alignment's padding of the one before.
    if (inputs.Get(i) != outputs.Get(i) || at < end || at - end >= 64)
      return {nullptr, 0};
    end = at + artifact.buffer(inputs.Get(i)).byteSize;
  }
  return {reinterpret_cast<float *>(begin), static_cast<size_t>(end - begin) / sizeof(float)};
}

ResolvedProgram::ResolvedProgram(const Executable &executable,
                                 const Program &program,
                                 const BufferAddresses &buffers,
                                 collective::AllReduceBuckets &buckets,
                                 ParameterAccess *const *parameters)
    : buckets_(&buckets), parameters_(parameters), feeds_(buffers, program) {
  // Every address through feeds_: a feed read where pointFeed can follow
  // is a site, any other use fixes it in its buffer.
  const FeedSites &addresses = feeds_;
  const auto *instructions = program.instructions();
  if (!instructions)
    return;
  const auto *types = program.instructions_type();
  const VerifiedArtifact &artifact = executable.artifact();
  const Artifact &root = artifact.root();

  // Argument arrays first, so that the steps can point into them.
  size_t argCount = 0;
  for (flatbuffers::uoffset_t i = 0; i < instructions->size(); ++i) {
    const KernelCall *call =
        types->Get(i) == Instruction_KernelCall    ? instructions->GetAs<KernelCall>(i)
        : types->Get(i) == Instruction_BlockedGemm ? instructions->GetAs<BlockedGemm>(i)->update()
                                                   : nullptr;
    if (call && call->args())
      argCount += call->args()->size();
  }
  kernelArgs_.reserve(argCount);
  // One scratch for the converted inputs of every bf16 or f16 product.
  size_t scratchBytes = 0;
  for (flatbuffers::uoffset_t i = 0; i < instructions->size(); ++i)
    if (const Gemm *gemm = lowPrecisionProduct(program, i))
      scratchBytes =
          std::max(scratchBytes, cpu::LowPrecisionGemm::scratchBytes(gemmShapeOf(*gemm)));
  lowPrecisionScratch_.resize((scratchBytes + 63) / 64);
  void *scratch = lowPrecisionScratch_.data();
  placeCopySlots(program);

  steps_.reserve(instructions->size());
  for (flatbuffers::uoffset_t i = 0; i < instructions->size(); ++i) {
    switch (static_cast<Instruction>(types->Get(i))) {
    case Instruction_KernelCall: {
      const KernelCall *call = instructions->GetAs<KernelCall>(i);
      void **args = kernelArgs_.data() + kernelArgs_.size();
      pushKernelArgs(*call, addresses);
      KernelStep step;
      step.function = executable.kernel(call->kernel());
      step.args = args;
      // Executable::load has checked the row entry. One thread calls the
      // whole kernel: no range to pass.
      if (call->rows() > 0 && cpu::rowThreads(static_cast<int64_t>(call->rows())) > 1) {
        step.rowFunction = executable.rowKernel(call->kernel());
        step.argCount = call->args() ? call->args()->size() : 0;
        step.rows = static_cast<int64_t>(call->rows());
      }
      steps_.push_back(step);
      break;
    }
    case Instruction_Gemm:
      addGemm(root, *instructions->GetAs<Gemm>(i), i, "Gemm", addresses, scratch);
      break;
    case Instruction_BlockedGemm: {
      const BlockedGemm *blocked = instructions->GetAs<BlockedGemm>(i);
      if (blocked->gemm()->precision() != DType_F32) {
        // A 16-bit product with its epilogue (one block): the product's
        // parts each run it on their rows (LowPrecisionGemm::setEpilogue).
        GemmStep &step = addGemm(root, *blocked->gemm(), i, "BlockedGemm", addresses, scratch);
        const KernelCall &update = *blocked->update();
        cpu::RowEpilogue epilogue;
        epilogue.rowKernel = executable.rowKernel(update.kernel());
        epilogue.args = kernelArgs_.data() + kernelArgs_.size();
        pushKernelArgs(update, addresses);
        epilogue.argCount = update.args()->size();
        epilogue.rowsPerKernelRow = blocked->rows_per_update_row();
        if (step.lowPrecision)
          step.lowPrecision->setEpilogue(epilogue);
        break;
      }
      steps_.push_back(resolveBlockedGemm(executable, *blocked, addresses));
      cpu::BlockedProduct &product = std::get<BlockedGemmStep>(steps_.back()).product;
      product.a = reinterpret_cast<const float *>(addresses.site(blocked->gemm()->a(), &product.a));
      product.b = reinterpret_cast<const float *>(addresses.site(blocked->gemm()->b(), &product.b));
      break;
    }
    case Instruction_Copy: {
      const Copy *copy = instructions->GetAs<Copy>(i);
      steps_.push_back(CopyStep{addresses[copy->dst()], addresses[copy->src()],
                                artifact.buffer(copy->src()).byteSize});
      break;
    }
    case Instruction_InitVariable: {
      const Variable *variable = root.variables()->Get(
          instructions->GetAs<InitVariable>(i)->variable());
      const BufferLayout &layout = artifact.buffer(variable->buffer());
      steps_.push_back(
          InitStep{variable, root.buffers()->Get(variable->buffer()),
                   layout.elementCount, addresses[variable->buffer()]});
      break;
    }
    case Instruction_SparseApply: {
      const SparseApply *apply = instructions->GetAs<SparseApply>(i);
      steps_.push_back(resolveSparseApply(root, *apply, addresses));
      cpu::SparseUpdate &update = std::get<SparseStep>(steps_.back()).update;
      update.indices = addresses.site(apply->indices(), &update.indices);
      update.rows = reinterpret_cast<const float *>(addresses.site(apply->rows(), &update.rows));
      break;
    }
    case Instruction_Convolution:
      steps_.push_back(
          resolveConvolution(root, *instructions->GetAs<Convolution>(i), addresses, i));
      break;
    case Instruction_AllReduceStart: {
      const AllReduceStart *start = instructions->GetAs<AllReduceStart>(i);
      AllReduceStartStep step{start->tag(), {}};
      for (uint32_t buffer : *start->inputs())
        step.inputs.push_back({addresses[buffer], artifact.buffer(buffer).byteSize});
      // The validator has checked that a later wait has this tag.
      for (flatbuffers::uoffset_t j = i + 1; j < instructions->size(); ++j)
        if (types->Get(j) == Instruction_AllReduceWait &&
            instructions->GetAs<AllReduceWait>(j)->tag() == start->tag()) {
          std::tie(step.span, step.count) = inPlaceSpan(
              *start->inputs(), *instructions->GetAs<AllReduceWait>(j)->outputs(), addresses,
              artifact);
          break;
        }
      steps_.push_back(std::move(step));
      break;
    }
    case Instruction_AllReduceWait: {
      const AllReduceWait *wait = instructions->GetAs<AllReduceWait>(i);
      // The validator has checked that an earlier start has this tag.
      bool mean = false;
      std::pair<float *, size_t> span{nullptr, 0};
      for (flatbuffers::uoffset_t j = 0; j < i; ++j)
        if (types->Get(j) == Instruction_AllReduceStart &&
            instructions->GetAs<AllReduceStart>(j)->tag() == wait->tag()) {
          const AllReduceStart *start = instructions->GetAs<AllReduceStart>(j);
          mean = start->mean();
          span = inPlaceSpan(*start->inputs(), *wait->outputs(), addresses, artifact);
        }
      AllReduceWaitStep step{wait->tag(), mean, {}, span.first, span.second};
      for (uint32_t buffer : *wait->outputs())
        step.outputs.push_back({addresses[buffer], artifact.buffer(buffer).byteSize});
      steps_.push_back(std::move(step));
      break;
    }
    case Instruction_SparseAllReduceStart: {
      const SparseAllReduceStart *start = instructions->GetAs<SparseAllReduceStart>(i);
      steps_.push_back(SparseAllReduceStartStep{
          start->tag(),
          {addresses[start->indices()], artifact.buffer(start->indices()).byteSize},
          {addresses[start->rows()], artifact.buffer(start->rows()).byteSize}});
      break;
    }
    case Instruction_SparseAllReduceWait: {
      uint32_t tag = instructions->GetAs<SparseAllReduceWait>(i)->tag();
      bool mean = false;
      for (flatbuffers::uoffset_t j = 0; j < i; ++j)
        if (types->Get(j) == Instruction_SparseAllReduceStart &&
            instructions->GetAs<SparseAllReduceStart>(j)->tag() == tag)
          mean = instructions->GetAs<SparseAllReduceStart>(j)->mean();
      steps_.push_back(SparseAllReduceWaitStep{tag, mean});
      break;
    }
    case Instruction_PsPull: {
      const PsPull *pull = instructions->GetAs<PsPull>(i);
      addPull(PullOrder{pull->variable(), reinterpret_cast<float *>(addresses[pull->output()])});
      break;
    }
    case Instruction_PsPush: {
      const PsPush *push = instructions->GetAs<PsPush>(i);
      steps_.push_back(
          ParameterStep{Instruction_PsPush, push->variable(), addresses[push->gradient()]});
      break;
    }
    case Instruction_PsPullRows: {
      const PsPullRows *pull = instructions->GetAs<PsPullRows>(i);
      const BufferLayout &ids = artifact.buffer(pull->ids());
      addPull(PullOrder{pull->variable(), reinterpret_cast<float *>(addresses[pull->output()]),
                        addresses[pull->ids()],
                        root.buffers()->Get(pull->ids())->dtype() == DType_I64,
                        static_cast<int64_t>(ids.elementCount)});
      break;
    }
    case Instruction_PsPushRows: {
      const PsPushRows *push = instructions->GetAs<PsPushRows>(i);
      const BufferLayout &ids = artifact.buffer(push->ids());
      steps_.push_back(ParameterStep{Instruction_PsPushRows, push->variable(),
                                     addresses[push->rows()], addresses[push->ids()],
                                     root.buffers()->Get(push->ids())->dtype() == DType_I64,
                                     static_cast<int64_t>(ids.elementCount)});
      break;
    }
    case Instruction_NONE:
      break; // The validator refuses these.
    }
  }
  // The measured steps take their trial windows in turn (ThreadChoice.h).
  std::vector<cpu::ThreadChoice *> measured;
  for (const Step &step : steps_)
    if (cpu::ThreadChoice *choice = threadChoice(step))
      measured.push_back(choice);
  for (size_t position = 0; position < measured.size(); ++position)
    measured[position]->stagger(cpu::ThreadChoice::groupOf(position, measured.size()));
}

const Gemm *lowPrecisionProduct(const Program &program, size_t index) {
  const auto *instructions = program.instructions();
  if (!instructions || index >= instructions->size())
    return nullptr;
  auto type = program.instructions_type()->GetEnum<Instruction>(index);
  const Gemm *gemm = type == Instruction_Gemm ? instructions->GetAs<Gemm>(index)
                     : type == Instruction_BlockedGemm
                         ? instructions->GetAs<BlockedGemm>(index)->gemm()
                         : nullptr;
  return gemm && gemm->precision() != DType_F32 ? gemm : nullptr;
}

ResolvedProgram::GemmStep &ResolvedProgram::addGemm(const Artifact &root, const Gemm &gemm,
                                                    size_t index, const char *kind,
                                                    const FeedSites &addresses, void *scratch) {
  cpu::GemmShape shape = gemmShapeOf(gemm);
  bool f32 = shape.precision == cpu::GemmPrecision::F32;
  steps_.push_back(GemmStep{shape, nullptr, nullptr,
                            reinterpret_cast<float *>(addresses[gemm.c()]), nullptr, {}, kind});
  GemmStep &step = std::get<GemmStep>(steps_.back());
  // A 16-bit product's converter keeps A and B itself: fixed.
  step.a = reinterpret_cast<const float *>(f32 ? addresses.site(gemm.a(), &step.a)
                                               : addresses[gemm.a()]);
  step.b = reinterpret_cast<const float *>(f32 ? addresses.site(gemm.b(), &step.b)
                                               : addresses[gemm.b()]);
  if (f32)
    return step;
  std::string problem;
  cpu::ConvertedCopySlot slotA, slotB;
  if (!copySlotFor(gemm.a_copy(), shape.elementsA(), index, kind, slotA) ||
      !copySlotFor(gemm.b_copy(), shape.elementsB(), index, kind, slotB))
    return step;
  // An input a kernel rounded already (the validator allows only the
  // product's own 16-bit type, and no copy slot with it).
  for (auto [input, slot] : {std::pair{gemm.a(), &slotA}, std::pair{gemm.b(), &slotB}})
    if (root.buffers()->Get(input)->dtype() != DType_F32)
      *slot = {addresses[input], /*convert=*/false, /*isInput=*/true};
  step.lowPrecision = cpu::LowPrecisionGemm::create(shape, step.a, step.b, step.c,
                                                    cpu::nativeLowPrecisionAllowed(), scratch,
                                                    problem, slotA, slotB);
  if (!step.lowPrecision && resolveError_.empty())
    resolveError_ = "instructions[" + std::to_string(index) + "] (" + kind + "): " + problem;
  return step;
}

ResolvedProgram::BlockedGemmStep
ResolvedProgram::resolveBlockedGemm(const Executable &executable, const BlockedGemm &blocked,
                                    const FeedSites &addresses) {
  // The validator has checked both parts, the block and the row entry.
  const Gemm &gemm = *blocked.gemm();
  const KernelCall &update = *blocked.update();
  BlockedGemmStep step;
  cpu::BlockedProduct &product = step.product;
  product.shape = gemmShapeOf(gemm);
  // product.a and product.b: the caller's sites (the step in place).
  product.block = reinterpret_cast<float *>(addresses[gemm.c()]);
  product.blockRows = blocked.block_rows();
  product.rowKernel = executable.rowKernel(update.kernel());
  product.args = kernelArgs_.data() + kernelArgs_.size();
  pushKernelArgs(update, addresses);
  product.argCount = update.args()->size();
  product.blockArg = blocked.block_arg();
  product.rowsPerKernelRow = blocked.rows_per_update_row();
  return step;
}

void ResolvedProgram::pushKernelArgs(const KernelCall &call, const FeedSites &addresses) {
  if (!call.args())
    return;
  // Outputs not stated (an older kilnc): every argument may be written.
  uint32_t inputs = call.outputs() ? call.args()->size() - call.outputs() : 0;
  for (uint32_t i = 0; i < call.args()->size(); ++i) {
    uint32_t buffer = call.args()->Get(i);
    kernelArgs_.push_back(nullptr);
    kernelArgs_.back() = i < inputs ? addresses.site(buffer, &kernelArgs_.back()) : addresses[buffer];
  }
}

void ResolvedProgram::addPull(PullOrder order) {
  if (steps_.empty() || !std::holds_alternative<PullGroupStep>(steps_.back()))
    steps_.push_back(PullGroupStep{});
  std::get<PullGroupStep>(steps_.back()).orders.push_back(order);
}

const std::vector<PullOrder> *ResolvedProgram::firstPulls() const {
  if (steps_.empty())
    return nullptr;
  const auto *group = std::get_if<PullGroupStep>(&steps_.front());
  return group ? &group->orders : nullptr;
}

ParameterAccess *ResolvedProgram::connectedServers(std::string &error) const {
  ParameterAccess *parameters = *parameters_;
  if (!parameters)
    error = "the program reaches parameter servers, and none are connected";
  return parameters;
}

bool ResolvedProgram::runParameterStep(const ParameterStep &step, std::string &error) const {
  ParameterAccess *parameters = connectedServers(error);
  if (!parameters)
    return false;
  if (step.kind == Instruction_PsPush)
    return parameters->pushDense(step.variable, static_cast<const float *>(step.data), error);
  return parameters->pushRows(step.variable, step.ids, step.ids64, step.count,
                              static_cast<const float *>(step.data), error);
}

void ResolvedProgram::placeCopySlots(const Program &program) {
  struct Range {
    size_t first = SIZE_MAX, last = 0;
    size_t bytes = 0;
  };
  std::map<int, Range> ranges;
  const auto *instructions = program.instructions();
  for (flatbuffers::uoffset_t i = 0; instructions && i < instructions->size(); ++i) {
    const Gemm *gemm = lowPrecisionProduct(program, i);
    if (!gemm)
      continue;
    cpu::GemmShape shape = gemmShapeOf(*gemm);
    for (auto [slot, elements] : {std::pair{gemm->a_copy(), shape.elementsA()},
                                  std::pair{gemm->b_copy(), shape.elementsB()}}) {
      if (slot < 0)
        continue;
      Range &range = ranges[slot];
      range.first = std::min<size_t>(range.first, i);
      range.last = std::max<size_t>(range.last, i);
      range.bytes = std::max(range.bytes, static_cast<size_t>(elements) * sizeof(float));
    }
  }
  std::vector<std::pair<int, Range>> order(ranges.begin(), ranges.end());
  std::sort(order.begin(), order.end(),
            [](const auto &a, const auto &b) { return a.second.first < b.second.first; });
  std::vector<size_t> blockFreeAfter; // The last reader of each block's slots.
  std::vector<size_t> blockBytes;
  std::vector<int> blockOf(order.size());
  for (size_t s = 0; s < order.size(); ++s) {
    const Range &range = order[s].second;
    size_t block = 0;
    while (block < blockFreeAfter.size() && blockFreeAfter[block] >= range.first)
      ++block;
    if (block == blockFreeAfter.size()) {
      blockFreeAfter.push_back(0);
      blockBytes.push_back(0);
    }
    blockFreeAfter[block] = range.last;
    blockBytes[block] = std::max(blockBytes[block], range.bytes);
    blockOf[s] = static_cast<int>(block);
  }
  copySlotStorage_.resize(blockBytes.size());
  for (size_t b = 0; b < blockBytes.size(); ++b)
    copySlotStorage_[b].resize((blockBytes[b] + 63) / 64);
  for (size_t s = 0; s < order.size(); ++s)
    copySlots_[order[s].first].copy = copySlotStorage_[blockOf[s]].data();
}

bool ResolvedProgram::copySlotFor(int slot, int64_t elements, size_t index, const char *kind,
                                  cpu::ConvertedCopySlot &out) {
  if (slot < 0)
    return true;
  CopySlot &storage = copySlots_[slot]; // placed by placeCopySlots
  bool first = !storage.claimed;
  if (first) {
    storage.claimed = true;
    storage.elements = elements;
  } else if (storage.elements != elements) {
    if (resolveError_.empty())
      resolveError_ = "instructions[" + std::to_string(index) + "] (" + kind + "): copy slot " +
                      std::to_string(slot) + " holds a tensor of " +
                      std::to_string(storage.elements) + " elements; this product's has " +
                      std::to_string(elements);
    return false;
  }
  out.copy = storage.copy;
  out.convert = first;
  return true;
}

void ResolvedProgram::startProfiling(int64_t warmRuns) {
  profiling_ = true;
  warmRuns_ = warmRuns;
  runs_ = 0;
  stepSeconds_.assign(steps_.size(), 0.0);
}

cpu::ThreadChoice *ResolvedProgram::threadChoice(const Step &step) {
  if (const auto *kernel = std::get_if<KernelStep>(&step); kernel && kernel->rowFunction)
    return &kernel->threads;
  if (const auto *gemm = std::get_if<GemmStep>(&step))
    return &gemm->threads;
  if (const auto *blocked = std::get_if<BlockedGemmStep>(&step))
    return &blocked->threads;
  if (const auto *sparse = std::get_if<SparseStep>(&step))
    return &sparse->threads;
  return nullptr;
}

bool ResolvedProgram::measuresThreads(const GemmStep &gemm) {
  return (!gemm.lowPrecision || !gemm.lowPrecision->native() || gemm.lowPrecision->splits()) &&
         !cpu::fixedGemmThreshold();
}

int ResolvedProgram::threadsInUse(int available) const {
  int most = 1;
  for (const Step &step : steps_) {
    int threads = available;
    const auto *gemm = std::get_if<GemmStep>(&step);
    if (const cpu::ThreadChoice *choice = threadChoice(step);
        choice && (!gemm || measuresThreads(*gemm))) {
      if (!choice->chosen())
        return 0;
      threads = choice->chosen();
    } else if (std::holds_alternative<KernelStep>(step) || std::holds_alternative<CopyStep>(step) ||
               std::holds_alternative<InitStep>(step)) {
      threads = 1; // A kernel without rows to split, or a copy.
    }
    most = std::max(most, threads);
  }
  return most;
}

ProgramProfile ResolvedProgram::profile() const {
  std::vector<int> threads(steps_.size(), 0);
  std::vector<bool> convolutionInBF16(steps_.size(), false), emulated(steps_.size(), false);
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (const cpu::ThreadChoice *choice = threadChoice(steps_[i]))
      threads[i] = choice->chosen();
    if (const auto *conv = std::get_if<ConvStep>(&steps_[i]))
      convolutionInBF16[i] = conv->convolution && conv->convolution->bf16();
    if (const auto *gemm = std::get_if<GemmStep>(&steps_[i]))
      emulated[i] = gemm->lowPrecision && !gemm->lowPrecision->native();
  }
  return {warmRuns_, std::max<int64_t>(0, runs_ - warmRuns_), stepSeconds_, std::move(threads),
          std::move(convolutionInBF16), std::move(emulated)};
}

namespace {

/// Adds the time from its making to its end to `*seconds` (a step's, when
/// profiled; null: nothing, and no clock read).
class StepTimer {
public:
  explicit StepTimer(double *seconds)
      : seconds_(seconds), begin_(seconds ? std::chrono::steady_clock::now()
                                          : std::chrono::steady_clock::time_point()) {}
  ~StepTimer() {
    if (seconds_)
      *seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_)
                       .count();
  }

private:
  double *seconds_;
  std::chrono::steady_clock::time_point begin_;
};

/// Calls `body(threads)` with the threads `choice` gives the step (the
/// clock is read only when the run is one of its trials) and returns what
/// it returns.
template <typename Body>
bool runOnChosenThreads(cpu::ThreadChoice &choice, int available, bool splittable, Body body) {
  int threads = choice.next(available, splittable);
  if (!choice.measuring())
    return body(threads);
  auto begin = std::chrono::steady_clock::now();
  bool ok = body(threads);
  choice.record(threads, available,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  return ok;
}

} // namespace

bool ResolvedProgram::run(std::string &error) const {
  if (!resolveError_.empty()) {
    error = resolveError_;
    return false;
  }
  bool timed = profiling_ && runs_++ >= warmRuns_;
  for (size_t i = 0; i < steps_.size(); ++i) {
    StepTimer timer(timed ? &stepSeconds_[i] : nullptr);
    const Step &step = steps_[i];
    if (const auto *kernel = std::get_if<KernelStep>(&step)) {
      if (!kernel->rowFunction) {
        kernel->function(kernel->args);
        continue;
      }
      // Rows split over the threads, or the whole kernel on this one,
      // whichever its trial runs found faster.
      runOnChosenThreads(kernel->threads, cpu::rowThreads(kernel->rows), true, [&](int threads) {
        if (threads > 1)
          cpu::runRowRanges(kernel->rowFunction, kernel->args, kernel->argCount, kernel->rows);
        else
          kernel->function(kernel->args);
        return true;
      });
    } else if (const auto *gemm = std::get_if<GemmStep>(&step)) {
      std::string problem;
      // Unmeasured: threads 0 (oneDNN's own, or the fixed threshold's).
      bool measured = measuresThreads(*gemm);
      auto multiply = [&](int threads) {
        return gemm->lowPrecision
                   ? gemm->lowPrecision->run(problem, threads)
                   : cpu::gemm(gemm->shape, gemm->a, gemm->b, gemm->c, problem, threads);
      };
      int available = cpu::availableThreads();
      bool ok = measured ? runOnChosenThreads(gemm->threads, available,
                                              gemm->threads.chosen() ||
                                                  cpu::canSplitGemm(gemm->shape, available),
                                              multiply)
                         : multiply(0);
      if (!ok) {
        error = "instructions[" + std::to_string(i) + "] (" + gemm->kind + "): " + problem;
        return false;
      }
    } else if (const auto *blocked = std::get_if<BlockedGemmStep>(&step)) {
      std::string problem;
      int available = cpu::availableThreads();
      bool splittable =
          blocked->threads.chosen() || cpu::canSplitBlocks(blocked->product, available);
      if (!runOnChosenThreads(blocked->threads, available, splittable, [&](int threads) {
            return cpu::runBlockedProduct(blocked->product, threads, problem);
          })) {
        error = "instructions[" + std::to_string(i) + "] (BlockedGemm): " + problem;
        return false;
      }
    } else if (const auto *conv = std::get_if<ConvStep>(&step)) {
      std::string problem;
      if (!conv->convolution->run(problem)) {
        error = "instructions[" + std::to_string(i) + "] (Convolution): " + problem;
        return false;
      }
    } else if (const auto *copy = std::get_if<CopyStep>(&step)) {
      std::memmove(copy->dst, copy->src, copy->size);
    } else if (const auto *sparse = std::get_if<SparseStep>(&step)) {
      // Split by ids over the threads, or on this one, whichever its trial
      // runs found faster (the same bits either way).
      auto apply = [&](const cpu::SparseUpdate &update) {
        if (sparse->when && *sparse->when == 0)
          return;
        int available = cpu::availableThreads();
        runOnChosenThreads(sparse->threads, available,
                           sparse->threads.chosen() ||
                               cpu::canSplitSparse(sparse->hyper, update, available),
                           [&](int threads) {
                             cpu::sparseApply(sparse->hyper, update, sparseScratches_, threads);
                             return true;
                           });
      };
      if (sparse->gatheredTag < 0) {
        apply(sparse->update);
        continue;
      }
      collective::AllReduceBuckets::Gathered all =
          buckets_->gathered(static_cast<uint32_t>(sparse->gatheredTag));
      cpu::SparseUpdate update = sparse->update;
      update.indices = all.ids;
      update.rows = all.rows;
      update.count *= static_cast<int64_t>(all.replicas);
      apply(update);
    } else if (const auto *start = std::get_if<SparseAllReduceStartStep>(&step)) {
      std::string problem;
      if (!buckets_->startGather(start->tag, start->ids, start->rows, problem)) {
        error = "instructions[" + std::to_string(i) + "] (SparseAllReduceStart): " + problem;
        return false;
      }
    } else if (const auto *wait = std::get_if<SparseAllReduceWaitStep>(&step)) {
      std::string problem;
      if (!buckets_->waitGather(wait->tag, wait->mean, problem)) {
        error = "instructions[" + std::to_string(i) + "] (SparseAllReduceWait): " + problem;
        return false;
      }
    } else if (const auto *start = std::get_if<AllReduceStartStep>(&step)) {
      std::string problem;
      if (!(start->span ? buckets_->startInPlace(start->tag, start->span, start->count, problem)
                        : buckets_->start(start->tag, start->inputs, problem))) {
        error = "instructions[" + std::to_string(i) + "] (AllReduceStart): " + problem;
        return false;
      }
    } else if (const auto *wait = std::get_if<AllReduceWaitStep>(&step)) {
      std::string problem;
      if (!(wait->span
                ? buckets_->waitInPlace(wait->tag, wait->mean, wait->span, wait->count, problem)
                : buckets_->wait(wait->tag, wait->mean, wait->outputs, problem))) {
        error = "instructions[" + std::to_string(i) + "] (AllReduceWait): " + problem;
        return false;
      }
    } else if (const auto *group = std::get_if<PullGroupStep>(&step)) {
      std::string problem;
      ParameterAccess *parameters = connectedServers(problem);
      if (!parameters || !parameters->pull(group->orders, problem)) {
        error = "instructions[" + std::to_string(i) + "] (" +
                std::to_string(group->orders.size()) + " pulls): " + problem;
        return false;
      }
    } else if (const auto *parameter = std::get_if<ParameterStep>(&step)) {
      std::string problem;
      if (!runParameterStep(*parameter, problem)) {
        error = "instructions[" + std::to_string(i) + "] (" +
                EnumNameInstruction(parameter->kind) + "): " + problem;
        return false;
      }
    } else {
      const auto &init = std::get<InitStep>(step);
      initializeVariable(*init.variable, *init.buffer, init.elementCount,
                         init.data);
    }
  }
  return true;
}

} // namespace kiln::exec
