//===- RuntimeSessionTest.cpp - Running artifacts -------------------------===//

#include "runtime/cpu/HugePages.h"
#include "runtime/exec/RegionMemory.h"
#include "runtime/exec/Session.h"

#include "test/unit/ArtifactTestBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace kiln;
using namespace kiln::artifact;
using namespace kiln::exec;
using namespace kiln::test;

namespace {

enum : uint32_t { Count, X, Y, Sum, Relu, Out, CopyOut, W };

std::shared_ptr<const Executable> load(const ArtifactSpec &spec) {
  std::string error;
  auto artifact =
      VerifiedArtifact::fromFileBytes("test.kiln", spec.fileBytes(), error);
  EXPECT_NE(artifact, nullptr) << error;
  if (!artifact)
    return nullptr;
  auto executable = Executable::fromArtifact(std::move(artifact), error);
  EXPECT_NE(executable, nullptr) << error;
  return executable;
}

class RuntimeSessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    executable = load(sampleArtifact());
    ASSERT_NE(executable, nullptr);
    session = Session::create(executable, error);
    ASSERT_NE(session, nullptr) << error;
  }

  std::optional<SessionError> bind(const char *feed,
                                   const std::vector<float> &data) {
    return session->bindFeed("forward", feed, DType_F32, data.data(),
                             data.size() * sizeof(float), error);
  }

  std::vector<float> fetch(const char *name, size_t count) {
    std::vector<float> values(count);
    auto failure = session->readFetch("forward", name, DType_F32, values.data(),
                                      count * 4, error);
    EXPECT_FALSE(failure) << error;
    return values;
  }

  std::vector<float> floatsAt(uint32_t buffer, size_t count) {
    std::vector<float> values(count);
    std::memcpy(values.data(), session->bufferAddress(buffer), count * 4);
    return values;
  }

  void poison(uint32_t buffer, size_t count) {
    std::vector<float> nan(count, NAN);
    std::memcpy(session->bufferAddress(buffer), nan.data(), count * 4);
  }

  std::shared_ptr<const Executable> executable;
  std::unique_ptr<Session> session;
  std::string error;
  std::mt19937 rng{std::random_device{}()};
};

std::vector<float> randomFloats(std::mt19937 &rng, size_t count) {
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> values(count);
  for (float &x : values)
    x = value(rng);
  return values;
}

// Tests the whole sample: init fills the variable, forward runs two kernels,
// a Gemm and a Copy, and every fetch matches a float64 reference.
TEST_F(RuntimeSessionTest, RunsInitThenForward) {
  ASSERT_FALSE(session->run("init", error)) << error;
  std::vector<float> w = floatsAt(W, 12);
  double limit = std::sqrt(6.0 / 7);
  for (float value : w) {
    EXPECT_GE(value, -limit);
    EXPECT_LT(value, limit);
  }
  EXPECT_NE(w[0], w[1]);

  std::vector<float> x = randomFloats(rng, 8), y = randomFloats(rng, 8);
  poison(Sum, 8);
  poison(Relu, 8);
  poison(Out, 6);
  poison(CopyOut, 6);
  ASSERT_FALSE(bind("x", x)) << error;
  ASSERT_FALSE(bind("y", y)) << error;
  ASSERT_FALSE(session->run("forward", error)) << error;

  std::vector<float> relu = fetch("relu", 8);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(relu[i], std::max(x[i] + y[i], 0.0f)) << i;
  std::vector<float> out = fetch("out", 6), copy = fetch("copy", 6);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      double expected = 0;
      for (int k = 0; k < 4; ++k)
        expected += double(relu[i * 4 + k]) * w[k * 3 + j];
      EXPECT_NEAR(out[i * 3 + j], expected, 1e-5) << i << "," << j;
    }
  EXPECT_EQ(out, copy);
}

TEST_F(RuntimeSessionTest, RegionsAreAlignedAndConstantsCopied) {
  for (uint32_t buffer = 0; buffer <= W; ++buffer)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(session->bufferAddress(buffer)) % 64,
              0u);
  int64_t count;
  std::memcpy(&count, session->bufferAddress(Count), sizeof count);
  EXPECT_EQ(count, 8);
}

TEST_F(RuntimeSessionTest, InitIsDeterministicAndVariablesPersist) {
  ASSERT_FALSE(session->run("init", error));
  std::vector<float> first = floatsAt(W, 12);
  auto other = Session::create(executable, error);
  ASSERT_NE(other, nullptr);
  ASSERT_FALSE(other->run("init", error));
  std::vector<float> second(12);
  std::memcpy(second.data(), other->bufferAddress(W), 48);
  EXPECT_EQ(first, second);
  // Sessions do not share memory.
  EXPECT_NE(session->bufferAddress(W), other->bufferAddress(W));

  std::vector<float> x = randomFloats(rng, 8), y = randomFloats(rng, 8);
  ASSERT_FALSE(bind("x", x));
  ASSERT_FALSE(bind("y", y));
  ASSERT_FALSE(session->run("forward", error));
  std::vector<float> out = fetch("out", 6);
  ASSERT_FALSE(bind("x", x));
  ASSERT_FALSE(bind("y", y));
  ASSERT_FALSE(session->run("forward", error));
  EXPECT_EQ(fetch("out", 6), out);
  EXPECT_EQ(floatsAt(W, 12), first);
}

TEST_F(RuntimeSessionTest, RejectsUnknownProgramsAndFeeds) {
  std::vector<float> x(8);
  EXPECT_EQ(session->run("train_step", error), SessionError::NotFound);
  EXPECT_EQ(error, "no program 'train_step' (programs: init, forward)");
  EXPECT_EQ(session->bindFeed("eval", "x", DType_F32, x.data(), 32, error),
            SessionError::NotFound);
  EXPECT_EQ(bind("z", x), SessionError::NotFound);
  EXPECT_EQ(error, "program 'forward' has no feed 'z' (feeds: x, y)");
  EXPECT_EQ(session->bindFeed("init", "x", DType_F32, x.data(), 32, error),
            SessionError::NotFound);
  EXPECT_EQ(error, "program 'init' has no feed 'x' (feeds: none)");
}

// Tests the threads a program's instructions take (what a shuffled run's
// reader looks at): none chosen before the sample's product first runs, one
// after (its two rows do not split); the init program's fills take one.
TEST_F(RuntimeSessionTest, SaysHowManyThreadsItsInstructionsTake) {
  int threads = -1;
  ASSERT_FALSE(session->threadsInUse("forward", threads, error)) << error;
  EXPECT_EQ(threads, 0);
  ASSERT_FALSE(session->threadsInUse("init", threads, error)) << error;
  EXPECT_EQ(threads, 1);
  ASSERT_FALSE(bind("x", std::vector<float>(8))) << error;
  ASSERT_FALSE(bind("y", std::vector<float>(8))) << error;
  ASSERT_FALSE(session->run("forward", error)) << error;
  ASSERT_FALSE(session->threadsInUse("forward", threads, error)) << error;
  EXPECT_EQ(threads, 1);
  EXPECT_EQ(session->threadsInUse("eval", threads, error), SessionError::NotFound);
}

TEST_F(RuntimeSessionTest, ChecksFeedDTypeAndSize) {
  std::vector<float> x(8);
  EXPECT_EQ(session->bindFeed("forward", "x", DType_I32, x.data(), 32, error),
            SessionError::InvalidArgument);
  EXPECT_EQ(error, "program 'forward': feed 'x' is f32 [2, 4] (32 bytes); got "
                   "i32 data of 32 bytes");
  EXPECT_EQ(session->bindFeed("forward", "x", DType_F32, x.data(), 28, error),
            SessionError::InvalidArgument);
  EXPECT_EQ(error, "program 'forward': feed 'x' is f32 [2, 4] (32 bytes); got "
                   "f32 data of 28 bytes");
}

// Tests the binding rules: every feed bound before each run; fetches
// readable after a run until the next bind or run.
TEST_F(RuntimeSessionTest, RunConsumesBindingsAndBindHidesFetches) {
  std::vector<float> x(8, 1), y(8, 2);
  ASSERT_FALSE(bind("x", x));
  EXPECT_EQ(session->run("forward", error), SessionError::FailedPrecondition);
  EXPECT_EQ(error, "program 'forward': feed 'y' is not bound");

  std::vector<float> out(6);
  EXPECT_EQ(
      session->readFetch("forward", "out", DType_F32, out.data(), 24, error),
      SessionError::FailedPrecondition);
  EXPECT_EQ(error, "program 'forward': fetches are readable after it runs, "
                   "until the next bind or run; it has not run since");

  ASSERT_FALSE(bind("y", y));
  ASSERT_FALSE(session->run("forward", error)) << error;
  EXPECT_FALSE(
      session->readFetch("forward", "out", DType_F32, out.data(), 24, error));
  // The run consumed both bindings.
  EXPECT_EQ(session->run("forward", error), SessionError::FailedPrecondition);
  EXPECT_EQ(error, "program 'forward': feed 'x' is not bound");
  // A bind hides the last run's fetches.
  ASSERT_FALSE(bind("x", x));
  EXPECT_EQ(
      session->readFetch("forward", "out", DType_F32, out.data(), 24, error),
      SessionError::FailedPrecondition);
  // So does running another program, and it consumes forward's bindings.
  ASSERT_FALSE(bind("y", y));
  ASSERT_FALSE(session->run("init", error));
  EXPECT_EQ(
      session->readFetch("forward", "out", DType_F32, out.data(), 24, error),
      SessionError::FailedPrecondition);
  EXPECT_EQ(session->run("forward", error), SessionError::FailedPrecondition);
}

// Tests binding a feed written in place (feedAddress, then bindWrittenFeed,
// as training writes each batch): the same fetches as bindFeed's copy; the
// address alone leaves the feed unbound, and it is checked as bindFeed is.
TEST_F(RuntimeSessionTest, BindsAFeedWrittenInPlace) {
  std::vector<float> x = {1, -2, 3, -4, 5, -6, 7, -8}, y(8, 0.5f);
  ASSERT_FALSE(bind("x", x));
  ASSERT_FALSE(bind("y", y));
  ASSERT_FALSE(session->run("forward", error)) << error;
  std::vector<float> copied = fetch("out", 6);

  ASSERT_FALSE(bind("y", y));
  void *address = nullptr;
  ASSERT_FALSE(session->feedAddress("forward", "x", DType_F32, 32, address, error)) << error;
  std::memcpy(address, x.data(), 32);
  EXPECT_EQ(session->run("forward", error), SessionError::FailedPrecondition);
  EXPECT_EQ(error, "program 'forward': feed 'x' is not bound");
  ASSERT_FALSE(bind("y", y));
  ASSERT_FALSE(session->bindWrittenFeed("forward", "x", DType_F32, 32, error)) << error;
  ASSERT_FALSE(session->run("forward", error)) << error;
  EXPECT_EQ(fetch("out", 6), copied);

  EXPECT_EQ(session->feedAddress("forward", "x", DType_F32, 28, address, error),
            SessionError::InvalidArgument);
  EXPECT_EQ(error, "program 'forward': feed 'x' is f32 [2, 4] (32 bytes); got "
                   "f32 data of 28 bytes");
  EXPECT_EQ(session->bindWrittenFeed("forward", "z", DType_F32, 32, error),
            SessionError::NotFound);
}

// Tests the regions' memory: zero-filled and writable to its last byte,
// page-aligned; from 2 MB on (a session's variables holding an embedding
// table) aligned to a huge page; read-only when protected; an empty region
// has an aligned address.
TEST(RuntimeRegionMemoryTest, IsAlignedZeroedAndWritable) {
  for (uint64_t size : {uint64_t(1), uint64_t(65536) + 5, (uint64_t(5) << 20) + 12345}) {
    SCOPED_TRACE(size);
    RegionMemory region;
    std::string error;
    ASSERT_TRUE(region.allocate("test", size, error)) << error;
    EXPECT_EQ(region.size(), size);
    uintptr_t address = reinterpret_cast<uintptr_t>(region.data());
    EXPECT_EQ(address % 4096, 0u);
    if (size >= (uint64_t(2) << 20)) {
      EXPECT_EQ(address % (uint64_t(2) << 20), 0u);
    }
    bool zero = true;
    for (uint64_t i = 0; i < size; ++i)
      zero = zero && region.data()[i] == 0;
    EXPECT_TRUE(zero);
    std::memset(region.data(), 0x5a, size);
    EXPECT_EQ(region.data()[size - 1], 0x5a);
    EXPECT_TRUE(region.protectReadOnly(error)) << error;
    EXPECT_EQ(region.data()[0], 0x5a);
  }
  RegionMemory empty;
  std::string error;
  ASSERT_TRUE(empty.allocate("empty", 0, error));
  EXPECT_NE(empty.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(empty.data()) % 64, 0u);
}

// Tests the parameter servers' row allocator: vectors that grow across a
// huge page (reallocated from std::allocator's memory onto huge-page-aligned
// memory and back as they shrink to fit) keep their values; the large ones
// start on a huge page.
TEST(RuntimeHugePagesTest, VectorsKeepTheirValuesAcrossTheThreshold) {
  std::vector<float, cpu::HugePageAllocator<float>> rows;
  size_t big = cpu::kHugePageBytes / sizeof(float) + 1000;
  for (size_t n : {size_t(10), big / 2, big, 3 * big}) {
    size_t old = rows.size();
    rows.resize(n);
    for (size_t i = old; i < n; ++i)
      rows[i] = static_cast<float>(i);
    if (rows.capacity() * sizeof(float) >= cpu::kHugePageBytes) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(rows.data()) % cpu::kHugePageBytes, 0u) << n;
    }
  }
  rows.resize(100);
  rows.shrink_to_fit();
  for (size_t i = 0; i < rows.size(); ++i)
    ASSERT_EQ(rows[i], static_cast<float>(i));
  std::vector<float, cpu::HugePageAllocator<float>> copy(3 * big, 2.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % cpu::kHugePageBytes, 0u);
  EXPECT_EQ(copy.back(), 2.0f);
}

// Tests binding a feed to the caller's bytes where they are (borrowFeed):
// the program reads them there, not its buffer (poisoned); binding the feed
// by copy afterwards reads the buffer again (the borrowed bytes poisoned);
// a feed whose views the artifact does not state, or that the program
// fetches, is copied instead, with the same results.
TEST(RuntimeSessionBorrowTest, ReadsABorrowedFeedWhereItIs) {
  ArtifactSpec spec = sampleArtifact();
  ProgramSpec &forward = spec.programs[1];
  std::get<KernelCallSpec>(forward.instructions[0]).outputs = 1; // add: writes sum.
  forward.feeds[0].views = std::vector<uint32_t>{};                 // x: no views.
  std::shared_ptr<const Executable> executable = load(spec);
  ASSERT_NE(executable, nullptr);
  std::string error;
  std::unique_ptr<Session> session = Session::create(executable, error);
  ASSERT_NE(session, nullptr) << error;
  ASSERT_FALSE(session->run("init", error)) << error;
  std::vector<float> x = {1, -2, 3, -4, 5, -6, 7, -8}, y(8, 0.5f), out(6), copied(6);
  auto bindY = [&] {
    return session->bindFeed("forward", "y", DType_F32, y.data(), 32, error);
  };
  ASSERT_FALSE(session->bindFeed("forward", "x", DType_F32, x.data(), 32, error));
  ASSERT_FALSE(bindY());
  ASSERT_FALSE(session->run("forward", error)) << error;
  ASSERT_FALSE(session->readFetch("forward", "out", DType_F32, copied.data(), 24, error));

  std::vector<float> nan(8, NAN), borrowedX = x;
  bool borrowed = false;
  ASSERT_FALSE(session->borrowFeed("forward", "x", DType_F32, borrowedX.data(), 32, borrowed,
                                   error))
      << error;
  EXPECT_TRUE(borrowed);
  std::memcpy(session->bufferAddress(X), nan.data(), 32);
  ASSERT_FALSE(bindY());
  ASSERT_FALSE(session->run("forward", error)) << error;
  ASSERT_FALSE(session->readFetch("forward", "out", DType_F32, out.data(), 24, error));
  EXPECT_EQ(out, copied);

  // Copied again: the buffer is read, not the borrowed bytes.
  ASSERT_FALSE(session->bindFeed("forward", "x", DType_F32, x.data(), 32, error));
  std::fill(borrowedX.begin(), borrowedX.end(), NAN);
  ASSERT_FALSE(bindY());
  ASSERT_FALSE(session->run("forward", error)) << error;
  ASSERT_FALSE(session->readFetch("forward", "out", DType_F32, out.data(), 24, error));
  EXPECT_EQ(out, copied);

  // y's views are not stated: copied (the same results).
  ASSERT_FALSE(session->borrowFeed("forward", "x", DType_F32, x.data(), 32, borrowed, error));
  EXPECT_TRUE(borrowed);
  ASSERT_FALSE(session->borrowFeed("forward", "y", DType_F32, y.data(), 32, borrowed, error));
  EXPECT_FALSE(borrowed);
  ASSERT_FALSE(session->run("forward", error)) << error;
  ASSERT_FALSE(session->readFetch("forward", "out", DType_F32, out.data(), 24, error));
  EXPECT_EQ(out, copied);
  // The same checks as bindFeed.
  EXPECT_EQ(session->borrowFeed("forward", "x", DType_F32, x.data(), 28, borrowed, error),
            SessionError::InvalidArgument);

  // A feed the program fetches too stays in its buffer.
  forward.fetches.push_back({"x again", forward.feeds[0].buffer});
  executable = load(spec);
  ASSERT_NE(executable, nullptr);
  session = Session::create(executable, error);
  ASSERT_NE(session, nullptr) << error;
  ASSERT_FALSE(session->borrowFeed("forward", "x", DType_F32, x.data(), 32, borrowed, error));
  EXPECT_FALSE(borrowed);
}

TEST_F(RuntimeSessionTest, ChecksFetchNamesDTypesAndSizes) {
  ASSERT_FALSE(bind("x", std::vector<float>(8)));
  ASSERT_FALSE(bind("y", std::vector<float>(8)));
  ASSERT_FALSE(session->run("forward", error));
  std::vector<float> out(6);
  EXPECT_EQ(
      session->readFetch("forward", "sum", DType_F32, out.data(), 24, error),
      SessionError::NotFound);
  EXPECT_EQ(error, "program 'forward' has no fetch 'sum' (fetches: relu, out, "
                   "copy)");
  EXPECT_EQ(
      session->readFetch("forward", "out", DType_F16, out.data(), 24, error),
      SessionError::InvalidArgument);
  EXPECT_EQ(error, "program 'forward': fetch 'out' is f32 [2, 3] (24 bytes); "
                   "got f16 data of 24 bytes");
  EXPECT_EQ(
      session->readFetch("forward", "out", DType_F32, out.data(), 4000, error),
      SessionError::InvalidArgument);
}

// Tests that a kernel writing to the constants region faults rather than
// corrupting it.
TEST(RuntimeSessionDeathTest, ConstantsAreReadOnly) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ArtifactSpec spec = sampleArtifact();
  uint32_t constant = spec.addBuffer(Region_Constants, DType_F32, {8});
  spec.programs.push_back({"scribble",
                           {KernelCallSpec{FillOnesKernel, {Count, constant}}},
                           {},
                           {}});
  auto executable = load(spec);
  ASSERT_NE(executable, nullptr);
  std::string error;
  auto session = Session::create(executable, error);
  ASSERT_NE(session, nullptr);
  EXPECT_DEATH((void)session->run("scribble", error), "");
}

// Tests an artifact with nothing in it: no buffers, regions or programs.
TEST(RuntimeSessionEmptyTest, AnEmptyArtifactRunsNothing) {
  ArtifactSpec spec;
  spec.programs.push_back({"forward", {}, {}, {}});
  auto executable = load(spec);
  ASSERT_NE(executable, nullptr);
  std::string error;
  auto session = Session::create(executable, error);
  ASSERT_NE(session, nullptr) << error;
  EXPECT_FALSE(session->run("forward", error)) << error;
}

/// A session over `spec`, or null (with a test failure).
std::unique_ptr<Session> sessionFor(const ArtifactSpec &spec) {
  auto executable = load(spec);
  if (!executable)
    return nullptr;
  std::string error;
  auto session = Session::create(executable, error);
  EXPECT_NE(session, nullptr) << error;
  return session;
}

// Tests that a Convolution instruction runs the forward convolution it
// describes: two groups of one channel, 2x2 windows with stride 2 and
// padding 1 over 3x3 inputs, against values worked out by hand.
TEST(RuntimeSessionConvolutionTest, RunsAGroupedStridedPaddedConvolution) {
  ArtifactSpec spec;
  uint32_t x = spec.addBuffer(Region_Arena, DType_F32, {1, 2, 3, 3});
  uint32_t w = spec.addBuffer(Region_Arena, DType_F32, {2, 1, 2, 2});
  uint32_t y = spec.addBuffer(Region_Arena, DType_F32, {1, 2, 2, 2});
  ConvolutionSpec conv;
  conv.input = x;
  conv.filter = w;
  conv.output = y;
  conv.strides = {2, 2};
  conv.dilations = {1, 1};
  conv.padLow = {1, 1};
  conv.padHigh = {1, 1};
  conv.groups = 2;
  spec.programs.push_back(
      {"forward", {conv}, {{"x", x}, {"w", w}}, {{"y", y}}});
  auto session = sessionFor(spec);
  ASSERT_NE(session, nullptr);

  // Channel 0 is 1..9, channel 1 is 10..18 (row-major 3x3 planes).
  std::vector<float> input(18);
  for (int i = 0; i < 18; ++i)
    input[i] = float(i + 1);
  // Feature 0 reads channel 0 through [[1, 2], [3, 4]]; feature 1 reads
  // channel 1 through its bottom-right tap, -1, alone.
  std::vector<float> filter = {1, 2, 3, 4, 0, 0, 0, -1};
  std::vector<float> nan(8, NAN);
  std::memcpy(session->bufferAddress(y), nan.data(), nan.size() * 4);
  std::string error;
  ASSERT_FALSE(session->bindFeed("forward", "x", DType_F32, input.data(),
                                 input.size() * 4, error))
      << error;
  ASSERT_FALSE(session->bindFeed("forward", "w", DType_F32, filter.data(),
                                 filter.size() * 4, error))
      << error;
  ASSERT_FALSE(session->run("forward", error)) << error;
  std::vector<float> output(8);
  ASSERT_FALSE(
      session->readFetch("forward", "y", DType_F32, output.data(), 32, error))
      << error;
  // Window (i, j) covers rows 2i - 1 .. 2i and columns 2j - 1 .. 2j:
  //   (0, 0): 1 * 4;  (0, 1): 2 * 3 + 3 * 4;
  //   (1, 0): 4 * 2 + 7 * 4;  (1, 1): 5 * 1 + 6 * 2 + 8 * 3 + 9 * 4;
  // and for feature 1, -x at (2i, 2j) of channel 1.
  std::vector<float> expected = {4, 18, 36, 77, -10, -12, -16, -18};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(output[i], expected[i]) << i;
}

/// A momentum SparseApply of buffer 0, the variable `table` [3, 2], with
/// buffer 1, its velocity [3, 2]; two i64 ids and their rows, lr and step
/// fed.
enum : uint32_t { TableBuffer, VelocityBuffer };
ArtifactSpec sparseMomentum(bool dense) {
  ArtifactSpec spec;
  uint32_t table = spec.variables[spec.addVariable("table", DType_F32, {3, 2},
                                                   InitKind_Zeros)]
                       .buffer;
  uint32_t velocity = spec.addBuffer(Region_State, DType_F32, {3, 2});
  EXPECT_EQ(velocity, VelocityBuffer);
  uint32_t ids = spec.addBuffer(Region_Arena, DType_I64, {2});
  uint32_t rows = spec.addBuffer(Region_Arena, DType_F32, {2, 2});
  uint32_t lr = spec.addBuffer(Region_Arena, DType_F32, {});
  uint32_t step = spec.addBuffer(Region_Arena, DType_F32, {});
  SparseApplySpec apply;
  apply.optimizer = Optimizer_Momentum;
  apply.param = table;
  apply.slots = {velocity};
  apply.indices = ids;
  apply.rows = rows;
  apply.lr = lr;
  apply.step = step;
  apply.momentum = 0.5;
  apply.dense = dense;
  spec.programs.push_back(
      {"train",
       {apply},
       {{"ids", ids}, {"rows", rows}, {"lr", lr}, {"step", step}},
       {}});
  return spec;
}

// Tests that SparseApply's `dense` works: with it every row of a momentum
// update moves (rows no id names with a zero gradient: their velocity decays
// and still moves them), without it only the named row does; duplicate ids sum
// first.
TEST(RuntimeSessionSparseApplyTest, DenseMomentumUpdatesEveryRow) {
  for (bool dense : {false, true}) {
    SCOPED_TRACE(dense ? "dense" : "lazy");
    ArtifactSpec spec = sparseMomentum(dense);
    auto session = sessionFor(spec);
    ASSERT_NE(session, nullptr);
    uint32_t table = TableBuffer, velocity = VelocityBuffer;
    ASSERT_EQ(spec.variables[0].buffer, table);
    std::vector<float> param = {1, 2, 3, 4, 5, 6}, v = {1, -1, 2, -2, 4, -4};
    std::memcpy(session->bufferAddress(table), param.data(), 24);
    std::memcpy(session->bufferAddress(velocity), v.data(), 24);
    std::vector<int64_t> ids = {2, 2};
    std::vector<float> rows = {1, 2, 0.5, 0.25}, lr = {0.25f}, step = {1};
    std::string error;
    ASSERT_FALSE(
        session->bindFeed("train", "ids", DType_I64, ids.data(), 16, error))
        << error;
    ASSERT_FALSE(
        session->bindFeed("train", "rows", DType_F32, rows.data(), 16, error))
        << error;
    ASSERT_FALSE(
        session->bindFeed("train", "lr", DType_F32, lr.data(), 4, error))
        << error;
    ASSERT_FALSE(
        session->bindFeed("train", "step", DType_F32, step.data(), 4, error))
        << error;
    ASSERT_FALSE(session->run("train", error)) << error;

    std::vector<float> newParam(6), newV(6);
    std::memcpy(newParam.data(), session->bufferAddress(table), 24);
    std::memcpy(newV.data(), session->bufferAddress(velocity), 24);
    // Row 2's gradient is the sum of both rows: [1.5, 2.25].
    std::vector<float> gradient = {0, 0, 0, 0, 1.5f, 2.25f};
    for (int j = 0; j < 6; ++j) {
      bool named = j >= 4;
      float expectedV = dense || named ? 0.5f * v[j] + gradient[j] : v[j];
      float expectedParam =
          dense || named ? param[j] - 0.25f * expectedV : param[j];
      EXPECT_EQ(newV[j], expectedV) << j;
      EXPECT_EQ(newParam[j], expectedParam) << j;
    }
  }
}

TEST(RuntimeSessionMemoryTest, ReportsARegionTooLargeToAllocate) {
  ArtifactSpec spec;
  spec.arenaBytes = uint64_t(1) << 62;
  auto executable = load(spec);
  ASSERT_NE(executable, nullptr);
  std::string error;
  EXPECT_EQ(Session::create(executable, error), nullptr);
  EXPECT_EQ(error, "test.kiln: error: cannot allocate the arena region "
                   "(4611686018427387904 bytes): Cannot allocate memory");
  // So large that rounding it up to huge pages would wrap around.
  spec.arenaBytes = UINT64_MAX - 4096;
  executable = load(spec);
  ASSERT_NE(executable, nullptr);
  EXPECT_EQ(Session::create(executable, error), nullptr);
  EXPECT_EQ(error, "test.kiln: error: cannot allocate the arena region "
                   "(18446744073709547519 bytes): Cannot allocate memory");
}

} // namespace
