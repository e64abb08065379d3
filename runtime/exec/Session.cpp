//===- Session.cpp - Memory and programs of one running artifact ----------===//

#include "runtime/exec/Session.h"

#include "runtime/artifact/DTypes.h"
#include "runtime/cpu/IdRange.h"
#include "runtime/cpu/Threads.h"
#include "runtime/support/PrintableText.h"

#include <optional>
#include <cstring>

namespace kiln::exec {

using namespace artifact;

namespace {

using Bindings = flatbuffers::Vector<flatbuffers::Offset<Binding>>;

/// "'name'", control characters escaped.
std::string quoted(std::string_view name) {
  return "'" + printableText(name) + "'";
}

/// "a, b, c", or "none".
template <typename Range, typename Name>
std::string listNames(const Range *range, Name name) {
  std::string text;
  if (range)
    for (const auto *item : *range)
      text +=
          (text.empty() ? "" : ", ") + printableText(name(item)->string_view());
  return text.empty() ? "none" : text;
}

} // namespace

std::unique_ptr<Session>
Session::create(std::shared_ptr<const Executable> executable,
                std::string &error) {
  std::unique_ptr<Session> session(new Session(std::move(executable)));
  const VerifiedArtifact &artifact = session->executable_->artifact();
  const Artifact &root = artifact.root();
  std::string problem;
  auto failure = [&] {
    error = printableText(artifact.path() + ": error: " + problem);
    return nullptr;
  };
  if (!session->arena_.allocate("arena", artifact.regionSize(Region_Arena),
                                problem) ||
      !session->state_.allocate("state", artifact.regionSize(Region_State),
                                problem) ||
      !session->constants_.allocate(
          "constants", artifact.regionSize(Region_Constants), problem))
    return failure();
  if (root.constants() && root.constants()->size())
    std::memcpy(session->constants_.data(), root.constants()->data(),
                root.constants()->size());
  if (!session->constants_.protectReadOnly(problem))
    return failure();

  session->addresses_.reserve(artifact.bufferCount());
  for (uint32_t i = 0; i < artifact.bufferCount(); ++i) {
    const BufferLayout &layout = artifact.buffer(i);
    if (layout.region == Region_Remote) {
      session->addresses_.push_back(nullptr); // Held by parameter servers.
      continue;
    }
    const RegionMemory &region = layout.region == Region_Arena ? session->arena_
                                 : layout.region == Region_State
                                     ? session->state_
                                     : session->constants_;
    session->addresses_.push_back(region.data() + layout.offset);
  }
  if (const auto *programs = root.programs())
    for (const Program *program : *programs)
      session->programs_.push_back(
          {program,
           ResolvedProgram(*session->executable_, *program,
                           session->addresses_, *session->buckets_,
                           &session->parameters_),
           std::vector<bool>(program->feeds() ? program->feeds()->size() : 0),
           std::vector<bool>(program->feeds() ? program->feeds()->size() : 0)});
  return session;
}

bool Session::prefetchPulls(std::string_view program,
                            const std::vector<std::pair<std::string_view, const void *>> &feeds,
                            std::string &error) {
  size_t index = 0;
  std::string notFound;
  if (!parameters_ || findProgram(program, index, notFound))
    return true;
  const ProgramState &state = programs_[index];
  const std::vector<PullOrder> *first = state.steps.firstPulls();
  if (!first || !state.program->feeds())
    return true;
  std::vector<PullOrder> next = *first;
  for (PullOrder &order : next) {
    if (!order.ids)
      continue;
    const void *data = nullptr;
    for (const Binding *binding : *state.program->feeds())
      if (addresses_[binding->buffer()] == order.ids)
        for (const auto &[name, bytes] : feeds)
          if (binding->name()->string_view() == name)
            data = bytes;
    if (!data)
      return true; // Ids computed in the program: nothing to prefetch.
    order.ids = data;
  }
  return parameters_->prefetch(next, error);
}

std::optional<SessionError> Session::findProgram(std::string_view name,
                                                 size_t &index,
                                                 std::string &error) const {
  for (index = 0; index < programs_.size(); ++index)
    if (programs_[index].program->name()->string_view() == name)
      return std::nullopt;
  error = "no program " + quoted(name) + " (programs: " +
          listNames(executable_->artifact().root().programs(),
                    [](const Program *p) { return p->name(); }) +
          ")";
  return SessionError::NotFound;
}

std::optional<SessionError> Session::checkBinding(
    const char *kind, const char *kinds, std::string_view program,
    const Bindings *bindings, std::string_view name, DType dtype, size_t size,
    uint32_t &buffer, size_t &index, std::string &error) const {
  // Called for every feed of every step: the message is built on failure only.
  auto where = [&] { return "program " + quoted(program); };
  for (index = 0; bindings && index < bindings->size(); ++index) {
    const Binding &binding = *bindings->Get(index);
    if (binding.name()->string_view() != name)
      continue;
    buffer = binding.buffer();
    const Buffer &expected =
        *executable_->artifact().root().buffers()->Get(buffer);
    uint64_t bytes = executable_->artifact().buffer(buffer).byteSize;
    if (expected.dtype() == dtype && bytes == size)
      return std::nullopt;
    error = where() + ": " + kind + " " + quoted(name) + " is " +
            dtypeName(expected.dtype()) + " " + shapeString(expected.shape()) +
            " (" + std::to_string(bytes) + " bytes); got " + dtypeName(dtype) +
            " data of " + std::to_string(size) + " bytes";
    return SessionError::InvalidArgument;
  }
  error = where() + " has no " + kind + " " + quoted(name) + " (" + kinds + ": " +
          listNames(bindings, [](const Binding *b) { return b->name(); }) + ")";
  return SessionError::NotFound;
}

std::optional<SessionError> Session::startProfiling(std::string_view program,
                                                    int64_t warmRuns, std::string &error) {
  size_t index = 0;
  if (auto failure = findProgram(program, index, error))
    return failure;
  programs_[index].steps.startProfiling(warmRuns);
  return std::nullopt;
}

std::optional<SessionError> Session::profile(std::string_view program,
                                             ProgramProfile &profile,
                                             std::string &error) const {
  size_t index = 0;
  if (auto failure = findProgram(program, index, error))
    return failure;
  profile = programs_[index].steps.profile();
  return std::nullopt;
}

std::optional<SessionError> Session::threadsInUse(std::string_view program, int &threads,
                                                  std::string &error) const {
  size_t index = 0;
  if (auto failure = findProgram(program, index, error))
    return failure;
  threads = programs_[index].steps.threadsInUse(cpu::availableThreads());
  return std::nullopt;
}

std::optional<SessionError> Session::bindFeed(std::string_view program,
                                              std::string_view feed,
                                              DType dtype, const void *data,
                                              size_t size, std::string &error) {
  size_t programIndex = 0, feedIndex = 0;
  uint32_t buffer = 0;
  if (auto failure = findFeed(program, feed, dtype, size, programIndex, feedIndex, buffer, error))
    return failure;
  return copyFound(program, feed, dtype, data, size, programIndex, feedIndex, buffer, error);
}

std::optional<SessionError> Session::copyFound(std::string_view program, std::string_view feed,
                                               DType dtype, const void *data, size_t size,
                                               size_t programIndex, size_t feedIndex,
                                               uint32_t buffer, std::string &error,
                                               bool idsChecked) {
  programs_[programIndex].fed[feedIndex] = false;
  returnBorrowed(programs_[programIndex], feedIndex, buffer);
  if (size)
    std::memcpy(addresses_[buffer], data, size);
  return bindFound(program, feed, dtype, addresses_[buffer], size, programIndex, feedIndex,
                   error, idsChecked);
}

std::optional<SessionError> Session::borrowFeed(std::string_view program, std::string_view feed,
                                                DType dtype, const void *data, size_t size,
                                                bool &borrowed, std::string &error,
                                                bool idsChecked) {
  size_t programIndex = 0, feedIndex = 0;
  uint32_t buffer = 0;
  borrowed = false;
  if (auto failure = findFeed(program, feed, dtype, size, programIndex, feedIndex, buffer, error))
    return failure;
  ProgramState &state = programs_[programIndex];
  if (!state.steps.canPointFeed(buffer))
    return copyFound(program, feed, dtype, data, size, programIndex, feedIndex, buffer, error,
                     idsChecked);
  state.fed[feedIndex] = false;
  state.steps.pointFeed(buffer, data);
  state.borrowed[feedIndex] = borrowed = true;
  return bindFound(program, feed, dtype, data, size, programIndex, feedIndex, error, idsChecked);
}

void Session::returnBorrowed(ProgramState &state, size_t feedIndex, uint32_t buffer) {
  if (!state.borrowed[feedIndex])
    return;
  state.steps.pointFeed(buffer, addresses_[buffer]);
  state.borrowed[feedIndex] = false;
}

std::optional<SessionError> Session::findFeed(std::string_view program, std::string_view feed,
                                              DType dtype, size_t size, size_t &programIndex,
                                              size_t &feedIndex, uint32_t &buffer,
                                              std::string &error) const {
  if (auto failure = findProgram(program, programIndex, error))
    return failure;
  return checkBinding("feed", "feeds", program, programs_[programIndex].program->feeds(), feed,
                      dtype, size, buffer, feedIndex, error);
}

std::optional<SessionError> Session::feedAddress(std::string_view program, std::string_view feed,
                                                 DType dtype, size_t size, void *&address,
                                                 std::string &error) {
  size_t programIndex = 0, feedIndex = 0;
  uint32_t buffer = 0;
  if (auto failure = findFeed(program, feed, dtype, size, programIndex, feedIndex, buffer, error))
    return failure;
  ProgramState &state = programs_[programIndex];
  // Whatever the buffer held is gone: bound again only by bindWrittenFeed.
  state.fed[feedIndex] = false;
  returnBorrowed(state, feedIndex, buffer);
  readable_.reset();
  address = addresses_[buffer];
  return std::nullopt;
}

std::optional<SessionError> Session::bindWrittenFeed(std::string_view program,
                                                     std::string_view feed, DType dtype,
                                                     size_t size, std::string &error,
                                                     bool idsChecked) {
  size_t programIndex = 0, feedIndex = 0;
  uint32_t buffer = 0;
  if (auto failure = findFeed(program, feed, dtype, size, programIndex, feedIndex, buffer, error))
    return failure;
  ProgramState &state = programs_[programIndex];
  returnBorrowed(state, feedIndex, buffer);
  return bindFound(program, feed, dtype, addresses_[buffer], size, programIndex, feedIndex,
                   error, idsChecked);
}

std::optional<SessionError> Session::bindFound(std::string_view program, std::string_view feed,
                                               DType dtype, const void *data, size_t size,
                                               size_t programIndex, size_t feedIndex,
                                               std::string &error, bool idsChecked) {
  ProgramState &state = programs_[programIndex];
  // Ids index a table's rows or a loss's classes: one outside them is an
  // error, as in PyTorch and TensorFlow (the compiled gather would clamp it
  // and a sparse update would skip it, silently disagreeing).
  // An embedding bag's lists are padded with -1; a loss's labels may hold
  // its ignore_index.
  const Binding *binding = state.program->feeds()->Get(feedIndex);
  int64_t bound = binding->id_bound();
  bool padded = binding->padded_ids();
  std::optional<int64_t> ignored;
  if (binding->ignores_id())
    ignored = binding->ignored_id();
  if (!idsChecked && bound > 0 && (dtype == DType_I32 || dtype == DType_I64)) {
    size_t count = size / (dtype == DType_I64 ? 8 : 4);
    // Valid: [0, bound), and -1 where padded.
    int64_t low = padded ? -1 : 0;
    uint64_t range = static_cast<uint64_t>(bound - low);
    // One branch-free pass (cpu/IdRange.h: this runs before every step on
    // the step's own thread); the element is looked for only when one is bad
    // (or, with an ignored label, when one may be that label).
    bool any = dtype == DType_I64
                   ? cpu::anyIdOutside(static_cast<const int64_t *>(data), count, low, range)
                   : cpu::anyIdOutside(static_cast<const int32_t *>(data), count, low, range);
    for (size_t i = 0; any && i < count; ++i) {
      int64_t id = dtype == DType_I64 ? static_cast<const int64_t *>(data)[i]
                                      : static_cast<const int32_t *>(data)[i];
      if (static_cast<uint64_t>(id - low) >= range && id != ignored) {
        error = "program " + quoted(program) + ": feed " + quoted(feed) + ": element " +
                std::to_string(i) + " is " + std::to_string(id) + ", outside [0, " +
                std::to_string(bound) + ") (the rows or classes it indexes" +
                (ignored ? ", and not the ignored label " + std::to_string(*ignored) : "") +
                ")";
        return SessionError::InvalidArgument;
      }
    }
  }
  state.fed[feedIndex] = true;
  readable_.reset();
  return std::nullopt;
}

std::optional<SessionError> Session::run(std::string_view program,
                                         std::string &error) {
  size_t index = 0;
  if (auto failure = findProgram(program, index, error))
    return failure;
  ProgramState &state = programs_[index];
  for (size_t i = 0; i < state.fed.size(); ++i)
    if (!state.fed[i]) {
      error = "program " + quoted(program) + ": feed " +
              quoted(state.program->feeds()->Get(i)->name()->string_view()) +
              " is not bound";
      return SessionError::FailedPrecondition;
    }
  // A run may overwrite any feed's bytes, of this program or another.
  for (ProgramState &other : programs_)
    other.fed.assign(other.fed.size(), false);
  readable_.reset();
  std::string problem;
  if (!state.steps.run(problem)) {
    error = "program " + quoted(program) + ": " + problem;
    return SessionError::Internal;
  }
  readable_ = index;
  return std::nullopt;
}

std::optional<SessionError> Session::readFetch(std::string_view program,
                                               std::string_view fetch,
                                               DType dtype, void *data,
                                               size_t size,
                                               std::string &error) const {
  size_t programIndex = 0, fetchIndex = 0;
  uint32_t buffer = 0;
  if (auto failure = findProgram(program, programIndex, error))
    return failure;
  const ProgramState &state = programs_[programIndex];
  if (auto failure =
          checkBinding("fetch", "fetches", program, state.program->fetches(),
                       fetch, dtype, size, buffer, fetchIndex, error))
    return failure;
  if (readable_ != programIndex) {
    error = "program " + quoted(program) +
            ": fetches are readable after it runs, until the next bind or "
            "run; it has not run since";
    return SessionError::FailedPrecondition;
  }
  if (size)
    std::memcpy(data, addresses_[buffer], size);
  return std::nullopt;
}

std::optional<SessionError> Session::findVariable(std::string_view name,
                                                  DType dtype, size_t size,
                                                  uint32_t &buffer,
                                                  std::string &error) const {
  const artifact::Artifact &root = executable_->artifact().root();
  if (root.variables())
    for (const artifact::Variable *variable : *root.variables()) {
      if (variable->name()->string_view() != name)
        continue;
      buffer = variable->buffer();
      if (variable->placement()) {
        error = "variable " + quoted(name) +
                " is held by parameter servers, not by this session";
        return SessionError::FailedPrecondition;
      }
      const artifact::Buffer *described = root.buffers()->Get(buffer);
      size_t expected = executable_->artifact().buffer(buffer).byteSize;
      if (described->dtype() != dtype || size != expected) {
        error = "variable " + quoted(name) + " holds " +
                std::to_string(expected) + " bytes of " +
                artifact::dtypeName(described->dtype()) + ", not " +
                std::to_string(size) + " bytes of " + artifact::dtypeName(dtype);
        return SessionError::InvalidArgument;
      }
      return std::nullopt;
    }
  error = "no variable " + quoted(name);
  return SessionError::NotFound;
}

std::optional<SessionError> Session::readVariable(std::string_view name,
                                                  DType dtype, void *data,
                                                  size_t size,
                                                  std::string &error) const {
  uint32_t buffer = 0;
  if (auto failure = findVariable(name, dtype, size, buffer, error))
    return failure;
  if (size)
    std::memcpy(data, addresses_[buffer], size);
  return std::nullopt;
}

std::optional<SessionError> Session::writeVariable(std::string_view name,
                                                   DType dtype, const void *data,
                                                   size_t size,
                                                   std::string &error) {
  uint32_t buffer = 0;
  if (auto failure = findVariable(name, dtype, size, buffer, error))
    return failure;
  if (size)
    std::memcpy(addresses_[buffer], data, size);
  return std::nullopt;
}

void Session::fillArena(uint8_t byte) {
  if (arena_.size())
    std::memset(arena_.data(), byte, arena_.size());
  for (ProgramState &state : programs_)
    state.fed.assign(state.fed.size(), false);
  readable_.reset();
}

} // namespace kiln::exec
