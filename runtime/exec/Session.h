//===- Session.h - Memory and programs of one running artifact --*- C++ -*-===//
//
// A session allocates the arena, state and constants regions of an
// executable once (64-byte aligned, zero-filled; constants copied and made
// read-only), resolves every program against them, and runs programs.
//
// Feeds and fetches: bindFeed() copies a tensor into a feed's buffer. A run
// needs every feed of its program bound since the last run of any program,
// because the memory plan may reuse a feed's bytes once it has been read.
// readFetch() copies a fetch out; it reads the program that ran last, and
// only until the next bind or run. Variables live in the state region and
// keep their values across runs.
//
// A session is used by one thread at a time.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_EXEC_SESSION_H
#define KILN_RUNTIME_EXEC_SESSION_H

#include "runtime/exec/Executable.h"
#include "runtime/exec/RegionMemory.h"
#include "runtime/exec/ResolvedProgram.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::exec {

/// Why a session call failed.
enum class SessionError {
  NotFound,           ///< No such program, feed or fetch.
  InvalidArgument,    ///< Wrong dtype or byte size.
  FailedPrecondition, ///< A feed is not bound, or no fetch is readable.
  Internal,           ///< The GEMM library failed.
};

class Session {
public:
  /// Allocates the regions of `executable` and resolves its programs. On
  /// failure sets `error` to "PATH: error: PROBLEM" and returns null.
  static std::unique_ptr<Session>
  create(std::shared_ptr<const Executable> executable, std::string &error);

  const Executable &executable() const { return *executable_; }

  /// Copies `size` bytes of `dtype` at `data` into feed `feed` of `program`.
  /// Ids outside the bound the feed indexes fail it, and leave the feed
  /// unbound (its buffer holds them).
  std::optional<SessionError> bindFeed(std::string_view program,
                                       std::string_view feed,
                                       artifact::DType dtype, const void *data,
                                       size_t size, std::string &error);

  /// The buffer of feed `feed` of `program`, after checking `dtype` and
  /// `size` as bindFeed does, for a caller that writes the bytes there
  /// itself and then calls bindWrittenFeed (one copy instead of two).
  std::optional<SessionError> feedAddress(std::string_view program, std::string_view feed,
                                          artifact::DType dtype, size_t size, void *&address,
                                          std::string &error);
  /// Binds feed `feed` of `program` to what its buffer holds (written
  /// through feedAddress), after the checks bindFeed makes of the values.
  /// `idsChecked`: as for borrowFeed.
  std::optional<SessionError> bindWrittenFeed(std::string_view program, std::string_view feed,
                                              artifact::DType dtype, size_t size,
                                              std::string &error, bool idsChecked = false);
  /// Binds feed `feed` of `program` to the `size` bytes at `data` where
  /// they are, with no copy, when every instruction reading the feed can
  /// read them there (ResolvedProgram::canPointFeed), else copies them as
  /// bindFeed does; `borrowed` says which. Borrowed bytes must stay valid
  /// and unchanged until the program has run (any binding of the feed
  /// after that puts it back in its buffer). The same checks as bindFeed
  /// (the ids' only when `idsChecked` is false: a caller that has checked
  /// them against the feed's bound already, as a data set checks every row
  /// when it is loaded, skips the pass); a failed one leaves the feed
  /// unbound.
  std::optional<SessionError> borrowFeed(std::string_view program, std::string_view feed,
                                         artifact::DType dtype, const void *data, size_t size,
                                         bool &borrowed, std::string &error,
                                         bool idsChecked = false);
  /// Runs `program`; every one of its feeds must be bound.
  std::optional<SessionError> run(std::string_view program, std::string &error);

  /// Times each instruction of `program`'s runs after the first
  /// `warmRuns` (kiln run --profile); profile() gives what was timed.
  std::optional<SessionError> startProfiling(std::string_view program, int64_t warmRuns,
                                             std::string &error);
  std::optional<SessionError> profile(std::string_view program, ProgramProfile &profile,
                                      std::string &error) const;
  /// The most threads one of `program`'s instructions runs on now, of the
  /// session's (ResolvedProgram::threadsInUse): 0 while one has yet to
  /// choose between one thread and all.
  std::optional<SessionError> threadsInUse(std::string_view program, int &threads,
                                           std::string &error) const;

  /// Copies fetch `fetch` of `program`, which ran last, into the `size`
  /// bytes at `data`, which must match the fetch's dtype and size.
  std::optional<SessionError> readFetch(std::string_view program,
                                        std::string_view fetch,
                                        artifact::DType dtype, void *data,
                                        size_t size, std::string &error) const;

  /// Copies variable `name` (its current value in the state region) into
  /// the `size` bytes at `data`, which must match its dtype and size.
  std::optional<SessionError> readVariable(std::string_view name,
                                           artifact::DType dtype, void *data,
                                           size_t size, std::string &error) const;

  /// Overwrites the variable `name` with the `size` bytes at `data`.
  std::optional<SessionError> writeVariable(std::string_view name,
                                            artifact::DType dtype,
                                            const void *data, size_t size,
                                            std::string &error);

  /// Fills the whole arena with `byte` (tests poison it with 0xFF, NaN in
  /// every float type, so values a program fails to write show). Bound
  /// feeds and readable fetches are lost.
  void fillArena(uint8_t byte);

  /// The address of buffer `index` in this session's memory.
  uint8_t *bufferAddress(uint32_t index) const { return addresses_[index]; }

  /// The state region: every variable, optimizer slot and step counter.
  /// Data-parallel replicas broadcast it from rank 0 after init or restore.
  uint8_t *stateData() const { return state_.data(); }
  uint64_t stateBytes() const { return state_.size(); }

  /// The replicas a data-parallel artifact's all-reduces run over (none: a
  /// group of one, so one process trains as one replica). Set before the
  /// first run; the session shares ownership.
  void setCollective(std::shared_ptr<collective::Collective> collective) {
    buckets_->setCollective(std::move(collective));
  }
  /// Where a parameter-server artifact's pulls and pushes go (not owned;
  /// it must outlive the runs). Null: such a program fails at its first pull.
  void setParameters(ParameterAccess *parameters) { parameters_ = parameters; }

  /// With a parameter-server artifact: starts pulling what `program` pulls
  /// first for the next step, its ids read from `feeds` (each feed's name
  /// and the data it will be bound to) instead of the bound feeds; the
  /// parameter client keeps the answers for that step's run. Does nothing
  /// (true) when the program starts otherwise, has no servers, or pulls rows
  /// at ids it computes. False with `error` for ids the servers would refuse.
  bool prefetchPulls(std::string_view program,
                     const std::vector<std::pair<std::string_view, const void *>> &feeds,
                     std::string &error);

  /// The all-reduces this session has waited for.
  collective::AllReduceTotals allReduceTotals() const { return buckets_->totals(); }

private:
  struct ProgramState {
    const artifact::Program *program;
    ResolvedProgram steps;
    std::vector<bool> fed; ///< One flag per feed.
    /// One flag per feed: bound to the caller's bytes (borrowFeed).
    std::vector<bool> borrowed;
  };

  explicit Session(std::shared_ptr<const Executable> executable)
      : executable_(std::move(executable)) {}

  /// The program named `name`, or NotFound.
  std::optional<SessionError> findProgram(std::string_view name, size_t &index,
                                          std::string &error) const;

  /// Feed `feed` of `program` after checking `dtype` and `size`: its
  /// program's index, its index among the feeds and its buffer.
  std::optional<SessionError> findFeed(std::string_view program, std::string_view feed,
                                       artifact::DType dtype, size_t size, size_t &programIndex,
                                       size_t &feedIndex, uint32_t &buffer,
                                       std::string &error) const;
  /// Binds the feed findFeed found to the `size` bytes at `data` (its
  /// buffer, or borrowed ones), after checking its ids (bindFeed,
  /// bindWrittenFeed, borrowFeed).
  std::optional<SessionError> bindFound(std::string_view program, std::string_view feed,
                                        artifact::DType dtype, const void *data, size_t size,
                                        size_t programIndex, size_t feedIndex,
                                        std::string &error, bool idsChecked = false);
  /// Copies `size` bytes at `data` into the buffer of the feed findFeed
  /// found and binds it (bindFeed, and borrowFeed where it cannot borrow).
  std::optional<SessionError> copyFound(std::string_view program, std::string_view feed,
                                        artifact::DType dtype, const void *data, size_t size,
                                        size_t programIndex, size_t feedIndex, uint32_t buffer,
                                        std::string &error, bool idsChecked = false);
  /// Makes the program read feed `feedIndex` (buffer `buffer`) from its
  /// buffer again if it was borrowed.
  void returnBorrowed(ProgramState &state, size_t feedIndex, uint32_t buffer);
  /// The state buffer of variable `name` after checking `dtype` and `size`.
  std::optional<SessionError> findVariable(std::string_view name,
                                           artifact::DType dtype, size_t size,
                                           uint32_t &buffer,
                                           std::string &error) const;

  /// Finds binding `name` in `bindings` (feeds or fetches: `kind`, plural
  /// `kinds`) and checks `dtype` and `size` against it; gives its buffer and
  /// index.
  std::optional<SessionError>
  checkBinding(const char *kind, const char *kinds, std::string_view program,
               const flatbuffers::Vector<flatbuffers::Offset<artifact::Binding>>
                   *bindings,
               std::string_view name, artifact::DType dtype, size_t size,
               uint32_t &buffer, size_t &index, std::string &error) const;

  std::shared_ptr<const Executable> executable_;
  RegionMemory arena_, state_, constants_;
  /// Declared before programs_, which point to it, so it outlives them.
  std::unique_ptr<collective::AllReduceBuckets> buckets_ =
      std::make_unique<collective::AllReduceBuckets>();
  BufferAddresses addresses_;
  ParameterAccess *parameters_ = nullptr;
  std::vector<ProgramState> programs_;
  /// The program whose fetches are readable: the last run, if nothing has
  /// been bound since.
  std::optional<size_t> readable_;
};

} // namespace kiln::exec

#endif // KILN_RUNTIME_EXEC_SESSION_H
