//===- RuntimeProgramProfileTest.cpp - kiln run --profile's text ----------===//

#include "runtime/exec/ProgramProfile.h"

#include "runtime/artifact/VerifiedArtifact.h"
#include "test/unit/ArtifactTestBuilder.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::test;

namespace {

// Tests the profile of the sample artifact's forward program (two kernels,
// a Gemm, a Copy) from known seconds: times a run are the sums over the
// runs divided by their count, each kind's share of the total, the slowest
// instructions first.
TEST(ProgramProfileTest, SumsByKindAndNamesTheSlowest) {
  std::string error;
  auto artifact = artifact::VerifiedArtifact::fromFileBytes("sample.kiln",
                                                            sampleArtifact().fileBytes(), error);
  ASSERT_NE(artifact, nullptr) << error;
  const artifact::Program *forward = artifact->findProgram("forward");
  ASSERT_NE(forward, nullptr);
  ASSERT_EQ(forward->instructions()->size(), 4u);
  exec::ProgramProfile profile{12, 4, {0.004, 0.012, 0.020, 0.004}, {}, {}, {}};
  EXPECT_EQ(exec::formatProgramProfile(*forward, "forward", profile, 3),
            "profile of forward: 10.000 ms a run in its instructions, over 4 runs after 12 "
            "warm-up runs\n"
            "  GEMM: 5.000 ms (50%, 1 instructions)\n"
            "  kernels: 4.000 ms (40%, 2 instructions)\n"
            "  other: 1.000 ms (10%, 1 instructions)\n"
            "  slowest: [2] Gemm 2x3x4 5.000 ms; [1] KernelCall 1 3.000 ms; [0] KernelCall 0 "
            "1.000 ms\n");
  // The threads each measured step chose: on the kind's line, and beside a
  // slow instruction that runs on more than one.
  profile.threads = {0, 2, 1, 0};
  EXPECT_EQ(exec::formatProgramProfile(*forward, "forward", profile, 2),
            "profile of forward: 10.000 ms a run in its instructions, over 4 runs after 12 "
            "warm-up runs\n"
            "  GEMM: 5.000 ms (50%, 1 instructions)\n"
            "  kernels: 4.000 ms (40%, 2 instructions, 1 on more than one thread)\n"
            "  other: 1.000 ms (10%, 1 instructions)\n"
            "  slowest: [2] Gemm 2x3x4 5.000 ms; [1] KernelCall 1 on 2 threads 3.000 ms\n");
  EXPECT_EQ(exec::formatProgramProfile(*forward, "forward", {12, 0, {0, 0, 0, 0}, {}, {}, {}}),
            "profile of forward: no run after the 12 warm-up runs (train more steps)\n");
}

} // namespace
