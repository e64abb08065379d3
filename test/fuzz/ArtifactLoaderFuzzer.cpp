//===- ArtifactLoaderFuzzer.cpp - libFuzzer target for the loader ---------===//
//
// Feeds every input to the artifact loader twice: as an artifact file, and as
// a FlatBuffer given a valid footer, so that mutations get past the checksum
// into the FlatBuffers verifier and the validator. Whatever loads must keep
// the promises the executor relies on, which are checked here; variables
// small enough are initialized too. Crashes, sanitizer reports and broken
// promises are findings; rejections are not.
//
//   build/test/fuzz/artifact-loader-fuzzer CORPUS_DIR -max_total_time=600
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/ArtifactFile.h"
#include "runtime/artifact/DTypes.h"
#include "runtime/artifact/VerifiedArtifact.h"
#include "runtime/exec/VariableInit.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace kiln;
using namespace kiln::artifact;

namespace {

constexpr uint64_t kMaxInitBytes = 1 << 20;

void require(bool promise, const char *what) {
  if (!promise) {
    std::fprintf(stderr, "broken promise: %s\n", what);
    std::abort();
  }
}

/// Checks what the executor takes for granted, and runs the initializers.
void checkLoaded(const VerifiedArtifact &artifact) {
  const Artifact &root = artifact.root();
  for (uint32_t i = 0; i < artifact.bufferCount(); ++i) {
    const BufferLayout &layout = artifact.buffer(i);
    uint64_t size = artifact.regionSize(layout.region);
    require(layout.offset % 64 == 0, "aligned offset");
    require(layout.offset <= size && layout.byteSize <= size - layout.offset,
            "buffer inside its region");
  }
  if (const auto *variables = root.variables())
    for (const Variable *variable : *variables) {
      require(variable->buffer() < artifact.bufferCount(), "variable buffer");
      const BufferLayout &layout = artifact.buffer(variable->buffer());
      require(layout.region == Region_State, "variable in state");
      if (layout.byteSize > kMaxInitBytes)
        continue;
      std::vector<uint8_t> memory(layout.byteSize + 1, 0xA5);
      exec::initializeVariable(*variable,
                               *root.buffers()->Get(variable->buffer()),
                               layout.elementCount, memory.data());
      require(memory.back() == 0xA5, "initializer stays inside its buffer");
    }
}

void load(std::vector<uint8_t> file) {
  std::string error;
  auto artifact =
      VerifiedArtifact::fromFileBytes("fuzz", std::move(file), error);
  require(artifact || (!error.empty() && error.find('\n') == std::string::npos),
          "one line per rejection");
  if (artifact)
    checkLoaded(*artifact);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  load(std::vector<uint8_t>(data, data + size));
  std::vector<uint8_t> withFooter(data, data + size);
  withFooter.resize(size + kFooterSize);
  encodeArtifactFooter(withFooter.data(), size, withFooter.data() + size);
  load(std::move(withFooter));
  return 0;
}
