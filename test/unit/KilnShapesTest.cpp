//===- KilnShapesTest.cpp - Shape rules of kiln ops -----------------------===//
//
// The rules are called directly (no IR) with random shapes, and checked
// against what numpy would give.
//
//===----------------------------------------------------------------------===//

#include "dialects/Kiln/KilnDialect.h"
#include "dialects/Kiln/KilnShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
using namespace kiln;

namespace {

class KilnShapesTest : public ::testing::Test {
protected:
  KilnShapesTest() : builder(&context) {}

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  /// The shape rules' diagnostic sink, at an unknown location.
  ShapeDiag diag() { return ShapeDiag(builder.getUnknownLoc(), "kiln.test"); }

  MLIRContext context;
  OpBuilder builder;
  std::mt19937 rng{std::random_device{}()};
};

TEST_F(KilnShapesTest, BroadcastMatchesNumpyRules) {
  std::uniform_int_distribution<int64_t> dim(1, 5), rank(0, 4), coin(0, 2);
  for (int trial = 0; trial < 200; ++trial) {
    // Draw a result shape, then make each operand by dropping leading dims
    // and setting some dims to 1: both must broadcast back to the result.
    SmallVector<int64_t> result;
    for (int64_t i = 0, r = rank(rng); i < r; ++i)
      result.push_back(dim(rng));
    auto derive = [&] {
      SmallVector<int64_t> shape(result.begin() + std::min<int64_t>(coin(rng), result.size()),
                                 result.end());
      for (int64_t &d : shape)
        if (coin(rng) == 0)
          d = 1;
      return shape;
    };
    SmallVector<int64_t> a = derive(), b = derive();
    FailureOr<SmallVector<int64_t>> joined = broadcastShapes(a, b);
    ASSERT_TRUE(succeeded(joined));
    // Each joined dim is the max of the aligned operand dims.
    for (size_t i = 0; i < joined->size(); ++i) {
      size_t fromEnd = joined->size() - 1 - i;
      int64_t da = fromEnd < a.size() ? a[a.size() - 1 - fromEnd] : 1;
      int64_t db = fromEnd < b.size() ? b[b.size() - 1 - fromEnd] : 1;
      EXPECT_EQ((*joined)[i], std::max(da, db));
    }
  }
}

TEST_F(KilnShapesTest, BroadcastRejectsMismatchedDims) {
  EXPECT_TRUE(failed(broadcastShapes({3, 4}, {2, 4})));
  EXPECT_TRUE(failed(broadcastShapes({5}, {4})));
}

TEST_F(KilnShapesTest, ElementCountDetectsOverflowAndDynamicDims) {
  EXPECT_EQ(*staticElementCount({2, 3, 4}), 24);
  EXPECT_EQ(*staticElementCount({}), 1);
  EXPECT_TRUE(failed(staticElementCount({ShapedType::kDynamic, 4})));
  EXPECT_TRUE(failed(staticElementCount({int64_t(1) << 40, int64_t(1) << 40})));
  EXPECT_TRUE(failed(staticElementCount({-3})));
}

TEST_F(KilnShapesTest, MatmulWithRandomShapesAndTransposes) {
  std::uniform_int_distribution<int64_t> dim(1, 64), batch(0, 2), flag(0, 1);
  for (int trial = 0; trial < 100; ++trial) {
    int64_t m = dim(rng), k = dim(rng), n = dim(rng);
    bool ta = flag(rng), tb = flag(rng);
    SmallVector<int64_t> batchDims;
    for (int64_t i = 0, e = batch(rng); i < e; ++i)
      batchDims.push_back(dim(rng));
    SmallVector<int64_t> lhs(batchDims), rhs(batchDims);
    lhs.append(ta ? SmallVector<int64_t>{k, m} : SmallVector<int64_t>{m, k});
    rhs.append(tb ? SmallVector<int64_t>{n, k} : SmallVector<int64_t>{k, n});
    InferredType type = inferMatmulType(diag(), f32(lhs), f32(rhs), ta, tb);
    ASSERT_TRUE(succeeded(type));
    SmallVector<int64_t> expected(batchDims);
    expected.append({m, n});
    EXPECT_EQ(type->getShape(), ArrayRef<int64_t>(expected));
  }
}

TEST_F(KilnShapesTest, MatmulRejectsMismatchedInnerDims) {
  EXPECT_TRUE(failed(inferMatmulType(diag(), f32({4, 3}), f32({4, 5}), false, false)));
  EXPECT_TRUE(failed(inferMatmulType(diag(), f32({2, 4, 3}), f32({3, 3, 5}), false, false)));
  EXPECT_TRUE(failed(inferMatmulType(diag(), f32({4}), f32({4, 5}), false, false)));
}

TEST_F(KilnShapesTest, GatherInsertsIndexShapeAtAxis) {
  auto ids = RankedTensorType::get({5, 7}, builder.getI64Type());
  InferredType rows = inferGatherType(diag(), f32({100, 16}), ids, 0);
  ASSERT_TRUE(succeeded(rows));
  EXPECT_EQ(rows->getShape(), ArrayRef<int64_t>({5, 7, 16}));
  InferredType cols = inferGatherType(diag(), f32({3, 100, 16}), ids, 1);
  ASSERT_TRUE(succeeded(cols));
  EXPECT_EQ(cols->getShape(), ArrayRef<int64_t>({3, 5, 7, 16}));
  EXPECT_TRUE(failed(inferGatherType(diag(), f32({100, 16}), f32({5}), 0)));
}

TEST_F(KilnShapesTest, ReduceDropsOrKeepsAxes) {
  InferredType dropped = inferReduceType(diag(), f32({2, 3, 4}), {0, 2}, false);
  ASSERT_TRUE(succeeded(dropped));
  EXPECT_EQ(dropped->getShape(), ArrayRef<int64_t>({3}));
  InferredType kept = inferReduceType(diag(), f32({2, 3, 4}), {0, 2}, true);
  ASSERT_TRUE(succeeded(kept));
  EXPECT_EQ(kept->getShape(), ArrayRef<int64_t>({1, 3, 1}));
  EXPECT_TRUE(failed(inferReduceType(diag(), f32({2, 3}), {1, 0}, false)));
  EXPECT_TRUE(failed(inferReduceType(diag(), f32({2, 3}), {2}, false)));
}

TEST_F(KilnShapesTest, SliceCountsStridedElements) {
  InferredType type = inferSliceType(diag(), f32({10, 8}), {1, 0}, {10, 8}, {3, 5});
  ASSERT_TRUE(succeeded(type));
  EXPECT_EQ(type->getShape(), ArrayRef<int64_t>({3, 2}));
  EXPECT_TRUE(failed(inferSliceType(diag(), f32({10}), {0}, {11}, {1})));
  EXPECT_TRUE(failed(inferSliceType(diag(), f32({10}), {0}, {5}, {0})));
}

/// Messages that only C++ callers (importers) can provoke: IR is rejected by
/// the parser or the ODS constraints first.
TEST_F(KilnShapesTest, ReportsWhatOnlyCppCallersCanGetWrong) {
  std::vector<std::string> messages;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    messages.push_back(d.str());
    return success();
  });
  auto i32 = RankedTensorType::get({4}, builder.getI32Type());
  Type unranked = UnrankedTensorType::get(builder.getF32Type());
  EXPECT_TRUE(failed(inferElementwiseType(diag(), {})));
  EXPECT_TRUE(failed(inferElementwiseType(diag(), {f32({4}), i32})));
  EXPECT_TRUE(failed(inferMatmulType(diag(), unranked, f32({2, 2}), false, false)));
  EXPECT_TRUE(failed(inferGatherType(diag(), f32({4, 2}), f32({3}), 0)));
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[0], "'kiln.test' op expects at least one operand");
  EXPECT_EQ(messages[1], "'kiln.test' op expects operands of one element type, "
                         "got 'f32' and 'i32'");
  EXPECT_EQ(messages[2], "'kiln.test' op expects lhs to be a ranked tensor, got "
                         "'tensor<*xf32>'");
  EXPECT_EQ(messages[3], "'kiln.test' op expects i32 or i64 indices, got 'f32'");
}

TEST_F(KilnShapesTest, SpeculativeQueriesAreSilent) {
  unsigned count = 0;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &) {
    ++count;
    return success();
  });
  ShapeDiag silent(std::nullopt, "kiln.test");
  EXPECT_TRUE(failed(inferMatmulType(silent, f32({4, 3}), f32({4, 5}), false, false)));
  EXPECT_EQ(count, 0u);
}

TEST_F(KilnShapesTest, DynamicDimsAreCompatibleAndJoined) {
  int64_t q = ShapedType::kDynamic;
  InferredType joined = inferElementwiseType(diag(), {f32({q, 4}), f32({3, q})});
  ASSERT_TRUE(succeeded(joined));
  EXPECT_EQ(joined->getShape(), ArrayRef<int64_t>({3, 4}));
  EXPECT_TRUE(areCompatibleTensorTypes({f32({q, 4})}, {f32({3, 4})}));
  EXPECT_FALSE(areCompatibleTensorTypes({f32({2, 4})}, {f32({3, 4})}));
}

} // namespace
