//===- KilnApi.cpp - The kiln runtime's C API -----------------------------===//
//
// Thin wrappers: each entry point checks its pointers, calls the C++ runtime
// (runtime/exec) and turns a failure into a kiln_status. No C++ exception
// crosses the API: allocation failures become KILN_RESOURCE_EXHAUSTED.
//
//===----------------------------------------------------------------------===//

#include "runtime/api/kiln.h"

#include "runtime/artifact/DTypes.h"
#include "runtime/exec/Session.h"
#include "runtime/support/PrintableText.h"

#include <new>

using namespace kiln;

struct kiln_status {
  kiln_code code;
  std::string message;
};

namespace {

/// A feed or fetch as the API describes it.
struct TensorInfo {
  std::string name;
  kiln_dtype dtype;
  std::vector<int64_t> shape;
  size_t byteSize;
  /// A feed's id bound (artifact.fbs, Binding.id_bound); 0 otherwise.
  int64_t idBound = 0;
};

struct ProgramInfo {
  std::string name;
  std::vector<TensorInfo> feeds, fetches;
};

/// Returned when even a status cannot be allocated; never deleted.
kiln_status outOfMemory{KILN_RESOURCE_EXHAUSTED, ""};

/// A status whose message is one line whatever names it quotes.
kiln_status *makeStatus(kiln_code code, const std::string &message) {
  return new kiln_status{code, printableText(message)};
}

kiln_status *nullArgument(const char *function, const char *argument) {
  try {
    return makeStatus(KILN_INVALID_ARGUMENT,
                      std::string(function) + ": " + argument + " is NULL");
  } catch (const std::bad_alloc &) {
    return &outOfMemory;
  }
}

/// Runs `body`, turning exceptions into statuses.
template <typename Body> kiln_status *guard(Body body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return &outOfMemory;
  } catch (const std::exception &exception) {
    try {
      return makeStatus(KILN_INTERNAL, exception.what());
    } catch (...) {
      return &outOfMemory;
    }
  }
}

kiln_code codeOf(exec::SessionError error) {
  switch (error) {
  case exec::SessionError::NotFound:
    return KILN_NOT_FOUND;
  case exec::SessionError::InvalidArgument:
    return KILN_INVALID_ARGUMENT;
  case exec::SessionError::FailedPrecondition:
    return KILN_FAILED_PRECONDITION;
  case exec::SessionError::Internal:
    break;
  }
  return KILN_INTERNAL;
}

/// The name, dtype and shape of buffer `index` as the API describes them.
TensorInfo describeTensor(const artifact::VerifiedArtifact &artifact,
                          std::string name, uint32_t index) {
  const artifact::Buffer &buffer = *artifact.root().buffers()->Get(index);
  std::vector<int64_t> shape;
  if (buffer.shape())
    shape.assign(buffer.shape()->begin(), buffer.shape()->end());
  return {std::move(name), static_cast<kiln_dtype>(buffer.dtype()),
          std::move(shape), artifact.buffer(index).byteSize};
}

std::vector<TensorInfo> describeBindings(
    const artifact::VerifiedArtifact &artifact,
    const flatbuffers::Vector<flatbuffers::Offset<artifact::Binding>>
        *bindings) {
  std::vector<TensorInfo> infos;
  if (!bindings)
    return infos;
  for (const artifact::Binding *binding : *bindings) {
    infos.push_back(describeTensor(artifact, binding->name()->str(), binding->buffer()));
    infos.back().idBound = binding->id_bound();
  }
  return infos;
}

} // namespace

struct kiln_artifact {
  std::shared_ptr<const exec::Executable> executable;
  std::vector<ProgramInfo> programs;
  std::vector<TensorInfo> variables;

  const ProgramInfo *find(const char *name) const {
    for (const ProgramInfo &program : programs)
      if (program.name == name)
        return &program;
    return nullptr;
  }
};

struct kiln_session {
  std::unique_ptr<exec::Session> session;
};

namespace {

kiln_status *noProgram(const kiln_artifact *artifact, const char *program) {
  std::string names;
  for (const ProgramInfo &info : artifact->programs)
    names += (names.empty() ? "" : ", ") + info.name;
  return makeStatus(KILN_NOT_FOUND, "no program '" + std::string(program) +
                                        "' (programs: " +
                                        (names.empty() ? "none" : names) + ")");
}

kiln_status *fromSession(std::optional<exec::SessionError> failure,
                         std::string &error) {
  return failure ? makeStatus(codeOf(*failure), error) : nullptr;
}

bool isKnownDType(kiln_dtype dtype) {
  return artifact::isKnownDType(static_cast<artifact::DType>(dtype));
}

/// kiln_session_bind_feed and kiln_session_borrow_feed: the argument checks
/// both make (named after `function`), then `bind` with the feed's dtype.
template <typename Bind>
kiln_status *bindFeedAs(const char *function, kiln_session *session, const char *program,
                        const char *feed, kiln_dtype dtype, const void *data,
                        size_t byte_size, const Bind &bind) {
  if (!session)
    return nullArgument(function, "session");
  if (!program)
    return nullArgument(function, "program");
  if (!feed)
    return nullArgument(function, "feed");
  if (!data && byte_size)
    return nullArgument(function, "data");
  return guard([&]() -> kiln_status * {
    if (!isKnownDType(dtype))
      return makeStatus(KILN_INVALID_ARGUMENT, std::string(function) + ": unknown dtype " +
                                                   std::to_string(static_cast<int>(dtype)));
    std::string error;
    return fromSession(bind(static_cast<artifact::DType>(dtype), error), error);
  });
}

} // namespace

extern "C" {

kiln_code kiln_status_code(const kiln_status *status) {
  return status ? status->code : KILN_OK;
}

const char *kiln_status_message(const kiln_status *status) {
  if (status == &outOfMemory)
    return "out of memory";
  return status ? status->message.c_str() : "";
}

void kiln_status_free(kiln_status *status) {
  if (status != &outOfMemory)
    delete status;
}

kiln_status *kiln_artifact_load(const char *path,
                                kiln_artifact **out_artifact) {
  if (!path)
    return nullArgument("kiln_artifact_load", "path");
  if (!out_artifact)
    return nullArgument("kiln_artifact_load", "out_artifact");
  return guard([&]() -> kiln_status * {
    std::string error;
    auto executable = exec::Executable::load(path, error);
    if (!executable)
      return makeStatus(KILN_INVALID_ARTIFACT, error);
    auto artifact = std::make_unique<kiln_artifact>();
    const artifact::VerifiedArtifact &verified = executable->artifact();
    if (const auto *programs = verified.root().programs())
      for (const artifact::Program *program : *programs)
        artifact->programs.push_back(
            {program->name()->str(),
             describeBindings(verified, program->feeds()),
             describeBindings(verified, program->fetches())});
    if (const auto *variables = verified.root().variables())
      for (const artifact::Variable *variable : *variables)
        artifact->variables.push_back(
            describeTensor(verified, variable->name()->str(), variable->buffer()));
    artifact->executable = std::move(executable);
    *out_artifact = artifact.release();
    return nullptr;
  });
}

void kiln_artifact_free(kiln_artifact *artifact) { delete artifact; }

kiln_status *kiln_artifact_program_count(const kiln_artifact *artifact,
                                         size_t *out_count) {
  if (!artifact)
    return nullArgument("kiln_artifact_program_count", "artifact");
  if (!out_count)
    return nullArgument("kiln_artifact_program_count", "out_count");
  *out_count = artifact->programs.size();
  return nullptr;
}

kiln_status *kiln_artifact_program_name(const kiln_artifact *artifact,
                                        size_t index, const char **out_name) {
  if (!artifact)
    return nullArgument("kiln_artifact_program_name", "artifact");
  if (!out_name)
    return nullArgument("kiln_artifact_program_name", "out_name");
  if (index >= artifact->programs.size())
    return guard([&] {
      return makeStatus(KILN_NOT_FOUND,
                        "no program " + std::to_string(index) + " (" +
                            std::to_string(artifact->programs.size()) +
                            " programs)");
    });
  *out_name = artifact->programs[index].name.c_str();
  return nullptr;
}

kiln_status *kiln_artifact_binding_count(const kiln_artifact *artifact,
                                         const char *program,
                                         kiln_binding_kind kind,
                                         size_t *out_count) {
  if (!artifact)
    return nullArgument("kiln_artifact_binding_count", "artifact");
  if (!program)
    return nullArgument("kiln_artifact_binding_count", "program");
  if (!out_count)
    return nullArgument("kiln_artifact_binding_count", "out_count");
  return guard([&]() -> kiln_status * {
    const ProgramInfo *info = artifact->find(program);
    if (!info)
      return noProgram(artifact, program);
    *out_count = kind == KILN_FEED ? info->feeds.size() : info->fetches.size();
    return nullptr;
  });
}

kiln_status *kiln_artifact_binding_info(const kiln_artifact *artifact,
                                        const char *program,
                                        kiln_binding_kind kind, size_t index,
                                        kiln_tensor_info *out_info) {
  if (!artifact)
    return nullArgument("kiln_artifact_binding_info", "artifact");
  if (!program)
    return nullArgument("kiln_artifact_binding_info", "program");
  if (!out_info)
    return nullArgument("kiln_artifact_binding_info", "out_info");
  return guard([&]() -> kiln_status * {
    const ProgramInfo *info = artifact->find(program);
    if (!info)
      return noProgram(artifact, program);
    const auto &list = kind == KILN_FEED ? info->feeds : info->fetches;
    const char *what = kind == KILN_FEED ? "feed" : "fetch";
    if (index >= list.size())
      return makeStatus(KILN_NOT_FOUND, "program '" + info->name + "' has no " +
                                            what + " " + std::to_string(index) +
                                            " (" + std::to_string(list.size()) +
                                            " " + what +
                                            (kind == KILN_FEED ? "s)" : "es)"));
    const TensorInfo &tensor = list[index];
    *out_info = {tensor.name.c_str(), tensor.dtype, tensor.shape.size(),
                 tensor.shape.data(), tensor.byteSize};
    return nullptr;
  });
}

kiln_status *kiln_artifact_binding_id_bound(const kiln_artifact *artifact,
                                            const char *program, size_t index,
                                            int64_t *out_bound) {
  if (!artifact)
    return nullArgument("kiln_artifact_binding_id_bound", "artifact");
  if (!program)
    return nullArgument("kiln_artifact_binding_id_bound", "program");
  if (!out_bound)
    return nullArgument("kiln_artifact_binding_id_bound", "out_bound");
  return guard([&]() -> kiln_status * {
    const ProgramInfo *info = artifact->find(program);
    if (!info)
      return noProgram(artifact, program);
    if (index >= info->feeds.size())
      return makeStatus(KILN_NOT_FOUND, "program '" + info->name + "' has no feed " +
                                            std::to_string(index) + " (" +
                                            std::to_string(info->feeds.size()) + " feeds)");
    *out_bound = info->feeds[index].idBound;
    return nullptr;
  });
}

kiln_status *kiln_session_create(const kiln_artifact *artifact,
                                 kiln_session **out_session) {
  if (!artifact)
    return nullArgument("kiln_session_create", "artifact");
  if (!out_session)
    return nullArgument("kiln_session_create", "out_session");
  return guard([&]() -> kiln_status * {
    std::string error;
    auto session = exec::Session::create(artifact->executable, error);
    if (!session)
      return makeStatus(KILN_RESOURCE_EXHAUSTED, error);
    *out_session = new kiln_session{std::move(session)};
    return nullptr;
  });
}

void kiln_session_free(kiln_session *session) { delete session; }

kiln_status *kiln_session_bind_feed(kiln_session *session, const char *program,
                                    const char *feed, kiln_dtype dtype,
                                    const void *data, size_t byte_size) {
  return bindFeedAs("kiln_session_bind_feed", session, program, feed, dtype, data, byte_size,
                    [&](artifact::DType type, std::string &error) {
                      return session->session->bindFeed(program, feed, type, data, byte_size,
                                                        error);
                    });
}

kiln_status *kiln_session_borrow_feed(kiln_session *session, const char *program,
                                      const char *feed, kiln_dtype dtype, const void *data,
                                      size_t byte_size, int *out_borrowed) {
  if (!out_borrowed)
    return nullArgument("kiln_session_borrow_feed", "out_borrowed");
  return bindFeedAs("kiln_session_borrow_feed", session, program, feed, dtype, data, byte_size,
                    [&](artifact::DType type, std::string &error) {
                      bool borrowed = false;
                      auto failure = session->session->borrowFeed(program, feed, type, data,
                                                                  byte_size, borrowed, error);
                      if (!failure)
                        *out_borrowed = borrowed ? 1 : 0;
                      return failure;
                    });
}

kiln_status *kiln_session_run(kiln_session *session, const char *program) {
  if (!session)
    return nullArgument("kiln_session_run", "session");
  if (!program)
    return nullArgument("kiln_session_run", "program");
  return guard([&] {
    std::string error;
    return fromSession(session->session->run(program, error), error);
  });
}

kiln_status *kiln_session_read_fetch(kiln_session *session, const char *program,
                                     const char *fetch, kiln_dtype dtype,
                                     void *out_data, size_t byte_size) {
  if (!session)
    return nullArgument("kiln_session_read_fetch", "session");
  if (!program)
    return nullArgument("kiln_session_read_fetch", "program");
  if (!fetch)
    return nullArgument("kiln_session_read_fetch", "fetch");
  if (!out_data && byte_size)
    return nullArgument("kiln_session_read_fetch", "out_data");
  return guard([&]() -> kiln_status * {
    if (!isKnownDType(dtype))
      return makeStatus(KILN_INVALID_ARGUMENT,
                        "kiln_session_read_fetch: unknown dtype " +
                            std::to_string(static_cast<int>(dtype)));
    std::string error;
    return fromSession(session->session->readFetch(
                           program, fetch, static_cast<artifact::DType>(dtype),
                           out_data, byte_size, error),
                       error);
  });
}

kiln_status *kiln_artifact_variable_count(const kiln_artifact *artifact,
                                          size_t *out_count) {
  if (!artifact)
    return nullArgument("kiln_artifact_variable_count", "artifact");
  if (!out_count)
    return nullArgument("kiln_artifact_variable_count", "out_count");
  *out_count = artifact->variables.size();
  return nullptr;
}

kiln_status *kiln_artifact_variable_info(const kiln_artifact *artifact,
                                         size_t index,
                                         kiln_tensor_info *out_info) {
  if (!artifact)
    return nullArgument("kiln_artifact_variable_info", "artifact");
  if (!out_info)
    return nullArgument("kiln_artifact_variable_info", "out_info");
  return guard([&]() -> kiln_status * {
    if (index >= artifact->variables.size())
      return makeStatus(KILN_NOT_FOUND,
                        "no variable " + std::to_string(index) + " (" +
                            std::to_string(artifact->variables.size()) +
                            " variables)");
    const TensorInfo &tensor = artifact->variables[index];
    *out_info = {tensor.name.c_str(), tensor.dtype, tensor.shape.size(),
                 tensor.shape.data(), tensor.byteSize};
    return nullptr;
  });
}

kiln_status *kiln_session_read_variable(kiln_session *session,
                                        const char *variable, kiln_dtype dtype,
                                        void *out_data, size_t byte_size) {
  if (!session)
    return nullArgument("kiln_session_read_variable", "session");
  if (!variable)
    return nullArgument("kiln_session_read_variable", "variable");
  if (!out_data && byte_size)
    return nullArgument("kiln_session_read_variable", "out_data");
  return guard([&]() -> kiln_status * {
    std::string error;
    return fromSession(session->session->readVariable(
                           variable, static_cast<artifact::DType>(dtype),
                           out_data, byte_size, error),
                       error);
  });
}

kiln_status *kiln_session_write_variable(kiln_session *session,
                                         const char *variable, kiln_dtype dtype,
                                         const void *data, size_t byte_size) {
  if (!session)
    return nullArgument("kiln_session_write_variable", "session");
  if (!variable)
    return nullArgument("kiln_session_write_variable", "variable");
  if (!data && byte_size)
    return nullArgument("kiln_session_write_variable", "data");
  return guard([&]() -> kiln_status * {
    std::string error;
    return fromSession(session->session->writeVariable(
                           variable, static_cast<artifact::DType>(dtype), data,
                           byte_size, error),
                       error);
  });
}

kiln_status *kiln_session_fill_arena(kiln_session *session, int byte) {
  if (!session)
    return nullArgument("kiln_session_fill_arena", "session");
  if (byte < 0 || byte > 255)
    return guard([&]() -> kiln_status * {
      return makeStatus(KILN_INVALID_ARGUMENT,
                        "kiln_session_fill_arena: byte " + std::to_string(byte) +
                            " is outside 0 to 255");
    });
  session->session->fillArena(static_cast<uint8_t>(byte));
  return nullptr;
}

} // extern "C"
