//===- RuntimeKernelLibraryTest.cpp - Placing an artifact's kernels -------===//

#include "runtime/cpu/KernelLibrary.h"

#include "runtime/cpu/CpuFeatures.h"
#include "runtime/exec/Executable.h"
#include "test/unit/ArtifactTestBuilder.h"
#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::cpu;
using namespace kiln::test;

namespace {

const std::vector<std::string> kSymbols = {"kiln_test_add_f32",
                                           "kiln_test_relu_f32"};

/// Sets $TMPDIR for the life of the object.
class ScopedTmpdir {
public:
  explicit ScopedTmpdir(const std::string &path) {
    const char *old = std::getenv("TMPDIR");
    if (old)
      old_ = old;
    hadOld_ = old != nullptr;
    ::setenv("TMPDIR", path.c_str(), 1);
  }
  ~ScopedTmpdir() {
    if (hadOld_)
      ::setenv("TMPDIR", old_.c_str(), 1);
    else
      ::unsetenv("TMPDIR");
  }

private:
  std::string old_;
  bool hadOld_ = false;
};

/// Calls the add kernel on small vectors.
void expectAddWorks(const KernelLibrary &library) {
  int64_t count = 3;
  float a[3] = {1, 2, 3}, b[3] = {10, 20, 30}, out[3] = {0, 0, 0};
  void *args[] = {&count, a, b, out};
  library.function(0)(args);
  EXPECT_EQ(out[0], 11);
  EXPECT_EQ(out[2], 33);
}

TEST(RuntimeKernelLibraryTest, PlacesKernelsInAMemoryFile) {
  std::vector<uint8_t> object = testKernelObject();
  TemporaryDirectory tmp;
  ScopedTmpdir scoped(tmp.path());
  std::string error;
  auto library = KernelLibrary::load(object.data(), object.size(), kSymbols,
                                     KernelPlacement::MemoryFile, error);
  ASSERT_NE(library, nullptr) << error;
  EXPECT_EQ(library->placement(), KernelPlacement::MemoryFile);
  EXPECT_EQ(library->size(), 2u);
  expectAddWorks(*library);
  EXPECT_TRUE(tmp.entries().empty());
}

TEST(RuntimeKernelLibraryTest, PlacesKernelsInARemovedTemporaryFile) {
  std::vector<uint8_t> object = testKernelObject();
  TemporaryDirectory tmp;
  ScopedTmpdir scoped(tmp.path());
  std::string error;
  auto library = KernelLibrary::load(object.data(), object.size(), kSymbols,
                                     KernelPlacement::TemporaryFile, error);
  ASSERT_NE(library, nullptr) << error;
  EXPECT_EQ(library->placement(), KernelPlacement::TemporaryFile);
  expectAddWorks(*library);
  EXPECT_TRUE(tmp.entries().empty()); // Removed right after dlopen.
}

// Tests that two loads of one object are two libraries: dlopen must not hand
// back the first for the second's name.
TEST(RuntimeKernelLibraryTest, EachLoadIsItsOwnCopy) {
  std::vector<uint8_t> object = testKernelObject();
  std::string error;
  for (KernelPlacement placement :
       {KernelPlacement::MemoryFile, KernelPlacement::TemporaryFile}) {
    auto first = KernelLibrary::load(object.data(), object.size(), kSymbols,
                                     placement, error);
    auto second = KernelLibrary::load(object.data(), object.size(), kSymbols,
                                      placement, error);
    ASSERT_NE(first, nullptr) << error;
    ASSERT_NE(second, nullptr) << error;
    EXPECT_NE(first->function(0), second->function(0));
    first.reset();
    expectAddWorks(*second);
  }
}

TEST(RuntimeKernelLibraryTest, RejectsAMissingSymbol) {
  std::vector<uint8_t> object = testKernelObject();
  std::string error;
  EXPECT_EQ(KernelLibrary::load(object.data(), object.size(),
                                {"kiln_test_add_f32", "kiln_test_nope"},
                                KernelPlacement::MemoryFile, error),
            nullptr);
  EXPECT_EQ(error, "kernels.symbols[1]: 'kiln_test_nope' is not defined in "
                   "kernels.object");
}

TEST(RuntimeKernelLibraryTest, RejectsAnObjectThatIsNotASharedLibrary) {
  std::vector<uint8_t> garbage(4096, 0x5A);
  TemporaryDirectory tmp;
  ScopedTmpdir scoped(tmp.path());
  for (KernelPlacement placement :
       {KernelPlacement::MemoryFile, KernelPlacement::TemporaryFile}) {
    std::string error;
    EXPECT_EQ(KernelLibrary::load(garbage.data(), garbage.size(), kSymbols,
                                  placement, error),
              nullptr);
    EXPECT_EQ(error.rfind("kernels.object: cannot load the shared object: ", 0),
              0u)
        << error;
    EXPECT_NE(error.find("ELF"), std::string::npos) << error;
    EXPECT_EQ(error.find("/proc/self/fd"), std::string::npos) << error;
    EXPECT_TRUE(tmp.entries().empty());
  }
}

TEST(RuntimeKernelLibraryTest, ReportsAnUnusableTemporaryDirectory) {
  std::vector<uint8_t> object = testKernelObject();
  ScopedTmpdir scoped("/no/such/dir");
  std::string error;
  EXPECT_EQ(KernelLibrary::load(object.data(), object.size(), kSymbols,
                                KernelPlacement::TemporaryFile, error),
            nullptr);
  EXPECT_EQ(error, "kernels.object: cannot load the shared object: cannot "
                   "create a temporary file in /no/such/dir: No such file or "
                   "directory");
}

TEST(RuntimeKernelLibraryTest, ListsMissingCpuFeatures) {
  auto fakeHost = [](std::string_view name) -> std::optional<bool> {
    if (name == "avx2" || name == "avx512f")
      return false;
    if (name == "fma" || name == "sse2")
      return true;
    return std::nullopt;
  };
  EXPECT_EQ(missingCpuFeatures("+avx2,-avx512f,+fma,+mystery,+sse2,,+avx512f",
                               fakeHost),
            (std::vector<std::string>{"avx2", "avx512f"}));
  EXPECT_TRUE(missingCpuFeatures("", fakeHost).empty());
  EXPECT_EQ(hostHasCpuFeature("sse2"), true); // Every x86-64 CPU.
  EXPECT_EQ(hostHasCpuFeature("mystery"), std::nullopt);
}

// --- Executable: the checks before kernels are placed ------------------------

std::string executableError(const ArtifactSpec &spec) {
  std::string error;
  auto artifact = artifact::VerifiedArtifact::fromFileBytes(
      "test.kiln", spec.fileBytes(), error);
  EXPECT_NE(artifact, nullptr) << error;
  if (!artifact)
    return error;
  EXPECT_EQ(exec::Executable::fromArtifact(std::move(artifact), error),
            nullptr);
  return error;
}

TEST(RuntimeKernelLibraryTest, ExecutableRejectsOtherTargets) {
  ArtifactSpec spec = sampleArtifact();
  spec.target = "cuda";
  EXPECT_EQ(executableError(spec), "test.kiln: error: target: 'cuda': this "
                                   "runtime runs 'cpu' artifacts");
}

TEST(RuntimeKernelLibraryTest, ExecutableRejectsOtherKernelFormats) {
  ArtifactSpec spec = sampleArtifact();
  spec.kernels->format = "elf-aarch64-shared";
  EXPECT_EQ(executableError(spec),
            "test.kiln: error: kernels.format: 'elf-aarch64-shared': this "
            "runtime loads 'elf-x86_64-shared'");
}

TEST(RuntimeKernelLibraryTest, ExecutableRejectsKernelsForAnotherCpu) {
  std::string lacking;
  for (const char *feature : {"xop", "fma4", "amx-tile", "avx512fp16"})
    if (hostHasCpuFeature(feature) == false) {
      lacking = feature;
      break;
    }
  if (lacking.empty())
    GTEST_SKIP() << "this CPU has every feature the test could ask for";
  ArtifactSpec spec = sampleArtifact();
  spec.kernels->cpu = "futurecpu";
  spec.kernels->features = "+sse2,+" + lacking;
  EXPECT_EQ(executableError(spec),
            "test.kiln: error: kernels.features: this CPU lacks " + lacking +
                " (the kernels were compiled for futurecpu)");
}

TEST(RuntimeKernelLibraryTest, ExecutableReportsAMissingKernelSymbol) {
  ArtifactSpec spec = sampleArtifact();
  spec.kernels->symbols[2] = "kiln_test_gone";
  EXPECT_EQ(executableError(spec),
            "test.kiln: error: kernels.symbols[2]: 'kiln_test_gone' is not "
            "defined in kernels.object");
}

TEST(RuntimeKernelLibraryTest, ExecutableWithoutKernelsPlacesNone) {
  ArtifactSpec spec = sampleArtifact();
  spec.programs.erase(spec.programs.begin() + 1); // Only init is left.
  spec.kernels->symbols.clear();
  spec.kernels->format = "";
  std::string error;
  auto artifact = artifact::VerifiedArtifact::fromFileBytes(
      "test.kiln", spec.fileBytes(), error);
  ASSERT_NE(artifact, nullptr) << error;
  auto executable = exec::Executable::fromArtifact(std::move(artifact), error);
  ASSERT_NE(executable, nullptr) << error;
  EXPECT_EQ(executable->kernels(), nullptr);
}

} // namespace
