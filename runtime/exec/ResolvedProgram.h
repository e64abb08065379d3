//===- ResolvedProgram.h - A program, addresses resolved --------*- C++ -*-===//
//
// A program's instruction list turned, once per session, into steps that
// hold what they need to run: kernel function pointers with their argument
// arrays, buffer addresses, GEMM shapes. Running a step is then a switch and
// a call, a few nanoseconds of dispatch per instruction.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_EXEC_RESOLVEDPROGRAM_H
#define KILN_RUNTIME_EXEC_RESOLVEDPROGRAM_H

#include "runtime/collective/AllReduceBuckets.h"
#include "runtime/cpu/BlockedProduct.h"
#include "runtime/cpu/Convolution.h"
#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/ThreadChoice.h"
#include "runtime/cpu/KernelLibrary.h"
#include "runtime/cpu/LowPrecisionGemm.h"
#include "runtime/cpu/SparseApply.h"
#include "runtime/exec/Executable.h"
#include "runtime/exec/FeedSites.h"
#include "runtime/exec/ParameterAccess.h"
#include "runtime/exec/ProgramProfile.h"

#include <map>
#include <string>
#include <variant>
#include <vector>

namespace kiln::exec {

/// The product an artifact's Gemm instruction describes, its precision
/// included.
cpu::GemmShape gemmShapeOf(const artifact::Gemm &gemm);

/// The 16-bit product instruction `index` of `program` computes (a Gemm,
/// or a BlockedGemm's with its epilogue), or null.
const artifact::Gemm *lowPrecisionProduct(const artifact::Program &program, size_t index);

class ResolvedProgram {
public:
  /// Resolves `program` of `executable` against `addresses`; its
  /// all-reduces go through `buckets` (the session's), its parameter-server
  /// instructions through `*parameters` (the session's, set later).
  ResolvedProgram(const Executable &executable,
                  const artifact::Program &program,
                  const BufferAddresses &addresses,
                  collective::AllReduceBuckets &buckets,
                  ParameterAccess *const *parameters);
  // Steps point into kernelArgs_: moving keeps its storage, copying would not.
  ResolvedProgram(ResolvedProgram &&) = default;
  ResolvedProgram &operator=(ResolvedProgram &&) = default;
  ResolvedProgram(const ResolvedProgram &) = delete;
  ResolvedProgram &operator=(const ResolvedProgram &) = delete;

  /// Runs every step in order. Fails only when the GEMM or convolution
  /// library reports an error (or refused a convolution when the program
  /// was resolved); sets `error` to "instructions[I] (KIND): PROBLEM" then.
  bool run(std::string &error) const;

  size_t stepCount() const { return steps_.size(); }

  /// Times every step of each run after the first `warmRuns` (kiln run
  /// --profile); the clock is read only then.
  void startProfiling(int64_t warmRuns);
  /// What startProfiling has timed so far.
  ProgramProfile profile() const;
  /// The most threads one of its steps runs on now, of `available`: a
  /// product or row-parallel kernel the threads it chose (cpu::ThreadChoice),
  /// a convolution, a product oneDNN threads itself or a communication step
  /// `available`, any other step one; 0 while a step has yet to choose.
  int threadsInUse(int available) const;

  /// The pull orders the program starts with (one group, sent before
  /// anything is computed), or null when it starts otherwise.
  const std::vector<PullOrder> *firstPulls() const;

  /// Whether every instruction that reads feed buffer `buffer` can be
  /// pointed at other bytes (FeedSites::movable).
  bool canPointFeed(uint32_t buffer) const { return feeds_.movable(buffer); }
  /// Makes the program read feed buffer `buffer`'s bytes at `address` (its
  /// own address to undo it); canPointFeed(buffer) must hold.
  void pointFeed(uint32_t buffer, const void *address) const { feeds_.point(buffer, address); }

private:
  struct KernelStep {
    cpu::KernelFunction function = nullptr;
    void **args = nullptr;
    /// With `rows` > 0 and more than one thread: the row entry, given
    /// `args` (`argCount` of them) and a range, called on each thread
    /// when `threads` finds that faster than `function` on one.
    cpu::KernelFunction rowFunction = nullptr;
    size_t argCount = 0;
    int64_t rows = 0;
    mutable cpu::ThreadChoice threads;
  };
  struct GemmStep {
    cpu::GemmShape shape;
    const float *a;
    const float *b;
    float *c;
    /// Set for a bf16 or f16 product (null after a refusal, with
    /// `resolveError_` set).
    std::unique_ptr<cpu::LowPrecisionGemm> lowPrecision;
    mutable cpu::ThreadChoice threads;
    /// The instruction: "Gemm", or "BlockedGemm" (a 16-bit product with
    /// its epilogue).
    const char *kind = "Gemm";
  };
  struct BlockedGemmStep {
    cpu::BlockedProduct product;
    mutable cpu::ThreadChoice threads;
  };
  struct ConvStep {
    std::unique_ptr<cpu::Convolution> convolution;
  };
  struct CopyStep {
    void *dst;
    const void *src;
    size_t size;
  };
  struct InitStep {
    const artifact::Variable *variable;
    const artifact::Buffer *buffer;
    uint64_t elementCount;
    void *data;
  };
  struct SparseStep {
    cpu::SparseHyperParameters hyper;
    cpu::SparseUpdate update;
    /// >= 0: ids and rows from the sparse all-reduce of this tag.
    int64_t gatheredTag = -1;
    /// An I1 scalar a kernel of the step writes: the update changes
    /// nothing where it is 0 (a step fp16 loss scaling skips); null: always.
    const uint8_t *when = nullptr;
    mutable cpu::ThreadChoice threads;
  };
  /// With `span` set, the bucket is reduced in place: its wait writes the
  /// buffers it started with, which lie in order in [span, span + count)
  /// (kilnc lays them out so); nothing is copied.
  struct AllReduceStartStep {
    uint32_t tag;
    std::vector<collective::BucketPart> inputs;
    float *span = nullptr;
    size_t count = 0;
  };
  struct AllReduceWaitStep {
    uint32_t tag;
    bool mean;
    std::vector<collective::BucketOutput> outputs;
    float *span = nullptr;
    size_t count = 0;
  };
  /// The span an all-reduce of `inputs` written back to `outputs` (buffer
  /// indices) can be reduced in place over; {nullptr, 0} when the outputs
  /// are other buffers or the inputs are not in order in one range.
  static std::pair<float *, size_t> inPlaceSpan(const flatbuffers::Vector<uint32_t> &inputs,
                                               const flatbuffers::Vector<uint32_t> &outputs,
                                               const FeedSites &addresses,
                                               const artifact::VerifiedArtifact &artifact);
  struct SparseAllReduceStartStep {
    uint32_t tag;
    collective::BucketPart ids, rows;
  };
  struct SparseAllReduceWaitStep {
    uint32_t tag;
    bool mean;
  };
  /// PsPull, PsPullRows, PsPush or PsPushRows.
  /// A PsPush or PsPushRows instruction.
  struct ParameterStep {
    artifact::Instruction kind;
    uint32_t variable;
    void *data;               ///< The pushed gradient or rows.
    const void *ids = nullptr;
    bool ids64 = false;
    int64_t count = 0;        ///< Number of ids.
  };
  /// A run of consecutive PsPull and PsPullRows instructions, pulled in one
  /// request per server.
  struct PullGroupStep {
    std::vector<PullOrder> orders;
  };
  using Step = std::variant<KernelStep, GemmStep, BlockedGemmStep, ConvStep, CopyStep, InitStep,
                            SparseStep, AllReduceStartStep, AllReduceWaitStep,
                            SparseAllReduceStartStep, SparseAllReduceWaitStep, ParameterStep,
                            PullGroupStep>;
  /// A BlockedGemm's product and update, its arguments in kernelArgs_.
  /// The step's measured choice of threads, if it has one.
  static cpu::ThreadChoice *threadChoice(const Step &step);
  /// Whether product `gemm` measures its threads: a native bf16 product
  /// kiln does not split keeps oneDNN's threads, and KILN_GEMM_PARALLEL_MACS
  /// leaves every product to its fixed threshold.
  static bool measuresThreads(const GemmStep &gemm);
  BlockedGemmStep resolveBlockedGemm(const Executable &executable,
                                     const artifact::BlockedGemm &blocked,
                                     const FeedSites &addresses);
  /// Appends the step of product `gemm` (instruction `index`): a 16-bit
  /// one's converter made over `scratch` and its copy slots.
  GemmStep &addGemm(const artifact::Artifact &root, const artifact::Gemm &gemm, size_t index,
                    const char *kind, const FeedSites &addresses, void *scratch);
  /// Appends `call`'s buffers' addresses to kernelArgs_: its inputs as
  /// sites (pointFeed may move a feed among them), its outputs fixed.
  void pushKernelArgs(const artifact::KernelCall &call, const FeedSites &addresses);
  bool runParameterStep(const ParameterStep &step, std::string &error) const;
  /// Appends to the pull group the last step is, or starts one.
  void addPull(PullOrder order);
  /// The servers' client, or null with `error` set.
  ParameterAccess *connectedServers(std::string &error) const;

  static SparseStep resolveSparseApply(const artifact::Artifact &root,
                                       const artifact::SparseApply &apply,
                                       const FeedSites &addresses);
  /// The library's primitive for a Convolution; on a refusal, an empty
  /// step and `resolveError_` set (run() reports it).
  ConvStep resolveConvolution(const artifact::Artifact &root,
                              const artifact::Convolution &conv,
                              const FeedSites &addresses, size_t index);

  std::vector<Step> steps_;
  collective::AllReduceBuckets *buckets_;
  ParameterAccess *const *parameters_;
  /// Where the steps hold the feeds' addresses (pointFeed).
  FeedSites feeds_;
  /// Sums of duplicate sparse rows, one scratch per thread; reused
  /// between runs.
  mutable std::vector<cpu::SparseScratch> sparseScratches_;
  /// The argument arrays of every KernelStep, one after another.
  std::vector<void *> kernelArgs_;
  /// The converted inputs of the bf16 and f16 products (LowPrecisionGemm),
  /// in 64-byte blocks: moving keeps the storage the products point into.
  struct alignas(64) ScratchBlock {
    uint8_t bytes[64];
  };
  std::vector<ScratchBlock> lowPrecisionScratch_;
  /// The copy slots of tensors several 16-bit products read (Gemm.a_copy):
  /// by slot, where it lives, the element count of the tensor it holds
  /// (from its first product) and whether a product has claimed it yet.
  /// Slots whose readers lie in disjoint ranges of instructions share
  /// storage (placeCopySlots).
  struct CopySlot {
    void *copy = nullptr;
    int64_t elements = 0;
    bool claimed = false;
  };
  std::map<int, CopySlot> copySlots_;
  std::vector<std::vector<ScratchBlock>> copySlotStorage_;
  /// Gives every copy slot the program's Gemms name its storage: in order
  /// of its first reader, the first block whose slots' readers have all
  /// run by then (grown to fit), else a new block.
  void placeCopySlots(const artifact::Program &program);
  /// The copy slot `slot` (-1: none) for an input of `elements` elements of
  /// instruction `index`: the first product naming it converts into it,
  /// later ones read it. False (resolveError_ set) when the element counts
  /// disagree.
  bool copySlotFor(int slot, int64_t elements, size_t index, const char *kind,
                   cpu::ConvertedCopySlot &out);
  /// Why a step could not be resolved; reported by run().
  std::string resolveError_;
  /// startProfiling's: whether it was asked, its warm-up runs, the runs so
  /// far and each step's seconds over the timed ones.
  bool profiling_ = false;
  int64_t warmRuns_ = 0;
  mutable int64_t runs_ = 0;
  mutable std::vector<double> stepSeconds_;
};

} // namespace kiln::exec

#endif // KILN_RUNTIME_EXEC_RESOLVEDPROGRAM_H
