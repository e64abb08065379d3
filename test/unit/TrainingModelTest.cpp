//===- TrainingModelTest.cpp - What training reads of an artifact ---------===//
//
// TrainingModel::describe on artifacts built here: which program takes the
// batches (train_step, or accumulate_step with gradient accumulation) and
// one error line for a Training table the runtime cannot follow.
//
//===----------------------------------------------------------------------===//

#include "runtime/train/TrainingModel.h"

#include "test/unit/ArtifactTestBuilder.h"

#include <gtest/gtest.h>

namespace kiln::train {
namespace {

using namespace kiln::artifact;
using namespace kiln::test;

/// The sample artifact with a training table, a train_step and, when
/// `accumulateProgram`, an accumulate_step; the batch program feeds x and y.
ArtifactSpec trainingArtifact(int64_t accumulateSteps, bool accumulateProgram) {
  ArtifactSpec spec = sampleArtifact();
  ProgramSpec forward = spec.programs.back();
  ProgramSpec batch = forward;
  batch.name = accumulateProgram ? kAccumulateProgram : kTrainProgram;
  spec.programs.push_back(batch);
  if (accumulateProgram)
    spec.programs.push_back({kTrainProgram, {}, {}, {}});
  TrainingSpec training;
  training.loss = "out";
  training.batchSize = 2;
  training.accumulateSteps = accumulateSteps;
  spec.training = training;
  return spec;
}

bool describe(const ArtifactSpec &spec, TrainingModel &model, std::string &error) {
  auto artifact = VerifiedArtifact::fromFileBytes("t.kiln", spec.fileBytes(), error);
  if (!artifact)
    return false;
  auto executable = exec::Executable::fromArtifact(std::move(artifact), error);
  return executable && model.describe(executable, "t.kiln", error);
}

// Tests that without accumulation train_step takes the batches.
TEST(TrainingModelTest, TrainStepTakesTheBatches) {
  TrainingModel model;
  std::string error;
  ASSERT_TRUE(describe(trainingArtifact(1, false), model, error)) << error;
  EXPECT_EQ(model.accumulateSteps(), 1);
  EXPECT_STREQ(model.batchProgram(), kTrainProgram);
  ASSERT_EQ(model.feedSpecs().size(), 2u);
  EXPECT_EQ(model.batchSize(), 2);
}

// Tests that with accumulation the feeds are accumulate_step's (train_step
// has none) and the step's examples are the micro-batches'.
TEST(TrainingModelTest, AccumulateStepTakesTheMicroBatches) {
  TrainingModel model;
  std::string error;
  ASSERT_TRUE(describe(trainingArtifact(3, true), model, error)) << error;
  EXPECT_EQ(model.accumulateSteps(), 3);
  EXPECT_STREQ(model.batchProgram(), kAccumulateProgram);
  ASSERT_EQ(model.feedSpecs().size(), 2u);
  EXPECT_EQ(model.feedSpecs()[0].name, "x");
}

// Tests one error line for accumulation without its program, and for a
// count below 1.
TEST(TrainingModelTest, BadAccumulationIsOneError) {
  TrainingModel model;
  std::string error;
  EXPECT_FALSE(describe(trainingArtifact(3, false), model, error));
  EXPECT_EQ(error, "t.kiln: error: training.accumulate_steps is 3 but there is no "
                   "accumulate_step program");
  TrainingModel other;
  error.clear();
  EXPECT_FALSE(describe(trainingArtifact(0, false), other, error));
  EXPECT_EQ(error, "t.kiln: error: training.accumulate_steps is 0, expected >= 1");
}

} // namespace
} // namespace kiln::train
