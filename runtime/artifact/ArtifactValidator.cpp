//===- ArtifactValidator.cpp - Cross-reference checks ---------------------===//

#include "runtime/artifact/ArtifactValidator.h"

#include "runtime/artifact/DTypes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

namespace kiln::artifact {

namespace {

constexpr uint64_t kAlignment = 64;

std::string indexed(std::string_view field, size_t index) {
  return std::string(field) + "[" + std::to_string(index) + "]";
}

/// "variables[2] ('w1')", or just "variables[2]" without a name.
std::string named(std::string_view field, size_t index,
                  const flatbuffers::String *name) {
  std::string text = indexed(field, index);
  if (name && name->size())
    text += " ('" + name->str() + "')";
  return text;
}

const char *regionName(Region region) {
  switch (region) {
  case Region_Arena:
    return "arena";
  case Region_State:
    return "state";
  case Region_Constants:
    return "constants";
  case Region_Remote:
    return "remote";
  }
  return "unknown";
}

const char *instructionName(Instruction type) {
  switch (type) {
  case Instruction_KernelCall:
    return "KernelCall";
  case Instruction_Gemm:
    return "Gemm";
  case Instruction_Copy:
    return "Copy";
  case Instruction_InitVariable:
    return "InitVariable";
  case Instruction_SparseApply:
    return "SparseApply";
  case Instruction_Convolution:
    return "Convolution";
  case Instruction_AllReduceStart:
    return "AllReduceStart";
  case Instruction_AllReduceWait:
    return "AllReduceWait";
  case Instruction_SparseAllReduceStart:
    return "SparseAllReduceStart";
  case Instruction_SparseAllReduceWait:
    return "SparseAllReduceWait";
  case Instruction_PsPull:
    return "PsPull";
  case Instruction_PsPullRows:
    return "PsPullRows";
  case Instruction_PsPush:
    return "PsPush";
  case Instruction_PsPushRows:
    return "PsPushRows";
  case Instruction_BlockedGemm:
    return "BlockedGemm";
  case Instruction_NONE:
    break;
  }
  return "unknown";
}

bool overlap(const BufferLayout &x, const BufferLayout &y) {
  return x.region == y.region && x.byteSize && y.byteSize &&
         x.offset < y.offset + y.byteSize && y.offset < x.offset + x.byteSize;
}

/// Product of `factors`, or false when it overflows 64 bits.
bool multiply(std::initializer_list<uint64_t> factors, uint64_t &product) {
  product = 1;
  for (uint64_t factor : factors)
    if (__builtin_mul_overflow(product, factor, &product))
      return false;
  return true;
}

template <typename T>
flatbuffers::uoffset_t sizeOf(const flatbuffers::Vector<T> *vector) {
  return vector ? vector->size() : 0;
}

class Validator {
public:
  Validator(const Artifact &artifact, const uint8_t *flatbuffer,
            std::vector<BufferLayout> &buffers, std::string &error)
      : artifact_(artifact), flatbuffer_(flatbuffer), buffers_(buffers),
        error_(error) {}

  bool run() {
    return checkBuffers() && checkVariables() && checkKernels() &&
           checkPrograms();
  }

private:
  bool fail(const std::string &field, const std::string &problem) {
    error_ = field + ": " + problem;
    return false;
  }

  uint64_t regionSize(Region region) const {
    switch (region) {
    case Region_Arena:
      return artifact_.arena_bytes();
    case Region_State:
      return artifact_.state_bytes();
    case Region_Constants:
      return sizeOf(artifact_.constants());
    case Region_Remote:
      return 0;
    }
    return 0;
  }

  bool checkBuffers();
  bool checkBuffer(const std::string &field, const Buffer &buffer,
                   BufferLayout &layout);
  bool checkBufferIndex(const std::string &field, uint32_t index);
  bool checkWritable(const std::string &field, uint32_t index);
  bool checkVariables();
  bool checkVariable(const std::string &field, const Variable &variable);
  bool checkInitializer(const std::string &field, const Variable &variable);
  bool checkKernels();
  bool checkPrograms();
  bool checkProgram(const std::string &field, const Program &program);
  bool checkInstruction(const std::string &field, Instruction type,
                        const void *instruction);
  bool checkKernelCall(const std::string &field, const KernelCall &call);
  /// `rowsOfC`: the rows buffer `c` holds; 0: all of them (m).
  bool checkGemm(const std::string &field, const Gemm &gemm, int64_t rowsOfC = 0);
  bool checkBlockedGemm(const std::string &field, const BlockedGemm &blocked);
  bool checkGemmOperand(const std::string &field, uint32_t index,
                        std::initializer_list<uint64_t> dims,
                        const std::string &expected, DType rounded);
  bool checkCopy(const std::string &field, const Copy &copy);
  bool checkSparseApply(const std::string &field, const SparseApply &apply);
  bool checkConvolution(const std::string &field, const Convolution &conv);
  /// Each AllReduceStart of `program` has a distinct tag and one later
  /// AllReduceWait whose outputs match its inputs.
  bool checkCollectives(const std::string &field, const Program &program);
  /// PsPull, PsPullRows, PsPush, PsPushRows.
  bool checkParameterServerAccess(const std::string &field, Instruction type,
                                  const void *instruction);
  /// The parameter-server variable `index` names, or null after failing.
  const Variable *remoteVariable(const std::string &field, uint32_t index, bool rows);
  /// That buffer `index` holds f32 of `shape`.
  bool checkShape(const std::string &field, uint32_t index, const std::vector<int64_t> &shape);
  /// Checks that buffer `index` exists and has `dtype` (one of `dtypes`).
  bool checkDType(const std::string &field, uint32_t index,
                  std::initializer_list<DType> dtypes);
  bool checkBindings(
      const std::string &field,
      const flatbuffers::Vector<flatbuffers::Offset<Binding>> *bindings,
      bool feeds);

  const Artifact &artifact_;
  const uint8_t *flatbuffer_;
  std::vector<BufferLayout> &buffers_;
  std::string &error_;
};

bool Validator::checkBuffers() {
  const auto *buffers = artifact_.buffers();
  buffers_.assign(sizeOf(buffers), BufferLayout{});
  for (flatbuffers::uoffset_t i = 0; i < sizeOf(buffers); ++i)
    if (!checkBuffer(indexed("buffers", i), *buffers->Get(i), buffers_[i]))
      return false;
  return true;
}

bool Validator::checkBuffer(const std::string &field, const Buffer &buffer,
                            BufferLayout &layout) {
  if (buffer.region() < Region_MIN || buffer.region() > Region_MAX)
    return fail(field + ".region",
                "unknown region " + std::to_string(buffer.region()));
  if (!isKnownDType(buffer.dtype()))
    return fail(field + ".dtype",
                "unknown dtype " + std::to_string(buffer.dtype()));
  uint64_t count = 1;
  const auto *shape = buffer.shape();
  // The FlatBuffers verifier aligns a vector's length, not its 8-byte
  // elements; reading misaligned ones would be undefined behaviour (an
  // empty vector has none to read, and writers may leave it 4-aligned).
  if (shape && shape->size() > 0 &&
      reinterpret_cast<uintptr_t>(shape->data()) % alignof(int64_t))
    return fail(
        field + ".shape",
        "8-byte dimensions at misaligned offset " +
            std::to_string(reinterpret_cast<const uint8_t *>(shape->data()) -
                           flatbuffer_) +
            " of the FlatBuffer");
  for (flatbuffers::uoffset_t d = 0; d < sizeOf(shape); ++d) {
    int64_t dim = shape->Get(d);
    if (dim < 0)
      return fail(indexed(field + ".shape", d),
                  "dimension " + std::to_string(dim) + " is negative");
    if (!multiply({count, uint64_t(dim)}, count))
      return fail(field + ".shape", "element count of " + shapeString(shape) +
                                        " overflows 64 bits");
  }
  uint64_t bytes = 0;
  if (!multiply({count, dtypeSize(buffer.dtype())}, bytes))
    return fail(field + ".shape", "byte size of " + shapeString(shape) + " " +
                                      dtypeName(buffer.dtype()) +
                                      " overflows 64 bits");
  uint64_t offset = buffer.offset();
  if (offset % kAlignment)
    return fail(field + ".offset", std::to_string(offset) +
                                       " is not a multiple of " +
                                       std::to_string(kAlignment));
  if (buffer.region() == Region_Remote) {
    // No memory here: only a parameter-server variable names it.
    layout = {buffer.region(), offset, bytes, count};
    return true;
  }
  uint64_t size = regionSize(buffer.region());
  if (offset > size || bytes > size - offset)
    return fail(field, "bytes [" + std::to_string(offset) + ", " +
                           std::to_string(offset) + " + " +
                           std::to_string(bytes) + ") lie outside the " +
                           regionName(buffer.region()) + " region (" +
                           std::to_string(size) + " bytes)");
  layout = {buffer.region(), offset, bytes, count};
  return true;
}

bool Validator::checkBufferIndex(const std::string &field, uint32_t index) {
  if (index >= buffers_.size())
    return fail(field, "buffer " + std::to_string(index) +
                           " does not exist (the artifact has " +
                           std::to_string(buffers_.size()) + " buffers)");
  if (buffers_[index].region == Region_Remote)
    return fail(field, "buffer " + std::to_string(index) +
                           " is a parameter-server variable's, which has no memory here");
  return true;
}

bool Validator::checkWritable(const std::string &field, uint32_t index) {
  if (buffers_[index].region != Region_Constants)
    return true;
  return fail(field, "buffer " + std::to_string(index) +
                         " is in the read-only constants region");
}

bool Validator::checkVariables() {
  const auto *variables = artifact_.variables();
  std::set<std::string_view> names;
  std::vector<uint32_t> byOffset;
  for (flatbuffers::uoffset_t i = 0; i < sizeOf(variables); ++i) {
    const Variable &variable = *variables->Get(i);
    std::string field = named("variables", i, variable.name());
    if (!checkVariable(field, variable))
      return false;
    if (!names.insert(variable.name()->string_view()).second)
      return fail(field + ".name", "'" + variable.name()->str() +
                                       "' names an earlier variable too");
    byOffset.push_back(i);
  }
  // Initializing one variable must not change another: in offset order, each
  // variable must start after the furthest end so far.
  auto layoutOf = [&](uint32_t i) -> const BufferLayout & {
    return buffers_[variables->Get(i)->buffer()];
  };
  std::stable_sort(byOffset.begin(), byOffset.end(),
                   [&](uint32_t x, uint32_t y) {
                     return layoutOf(x).offset < layoutOf(y).offset;
                   });
  const Variable *furthest = nullptr;
  for (uint32_t i : byOffset) {
    const BufferLayout &layout = layoutOf(i);
    if (layout.byteSize == 0 || layout.region == Region_Remote)
      continue;
    if (furthest && overlap(buffers_[furthest->buffer()], layout))
      return fail(named("variables", i, variables->Get(i)->name()) + ".buffer",
                  "its bytes overlap those of variable '" +
                      furthest->name()->str() + "'");
    const BufferLayout *end =
        furthest ? &buffers_[furthest->buffer()] : nullptr;
    if (!end || layout.offset + layout.byteSize > end->offset + end->byteSize)
      furthest = variables->Get(i);
  }
  return true;
}

bool Validator::checkVariable(const std::string &field,
                              const Variable &variable) {
  if (!variable.name() || variable.name()->size() == 0)
    return fail(field + ".name", "missing");
  if (variable.buffer() >= buffers_.size())
    return checkBufferIndex(field + ".buffer", variable.buffer());
  const BufferLayout &layout = buffers_[variable.buffer()];
  Region expected = variable.placement() ? Region_Remote : Region_State;
  if (layout.region != expected)
    return fail(field + ".buffer",
                "buffer " + std::to_string(variable.buffer()) + " is in the " +
                    regionName(layout.region) + " region; " +
                    (variable.placement() ? "a parameter-server variable's is remote"
                                          : "variables live in the state region"));
  if (const Placement *placement = variable.placement()) {
    if (placement->kind() < PlacementKind_MIN || placement->kind() > PlacementKind_MAX)
      return fail(field + ".placement.kind",
                  "unknown kind " + std::to_string(placement->kind()));
    if (placement->partitioner() < Partitioner_MIN || placement->partitioner() > Partitioner_MAX)
      return fail(field + ".placement.partitioner",
                  "unknown partitioner " + std::to_string(placement->partitioner()));
    const Buffer &buffer = *artifact_.buffers()->Get(variable.buffer());
    if (buffer.dtype() != DType_F32)
      return fail(field + ".buffer", std::string("a parameter-server variable is f32, not ") +
                                         dtypeName(buffer.dtype()));
    if (placement->kind() != PlacementKind_Dense && sizeOf(buffer.shape()) < 1)
      return fail(field + ".placement.kind", "a table needs rows: the variable is a scalar");
    if (placement->num_shards() < 1 || placement->min_shard_bytes() < 0 ||
        placement->max_shard_bytes() < 0 || placement->max_shards() < 0)
      return fail(field + ".placement", "shard counts and sizes must not be negative, and "
                                        "num_shards at least 1");
    if (placement->kind() == PlacementKind_Hash && variable.init() == InitKind_Constant)
      return fail(field + ".init", "a hash table's rows are drawn per id; it cannot have a "
                                   "constant initializer");
  }
  return checkInitializer(field, variable);
}

bool Validator::checkInitializer(const std::string &field,
                                 const Variable &variable) {
  InitKind kind = variable.init();
  if (kind < InitKind_MIN || kind > InitKind_MAX)
    return fail(field + ".init", "unknown kind " + std::to_string(kind));
  const Buffer &buffer = *artifact_.buffers()->Get(variable.buffer());
  const BufferLayout &layout = buffers_[variable.buffer()];
  switch (kind) {
  case InitKind_Zeros:
  case InitKind_Ones:
    return true;
  case InitKind_Constant:
    if (sizeOf(variable.value()) != layout.byteSize)
      return fail(field + ".value",
                  "holds " + std::to_string(sizeOf(variable.value())) +
                      " bytes; the variable (" + dtypeName(buffer.dtype()) +
                      " " + shapeString(buffer.shape()) + ") has " +
                      std::to_string(layout.byteSize));
    return true;
  default:
    break;
  }
  if (!isFloatDType(buffer.dtype()))
    return fail(field + ".init", std::string(EnumNameInitKind(kind)) +
                                     " initializes floats; the variable is " +
                                     dtypeName(buffer.dtype()));
  double a = variable.a(), b = variable.b();
  if (kind == InitKind_Uniform &&
      !(std::isfinite(a) && std::isfinite(b) && a <= b))
    return fail(field, "Uniform needs finite bounds a <= b; a = " +
                           std::to_string(a) + ", b = " + std::to_string(b));
  if ((kind == InitKind_Normal || kind == InitKind_TruncatedNormal) &&
      !(std::isfinite(a) && std::isfinite(b) && b >= 0))
    return fail(field, std::string(EnumNameInitKind(kind)) +
                           " needs a finite mean a and stddev b >= 0; a = " +
                           std::to_string(a) + ", b = " + std::to_string(b));
  return true;
}

bool Validator::checkKernels() {
  const KernelLibrary *kernels = artifact_.kernels();
  if (!kernels)
    return true;
  const auto *symbols = kernels->symbols();
  for (flatbuffers::uoffset_t i = 0; i < sizeOf(symbols); ++i)
    if (symbols->Get(i)->size() == 0)
      return fail(indexed("kernels.symbols", i), "empty symbol name");
  if (sizeOf(symbols) && !sizeOf(kernels->object()))
    return fail("kernels.object", "empty, but " +
                                      std::to_string(sizeOf(symbols)) +
                                      " kernel symbols are declared");
  return true;
}

bool Validator::checkPrograms() {
  const auto *programs = artifact_.programs();
  std::set<std::string_view> names;
  for (flatbuffers::uoffset_t i = 0; i < sizeOf(programs); ++i) {
    const Program &program = *programs->Get(i);
    std::string field = named("programs", i, program.name());
    if (!program.name() || program.name()->size() == 0)
      return fail(field + ".name", "missing");
    if (!names.insert(program.name()->string_view()).second)
      return fail(field + ".name", "'" + program.name()->str() +
                                       "' names an earlier program too");
    if (!checkProgram(field, program))
      return false;
  }
  return true;
}

bool Validator::checkProgram(const std::string &field, const Program &program) {
  const auto *types = program.instructions_type();
  const auto *values = program.instructions();
  // The verifier has checked that both are present with one type per value.
  for (flatbuffers::uoffset_t i = 0; i < sizeOf(values); ++i) {
    auto type = static_cast<Instruction>(types->Get(i));
    std::string instruction = indexed(field + ".instructions", i);
    if (!checkInstruction(instruction, type, values->Get(i)))
      return false;
  }
  return checkCollectives(field, program) &&
         checkBindings(field + ".feeds", program.feeds(), /*feeds=*/true) &&
         checkBindings(field + ".fetches", program.fetches(), /*feeds=*/false);
}

bool Validator::checkInstruction(const std::string &field, Instruction type,
                                 const void *instruction) {
  std::string kind = field + " (" + instructionName(type) + ")";
  switch (type) {
  case Instruction_KernelCall:
    return checkKernelCall(kind, *static_cast<const KernelCall *>(instruction));
  case Instruction_Gemm:
    return checkGemm(kind, *static_cast<const Gemm *>(instruction));
  case Instruction_BlockedGemm:
    return checkBlockedGemm(kind, *static_cast<const BlockedGemm *>(instruction));
  case Instruction_Copy:
    return checkCopy(kind, *static_cast<const Copy *>(instruction));
  case Instruction_InitVariable: {
    uint32_t variable =
        static_cast<const InitVariable *>(instruction)->variable();
    if (variable >= sizeOf(artifact_.variables()))
      return fail(kind + ".variable",
                  "variable " + std::to_string(variable) +
                      " does not exist (the artifact has " +
                      std::to_string(sizeOf(artifact_.variables())) +
                      " variables)");
    return true;
  }
  case Instruction_SparseApply:
    return checkSparseApply(kind, *static_cast<const SparseApply *>(instruction));
  case Instruction_Convolution:
    return checkConvolution(kind, *static_cast<const Convolution *>(instruction));
  case Instruction_AllReduceStart:
  case Instruction_AllReduceWait:
  case Instruction_SparseAllReduceStart:
  case Instruction_SparseAllReduceWait:
    return true; // checkCollectives pairs them up.
  case Instruction_PsPull:
  case Instruction_PsPullRows:
  case Instruction_PsPush:
  case Instruction_PsPushRows:
    return checkParameterServerAccess(kind, type, instruction);
  case Instruction_NONE:
    break;
  }
  return fail(field, "unknown instruction kind " +
                         std::to_string(static_cast<int>(type)) +
                         " (written for a newer runtime?)");
}

bool Validator::checkKernelCall(const std::string &field,
                                const KernelCall &call) {
  const KernelLibrary *kernels = artifact_.kernels();
  size_t symbols = kernels ? sizeOf(kernels->symbols()) : 0;
  if (call.kernel() >= symbols)
    return fail(field + ".kernel", "kernel " + std::to_string(call.kernel()) +
                                       " does not exist (the artifact has " +
                                       std::to_string(symbols) + " kernels)");
  const auto *args = call.args();
  for (flatbuffers::uoffset_t i = 0; i < sizeOf(args); ++i)
    if (!checkBufferIndex(indexed(field + ".args", i), args->Get(i)))
      return false;
  // The buffers a kernel writes must be writable (0: an artifact from
  // before the field, where only the read-only mapping guards constants).
  if (call.outputs() > sizeOf(args))
    return fail(field + ".outputs", std::to_string(call.outputs()) +
                                        " outputs of " +
                                        std::to_string(sizeOf(args)) + " args");
  for (flatbuffers::uoffset_t i = sizeOf(args) - call.outputs(); i < sizeOf(args); ++i)
    if (!checkWritable(indexed(field + ".args", i), args->Get(i)))
      return false;
  // A row-parallel kernel writes rows [begin, end) of each output: their
  // first dimension is its row count, so no range reaches past them.
  if (call.rows() > 0) {
    if (call.outputs() == 0)
      return fail(field + ".rows", std::to_string(call.rows()) + " rows but no outputs");
    for (flatbuffers::uoffset_t i = sizeOf(args) - call.outputs(); i < sizeOf(args); ++i) {
      const auto *shape = artifact_.buffers()->Get(args->Get(i))->shape();
      if (sizeOf(shape) == 0 || static_cast<uint64_t>(shape->Get(0)) != call.rows())
        return fail(field + ".rows", std::to_string(call.rows()) + " rows, but output buffer " +
                                         std::to_string(args->Get(i)) + " is " +
                                         shapeString(shape));
    }
  }
  return true;
}

bool Validator::checkBlockedGemm(const std::string &field, const BlockedGemm &blocked) {
  const Gemm *gemm = blocked.gemm();
  const KernelCall *update = blocked.update();
  if (!gemm)
    return fail(field + ".gemm", "missing");
  if (!update)
    return fail(field + ".update", "missing");
  // A 16-bit product runs its update as one epilogue (one block: all of C).
  if (gemm->batch() != 1 ||
      (gemm->precision() != DType_F32 && blocked.block_rows() != gemm->m()))
    return fail(field + ".gemm", "a product by blocks is one product, f32 or in one block (batch " +
                                     std::to_string(gemm->batch()) + ", " +
                                     dtypeName(gemm->precision()) + ", block_rows " +
                                     std::to_string(blocked.block_rows()) + " of m = " +
                                     std::to_string(gemm->m()) + ")");
  int64_t perRow = blocked.rows_per_update_row();
  if (perRow < 1 || perRow > gemm->m() || gemm->m() % perRow != 0)
    return fail(field + ".rows_per_update_row",
                std::to_string(perRow) + " does not divide m = " + std::to_string(gemm->m()));
  if (blocked.block_rows() < 1 || blocked.block_rows() > gemm->m() ||
      blocked.block_rows() % perRow != 0)
    return fail(field + ".block_rows", std::to_string(blocked.block_rows()) +
                                           " is not a multiple of rows_per_update_row = " +
                                           std::to_string(perRow) + " in [1, m = " +
                                           std::to_string(gemm->m()) + "]");
  if (!checkGemm(field + ".gemm", *gemm, blocked.block_rows()) ||
      !checkKernelCall(field + ".update", *update))
    return false;
  if (update->rows() != static_cast<uint64_t>(gemm->m() / perRow))
    return fail(field + ".update.rows", std::to_string(update->rows()) + " rows of " +
                                            std::to_string(perRow) +
                                            ", but the product has m = " +
                                            std::to_string(gemm->m()));
  uint32_t inputs = sizeOf(update->args()) - update->outputs();
  if (blocked.block_arg() >= inputs || update->args()->Get(blocked.block_arg()) != gemm->c())
    return fail(field + ".block_arg", "argument " + std::to_string(blocked.block_arg()) +
                                          " is not an input of the update that is gemm.c (buffer " +
                                          std::to_string(gemm->c()) + ")");
  // The update's threads write while others still compute their rows.
  const std::pair<const char *, uint32_t> parts[] = {
      {"the block of C", gemm->c()}, {"A", gemm->a()}, {"B", gemm->b()}};
  for (uint32_t i = inputs; i < sizeOf(update->args()); ++i)
    for (const auto &[name, buffer] : parts)
      if (overlap(buffers_[update->args()->Get(i)], buffers_[buffer]))
        return fail(indexed(field + ".update.args", i),
                    "output buffer " + std::to_string(update->args()->Get(i)) + " overlaps " +
                        name + " (buffer " + std::to_string(buffer) + ")");
  return true;
}

bool Validator::checkGemmOperand(const std::string &field, uint32_t index,
                                 std::initializer_list<uint64_t> dims,
                                 const std::string &expected, DType rounded) {
  if (!checkBufferIndex(field, index))
    return false;
  const Buffer &buffer = *artifact_.buffers()->Get(index);
  if (buffer.dtype() != DType_F32 && (rounded == DType_F32 || buffer.dtype() != rounded))
    return fail(field, "buffer " + std::to_string(index) + " is " +
                           dtypeName(buffer.dtype()) + "; Gemm takes f32" +
                           (rounded == DType_F32 ? std::string() : std::string(" or ") + dtypeName(rounded)));
  uint64_t count = 0;
  if (!multiply(dims, count) || count != buffers_[index].elementCount)
    return fail(field, "buffer " + std::to_string(index) + " holds " +
                           std::to_string(buffers_[index].elementCount) +
                           " elements; " + expected + " needs " +
                           (multiply(dims, count) ? std::to_string(count)
                                                  : "more than 2^64"));
  return true;
}

bool Validator::checkGemm(const std::string &field, const Gemm &gemm, int64_t rowsOfC) {
  const std::pair<const char *, int64_t> sizes[] = {{"batch", gemm.batch()},
                                                    {"m", gemm.m()},
                                                    {"n", gemm.n()},
                                                    {"k", gemm.k()}};
  for (const auto &[name, size] : sizes)
    if (size < 1)
      return fail(field + "." + name,
                  std::to_string(size) + " is not a positive size");
  if (!isFloatDType(gemm.precision()))
    return fail(field + ".precision", "unknown precision " +
                                          std::to_string(static_cast<int>(gemm.precision())) +
                                          " (expected f32, f16 or bf16)");
  const std::pair<const char *, int32_t> copies[] = {{"a_copy", gemm.a_copy()},
                                                     {"b_copy", gemm.b_copy()}};
  for (const auto &[name, slot] : copies) {
    if (slot < -1)
      return fail(field + "." + name, std::to_string(slot) + " is not a copy slot (-1: none)");
    if (slot >= 0 && gemm.precision() == DType_F32)
      return fail(field + "." + name, "an f32 product converts no input to keep in a copy slot");
  }
  uint64_t batch = gemm.batch(), m = gemm.m(), n = gemm.n(), k = gemm.k();
  uint64_t batchB = gemm.shared_b() ? 1 : batch;
  std::string shapeA = gemm.transpose_a() ? "[batch, k, m]" : "[batch, m, k]";
  std::string shapeB =
      gemm.shared_b()
          ? (gemm.transpose_b() ? "[n, k]" : "[k, n]")
          : (gemm.transpose_b() ? "[batch, n, k]" : "[batch, k, n]");
  if (!checkGemmOperand(field + ".a", gemm.a(), {batch, m, k}, "A " + shapeA,
                        gemm.precision()) ||
      !checkGemmOperand(field + ".b", gemm.b(), {batchB, k, n}, "B " + shapeB,
                        gemm.precision()) ||
      !checkGemmOperand(field + ".c", gemm.c(),
                        {batch, rowsOfC > 0 ? static_cast<uint64_t>(rowsOfC) : m, n},
                        rowsOfC > 0 ? "a block of C [block_rows, n]" : "C [batch, m, n]",
                        DType_F32) ||
      !checkWritable(field + ".c", gemm.c()))
    return false;
  for (auto [name, input, slot] : {std::tuple{"a_copy", gemm.a(), gemm.a_copy()},
                                   std::tuple{"b_copy", gemm.b(), gemm.b_copy()}})
    if (slot >= 0 && artifact_.buffers()->Get(input)->dtype() != DType_F32)
      return fail(field + "." + name, "buffer " + std::to_string(input) + " is " +
                                          dtypeName(artifact_.buffers()->Get(input)->dtype()) +
                                          " already: nothing to convert into copy slot " +
                                          std::to_string(slot));
  for (uint32_t input : {gemm.a(), gemm.b()})
    if (overlap(buffers_[gemm.c()], buffers_[input]))
      return fail(field + ".c", "buffer " + std::to_string(gemm.c()) +
                                    " overlaps input buffer " +
                                    std::to_string(input));
  return true;
}

/// input [N, C, D...], filter [F, C / groups, K...], output [N, F, O...],
/// all f32, O as the window gives it; the buffer written must be writable
/// and apart from the two read.
bool Validator::checkConvolution(const std::string &field, const Convolution &conv) {
  if (conv.kind() < ConvolutionKind_MIN || conv.kind() > ConvolutionKind_MAX)
    return fail(field + ".kind", "unknown kind " + std::to_string(conv.kind()));
  if (conv.precision() != DType_F32 && conv.precision() != DType_BF16)
    return fail(field + ".precision", std::string(dtypeName(conv.precision())) +
                                          "; a convolution computes in f32 or bf16");
  const std::pair<const char *, uint32_t> operands[] = {
      {"input", conv.input()}, {"filter", conv.filter()}, {"output", conv.output()}};
  for (const auto &[name, index] : operands)
    if (!checkDType(field + "." + name, index, {DType_F32}))
      return false;
  auto shapeOf = [&](uint32_t index) {
    std::vector<int64_t> dims;
    if (const auto *shape = artifact_.buffers()->Get(index)->shape())
      dims.assign(shape->begin(), shape->end());
    return dims;
  };
  std::vector<int64_t> x = shapeOf(conv.input()), w = shapeOf(conv.filter()),
                       y = shapeOf(conv.output());
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size() || y.size() != x.size())
    return fail(field, "expects input, filter and output of one rank from 3 to 5, got " +
                           std::to_string(x.size()) + ", " + std::to_string(w.size()) +
                           " and " + std::to_string(y.size()));
  size_t spatial = x.size() - 2;
  const std::tuple<const char *, const flatbuffers::Vector<int64_t> *, int64_t> lists[] = {
      {"strides", conv.strides(), 1},
      {"dilations", conv.dilations(), 1},
      {"pad_low", conv.pad_low(), 0},
      {"pad_high", conv.pad_high(), 0}};
  for (const auto &[name, values, min] : lists) {
    if (sizeOf(values) != spatial)
      return fail(field + "." + name, "has " + std::to_string(sizeOf(values)) +
                                          " entries for " + std::to_string(spatial) +
                                          " spatial dimensions");
    // As for buffer shapes: the verifier does not align 8-byte elements.
    if (reinterpret_cast<uintptr_t>(values->data()) % alignof(int64_t))
      return fail(field + "." + name,
                  "8-byte entries at misaligned offset " +
                      std::to_string(reinterpret_cast<const uint8_t *>(values->data()) -
                                     flatbuffer_) +
                      " of the FlatBuffer");
    for (int64_t v : *values)
      if (v < min || v > (int64_t(1) << 32))
        return fail(field + "." + name, "holds " + std::to_string(v));
  }
  int64_t groups = conv.groups();
  // Products in 128 bits: dimensions and groups come from the file.
  if (groups < 1 || x[1] % groups || w[0] % groups ||
      static_cast<__int128>(w[1]) * groups != x[1] || y[0] != x[0] || y[1] != w[0])
    return fail(field, "channels disagree: input [N=" + std::to_string(x[0]) + ", C=" +
                           std::to_string(x[1]) + "], filter [F=" + std::to_string(w[0]) +
                           ", " + std::to_string(w[1]) + "], output [" +
                           std::to_string(y[0]) + ", " + std::to_string(y[1]) +
                           "], groups " + std::to_string(groups));
  for (size_t d = 0; d < spatial; ++d) {
    if (w[2 + d] < 1)
      return fail(field + ".filter", "spatial dimension " + std::to_string(d) +
                                         " of the window is " + std::to_string(w[2 + d]));
    __int128 span = static_cast<__int128>(x[2 + d]) + conv.pad_low()->Get(d) +
                    conv.pad_high()->Get(d) -
                    static_cast<__int128>(conv.dilations()->Get(d)) * (w[2 + d] - 1) - 1;
    int64_t gives = span < 0 ? -1 : static_cast<int64_t>(span / conv.strides()->Get(d) + 1);
    if (gives != y[2 + d])
      return fail(field + ".output", "spatial dimension " + std::to_string(d) + " is " +
                                         std::to_string(y[2 + d]) + "; the window gives " +
                                         (gives < 0 ? std::string("none") :
                                          std::to_string(gives)));
  }
  uint32_t written = conv.kind() == ConvolutionKind_Forward        ? conv.output()
                     : conv.kind() == ConvolutionKind_BackwardData ? conv.input()
                                                                   : conv.filter();
  if (!checkWritable(field, written))
    return false;
  for (const auto &[name, index] : operands) {
    bool self = name == std::string(conv.kind() == ConvolutionKind_Forward        ? "output"
                                    : conv.kind() == ConvolutionKind_BackwardData ? "input"
                                                                                  : "filter");
    if (!self && (index == written || overlap(buffers_[written], buffers_[index])))
      return fail(field, "the buffer written (" + std::to_string(written) +
                             ") overlaps the " + name + " buffer " + std::to_string(index));
  }
  return true;
}

bool Validator::checkCopy(const std::string &field, const Copy &copy) {
  if (!checkBufferIndex(field + ".src", copy.src()) ||
      !checkBufferIndex(field + ".dst", copy.dst()) ||
      !checkWritable(field + ".dst", copy.dst()))
    return false;
  uint64_t from = buffers_[copy.src()].byteSize;
  uint64_t to = buffers_[copy.dst()].byteSize;
  if (from != to)
    return fail(field, "src buffer " + std::to_string(copy.src()) + " has " +
                           std::to_string(from) + " bytes, dst buffer " +
                           std::to_string(copy.dst()) + " has " +
                           std::to_string(to));
  return true;
}

bool Validator::checkCollectives(const std::string &field, const Program &program) {
  const auto *types = program.instructions_type();
  const auto *values = program.instructions();
  // Tag -> the start while it is in flight; waited sparse all-reduces stay
  // (SparseApply reads them) with `waited` set.
  struct Started {
    const AllReduceStart *dense = nullptr;
    const SparseAllReduceStart *sparse = nullptr;
    bool waited = false;
  };
  std::map<uint32_t, Started> started;
  for (flatbuffers::uoffset_t i = 0; i < sizeOf(values); ++i) {
    auto type = static_cast<Instruction>(types->Get(i));
    std::string kind = indexed(field + ".instructions", i) + " (" + instructionName(type) + ")";
    auto fresh = [&](uint32_t tag) {
      if (!started.count(tag))
        return true;
      return fail(kind + ".tag", "tag " + std::to_string(tag) + " is started twice in the program");
    };
    if (type == Instruction_AllReduceStart) {
      const auto &start = *static_cast<const AllReduceStart *>(values->Get(i));
      if (!fresh(start.tag()))
        return false;
      if (sizeOf(start.inputs()) == 0)
        return fail(kind + ".inputs", "empty");
      for (flatbuffers::uoffset_t j = 0; j < sizeOf(start.inputs()); ++j)
        if (!checkDType(indexed(kind + ".inputs", j), start.inputs()->Get(j), {DType_F32}))
          return false;
      started[start.tag()].dense = &start;
    } else if (type == Instruction_SparseAllReduceStart) {
      const auto &start = *static_cast<const SparseAllReduceStart *>(values->Get(i));
      if (!fresh(start.tag()) ||
          !checkDType(kind + ".indices", start.indices(), {DType_I32, DType_I64}) ||
          !checkDType(kind + ".rows", start.rows(), {DType_F32}))
        return false;
      const auto *ids = artifact_.buffers()->Get(start.indices())->shape();
      const auto *rows = artifact_.buffers()->Get(start.rows())->shape();
      if (sizeOf(ids) != 1 || sizeOf(rows) < 1 || rows->Get(0) != ids->Get(0))
        return fail(kind, "expects indices [K] and rows [K, ...], got buffers " +
                              std::to_string(start.indices()) + " and " +
                              std::to_string(start.rows()));
      started[start.tag()].sparse = &start;
    } else if (type == Instruction_AllReduceWait) {
      const auto &wait = *static_cast<const AllReduceWait *>(values->Get(i));
      auto it = started.find(wait.tag());
      if (it == started.end() || !it->second.dense || it->second.waited)
        return fail(kind + ".tag", "no all-reduce in flight under tag " +
                                       std::to_string(wait.tag()));
      const auto *inputs = it->second.dense->inputs();
      if (sizeOf(wait.outputs()) != sizeOf(inputs))
        return fail(kind + ".outputs", std::to_string(sizeOf(wait.outputs())) +
                                           " outputs for the start's " +
                                           std::to_string(sizeOf(inputs)) + " inputs");
      for (flatbuffers::uoffset_t j = 0; j < sizeOf(inputs); ++j) {
        std::string output = indexed(kind + ".outputs", j);
        uint32_t out = wait.outputs()->Get(j);
        if (!checkDType(output, out, {DType_F32}) || !checkWritable(output, out))
          return false;
        if (buffers_[out].byteSize != buffers_[inputs->Get(j)].byteSize)
          return fail(output, "buffer " + std::to_string(out) + " has " +
                                  std::to_string(buffers_[out].byteSize) +
                                  " bytes, the start's input " + std::to_string(j) + " " +
                                  std::to_string(buffers_[inputs->Get(j)].byteSize));
      }
      it->second.waited = true;
    } else if (type == Instruction_SparseAllReduceWait) {
      const auto &wait = *static_cast<const SparseAllReduceWait *>(values->Get(i));
      auto it = started.find(wait.tag());
      if (it == started.end() || !it->second.sparse || it->second.waited)
        return fail(kind + ".tag", "no sparse all-reduce in flight under tag " +
                                       std::to_string(wait.tag()));
      it->second.waited = true;
    } else if (type == Instruction_SparseApply) {
      const auto &apply = *static_cast<const SparseApply *>(values->Get(i));
      if (apply.gathered_tag() < 0)
        continue;
      auto it = started.find(static_cast<uint32_t>(apply.gathered_tag()));
      if (apply.gathered_tag() > UINT32_MAX || it == started.end() || !it->second.sparse ||
          !it->second.waited)
        return fail(kind + ".gathered_tag", "no sparse all-reduce under tag " +
                                                std::to_string(apply.gathered_tag()) +
                                                " was waited for before it");
      if (apply.indices() != it->second.sparse->indices() ||
          apply.rows() != it->second.sparse->rows())
        return fail(kind, "its indices and rows are not those the sparse all-reduce of tag " +
                              std::to_string(apply.gathered_tag()) + " started with");
    }
  }
  for (const auto &[tag, start] : started)
    if (!start.waited)
      return fail(field, std::string(start.sparse ? "the sparse all-reduce" : "the all-reduce") +
                             " started under tag " + std::to_string(tag) +
                             " is never waited for");
  return true;
}

bool Validator::checkDType(const std::string &field, uint32_t index,
                           std::initializer_list<DType> dtypes) {
  if (!checkBufferIndex(field, index))
    return false;
  DType dtype = artifact_.buffers()->Get(index)->dtype();
  for (DType allowed : dtypes)
    if (dtype == allowed)
      return true;
  return fail(field, "buffer " + std::to_string(index) + " is " + dtypeName(dtype) +
                         ", which this instruction does not take");
}

bool Validator::checkSparseApply(const std::string &field, const SparseApply &apply) {
  size_t slots = 0;
  switch (apply.optimizer()) {
  case Optimizer_Sgd: slots = 0; break;
  case Optimizer_Momentum: case Optimizer_Adagrad: slots = 1; break;
  case Optimizer_Adam: slots = 2; break;
  default:
    return fail(field + ".optimizer", "unknown optimizer " +
                                          std::to_string(static_cast<int>(apply.optimizer())));
  }
  if (sizeOf(apply.slots()) != slots)
    return fail(field + ".slots", std::to_string(sizeOf(apply.slots())) + " slots; " +
                                      EnumNameOptimizer(apply.optimizer()) + " has " +
                                      std::to_string(slots));
  std::vector<uint32_t> state = {apply.param()};
  for (flatbuffers::uoffset_t i = 0; i < slots; ++i)
    state.push_back(apply.slots()->Get(i));
  for (uint32_t buffer : state)
    if (!checkDType(field + ".param", buffer, {DType_F32}) ||
        !checkWritable(field + ".param", buffer))
      return false;
  if (!checkDType(field + ".indices", apply.indices(), {DType_I32, DType_I64}) ||
      !checkDType(field + ".rows", apply.rows(), {DType_F32}) ||
      !checkDType(field + ".lr", apply.lr(), {DType_F32}) ||
      !checkDType(field + ".step", apply.step(), {DType_F32}))
    return false;
  const Buffer &param = *artifact_.buffers()->Get(apply.param());
  const Buffer &rows = *artifact_.buffers()->Get(apply.rows());
  const Buffer &indices = *artifact_.buffers()->Get(apply.indices());
  uint64_t n = buffers_[apply.indices()].elementCount;
  if (sizeOf(param.shape()) < 1 || sizeOf(indices.shape()) != 1 ||
      sizeOf(rows.shape()) != sizeOf(param.shape()) || rows.shape()->Get(0) < 0 ||
      static_cast<uint64_t>(rows.shape()->Get(0)) != n)
    return fail(field, "indices " + shapeString(indices.shape()) + " and rows " +
                           shapeString(rows.shape()) + " do not fit param " +
                           shapeString(param.shape()));
  for (flatbuffers::uoffset_t d = 1; d < sizeOf(param.shape()); ++d)
    if (rows.shape()->Get(d) != param.shape()->Get(d))
      return fail(field + ".rows", "rows " + shapeString(rows.shape()) +
                                       " do not match param " + shapeString(param.shape()));
  for (uint32_t buffer : state)
    if (buffers_[buffer].byteSize != buffers_[apply.param()].byteSize)
      return fail(field + ".slots", "slot buffer " + std::to_string(buffer) +
                                        " is not the size of param");
  if (buffers_[apply.lr()].elementCount != 1 || buffers_[apply.step()].elementCount != 1)
    return fail(field, "lr and step must be scalars");
  if (apply.when() >= 0) {
    if (artifact_.format_version() < 2)
      return fail(field + ".when", "needs format_version 2 (the artifact says " +
                                       std::to_string(artifact_.format_version()) + ")");
    if (apply.when() > UINT32_MAX)
      return fail(field + ".when", "buffer " + std::to_string(apply.when()) +
                                       " does not exist (the artifact has " +
                                       std::to_string(sizeOf(artifact_.buffers())) +
                                       " buffers)");
    uint32_t when = static_cast<uint32_t>(apply.when());
    if (!checkDType(field + ".when", when, {DType_I1}))
      return false;
    if (buffers_[when].elementCount != 1)
      return fail(field + ".when", "must be a scalar");
  } else if (apply.when() != -1) {
    return fail(field + ".when", "is " + std::to_string(apply.when()) +
                                     "; -1 (always) or a buffer index");
  }
  return true;
}

const Variable *Validator::remoteVariable(const std::string &field, uint32_t index, bool rows) {
  const auto *variables = artifact_.variables();
  if (index >= sizeOf(variables)) {
    fail(field + ".variable", "variable " + std::to_string(index) +
                                  " does not exist (the artifact has " +
                                  std::to_string(sizeOf(variables)) + " variables)");
    return nullptr;
  }
  const Variable *variable = variables->Get(index);
  const Placement *placement = variable->placement();
  if (!placement) {
    fail(field + ".variable", "variable '" + variable->name()->str() +
                                  "' is not held by parameter servers");
    return nullptr;
  }
  bool table = placement->kind() != PlacementKind_Dense;
  bool hash = placement->kind() == PlacementKind_Hash;
  if ((rows && !table) || (!rows && hash)) {
    fail(field + ".variable", "variable '" + variable->name()->str() + "' is placed as " +
                                  EnumNamePlacementKind(placement->kind()) +
                                  (rows ? ", not a table: its rows cannot be named"
                                        : ": a hash table is only accessed by rows"));
    return nullptr;
  }
  return variable;
}

bool Validator::checkShape(const std::string &field, uint32_t index,
                           const std::vector<int64_t> &shape) {
  if (!checkDType(field, index, {DType_F32}))
    return false;
  const auto *actual = artifact_.buffers()->Get(index)->shape();
  std::vector<int64_t> dims;
  for (flatbuffers::uoffset_t d = 0; d < sizeOf(actual); ++d)
    dims.push_back(actual->Get(d));
  if (dims == shape)
    return true;
  std::string expected = "[";
  for (size_t d = 0; d < shape.size(); ++d)
    expected += (d ? ", " : "") + std::to_string(shape[d]);
  return fail(field, "buffer " + std::to_string(index) + " is " + shapeString(actual) +
                         "; expected " + expected + "]");
}

bool Validator::checkParameterServerAccess(const std::string &field, Instruction type,
                                           const void *instruction) {
  bool rows = type == Instruction_PsPullRows || type == Instruction_PsPushRows;
  uint32_t index = 0;
  switch (type) {
  case Instruction_PsPull: index = static_cast<const PsPull *>(instruction)->variable(); break;
  case Instruction_PsPullRows: index = static_cast<const PsPullRows *>(instruction)->variable(); break;
  case Instruction_PsPush: index = static_cast<const PsPush *>(instruction)->variable(); break;
  default: index = static_cast<const PsPushRows *>(instruction)->variable(); break;
  }
  const Variable *variable = remoteVariable(field, index, rows);
  if (!variable)
    return false;
  const auto *declared = artifact_.buffers()->Get(variable->buffer())->shape();
  std::vector<int64_t> shape, row;
  for (flatbuffers::uoffset_t d = 0; d < sizeOf(declared); ++d) {
    shape.push_back(declared->Get(d));
    if (d > 0)
      row.push_back(declared->Get(d)); // A table's row shape.
  }
  if (type == Instruction_PsPull) {
    const auto &pull = *static_cast<const PsPull *>(instruction);
    return checkShape(field + ".output", pull.output(), shape) &&
           checkWritable(field + ".output", pull.output());
  }
  if (type == Instruction_PsPush)
    return checkShape(field + ".gradient", static_cast<const PsPush *>(instruction)->gradient(),
                      shape);
  uint32_t ids = type == Instruction_PsPullRows
                     ? static_cast<const PsPullRows *>(instruction)->ids()
                     : static_cast<const PsPushRows *>(instruction)->ids();
  if (!checkDType(field + ".ids", ids, {DType_I32, DType_I64}))
    return false;
  const auto *idShape = artifact_.buffers()->Get(ids)->shape();
  std::vector<int64_t> expected;
  for (flatbuffers::uoffset_t d = 0; d < sizeOf(idShape); ++d)
    expected.push_back(idShape->Get(d));
  if (type == Instruction_PsPushRows && expected.size() != 1)
    return fail(field + ".ids", "pushed ids are one-dimensional, not " + shapeString(idShape));
  expected.insert(expected.end(), row.begin(), row.end());
  if (type == Instruction_PsPullRows) {
    const auto &pull = *static_cast<const PsPullRows *>(instruction);
    return checkShape(field + ".output", pull.output(), expected) &&
           checkWritable(field + ".output", pull.output());
  }
  return checkShape(field + ".rows", static_cast<const PsPushRows *>(instruction)->rows(),
                    expected);
}

bool Validator::checkBindings(
    const std::string &field,
    const flatbuffers::Vector<flatbuffers::Offset<Binding>> *bindings,
    bool feeds) {
  std::set<std::string_view> names;
  std::set<uint32_t> fedBuffers;
  for (flatbuffers::uoffset_t i = 0; i < sizeOf(bindings); ++i) {
    const Binding &binding = *bindings->Get(i);
    std::string entry = named(field, i, binding.name());
    if (!binding.name() || binding.name()->size() == 0)
      return fail(entry + ".name", "missing");
    if (!names.insert(binding.name()->string_view()).second)
      return fail(entry + ".name", "'" + binding.name()->str() +
                                       "' names an earlier binding too");
    if (!checkBufferIndex(entry + ".buffer", binding.buffer()))
      return false;
    if (!feeds)
      continue;
    if (!checkWritable(entry + ".buffer", binding.buffer()))
      return false;
    if (!fedBuffers.insert(binding.buffer()).second)
      return fail(entry + ".buffer", "buffer " +
                                         std::to_string(binding.buffer()) +
                                         " is bound to an earlier feed too");
    const BufferLayout &feed = buffers_[binding.buffer()];
    for (flatbuffers::uoffset_t v = 0; v < sizeOf(binding.views()); ++v) {
      uint32_t view = binding.views()->Get(v);
      std::string at = indexed(entry + ".views", v);
      if (!checkBufferIndex(at, view))
        return false;
      const BufferLayout &layout = buffers_[view];
      if (view == binding.buffer() || layout.region != feed.region ||
          layout.offset != feed.offset || layout.byteSize > feed.byteSize)
        return fail(at, "buffer " + std::to_string(view) + " is not a view of the feed's buffer " +
                            std::to_string(binding.buffer()) +
                            " (another buffer at its offset, no larger)");
    }
  }
  return true;
}

} // namespace

bool validateArtifact(const uint8_t *flatbuffer,
                      std::vector<BufferLayout> &buffers, std::string &error) {
  return Validator(*GetArtifact(flatbuffer), flatbuffer, buffers, error).run();
}

} // namespace kiln::artifact
