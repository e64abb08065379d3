//===- GraphImportTest.cpp - Graph files in, modules or one error out -----===//
//
// What the lit tests cannot say easily: line numbers recorded for every
// entity, conversions of constant tensors value by value, and that random
// and mutated files never crash the importer and always give one error.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Graph/GraphFile.h"
#include "compiler/Import/Graph/GraphImporter.h"
#include "compiler/Import/Graph/TensorValues.h"
#include "ImportTestBase.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
using namespace kiln;

namespace {

class GraphImportTest : public ImportTestBase {
protected:
  /// Writes `contents` to a fresh file with the extension.
  std::string write(llvm::StringRef contents, llvm::StringRef extension) {
    return ImportTestBase::write(
        ("graph" + llvm::Twine(count++) + "." + extension).str(), contents);
  }

  int count = 0;
};

constexpr const char *kSmallGraph = R"pb(name: "small"
variables { name: "w" dtype: DT_FLOAT32 shape: [3, 2] initializer { kind: ONES } }
inputs { name: "x" dtype: DT_FLOAT32 shape: [4, 3] }

nodes { name: "mm" op: "matmul" inputs: ["x", "w"] }
nodes { name: "y" op: "relu" inputs: ["mm"] }
outputs: ["y"]
train { loss: "y" }
)pb";

TEST_F(GraphImportTest, RecordsTheLineOfEveryEntity) {
  std::unique_ptr<GraphFile> file = readGraphFile(write(kSmallGraph, "pbtxt"), context);
  ASSERT_TRUE(file);
  ASSERT_EQ(file->variableLines.size(), 1u);
  EXPECT_EQ(file->variableLines[0].line, 2u);
  EXPECT_EQ(file->inputLines[0].line, 3u);
  ASSERT_EQ(file->nodeLines.size(), 2u);
  EXPECT_EQ(file->nodeLines[0].line, 5u);
  EXPECT_EQ(file->nodeLines[1].line, 6u);
  EXPECT_EQ(file->nodeLines[1].column, 1u);
  EXPECT_EQ(file->trainLine.line, 8u);
}

TEST_F(GraphImportTest, BinaryAndTextFilesGiveTheSameModule) {
  std::unique_ptr<GraphFile> text = readGraphFile(write(kSmallGraph, "pbtxt"), context);
  ASSERT_TRUE(text);

  // The train spec names a non-scalar loss, so drop it for this comparison.
  std::string withoutTrain = kSmallGraph;
  withoutTrain.erase(withoutTrain.find("train {"));
  OwningOpRef<ModuleOp> fromText = importGraphFile(write(withoutTrain, "pbtxt"), context);
  graph::GraphDef graph = text->graph;
  graph.clear_train();
  std::string bytes;
  ASSERT_TRUE(graph.SerializeToString(&bytes));
  OwningOpRef<ModuleOp> fromBinary = importGraphFile(write(bytes, "pb"), context);
  ASSERT_TRUE(fromText && fromBinary) << (errors.empty() ? "" : errors.front());

  // Locations differ (line numbers); the printed IR without them must not.
  std::string a, b;
  llvm::raw_string_ostream(a) << *fromText;
  llvm::raw_string_ostream(b) << *fromBinary;
  EXPECT_EQ(a, b);
  EXPECT_TRUE(succeeded(verify(*fromBinary)));
}

TEST_F(GraphImportTest, ConvertsHalfPrecisionAndBoolValues) {
  graph::TensorValue value;
  value.set_dtype(graph::DT_FLOAT16);
  value.add_shape(3);
  for (float f : {0.1f, 65504.0f, -2.5f})
    value.add_float_values(f);
  FailureOr<DenseElementsAttr> half =
      convertTensorValue(value, UnknownLoc::get(&context), "value");
  ASSERT_TRUE(succeeded(half));
  auto values = llvm::to_vector(half->getValues<APFloat>());
  // 0.1 is not exact in half precision: it must round to nearest (0x2E66).
  EXPECT_EQ(values[0].bitcastToAPInt().getZExtValue(), 0x2E66u);
  EXPECT_EQ(values[1].convertToFloat(), 65504.0f);
  EXPECT_EQ(values[2].convertToFloat(), -2.5f);

  graph::TensorValue bools;
  bools.set_dtype(graph::DT_BOOL);
  bools.add_shape(4);
  bools.set_raw_data(std::string("\x00\x01\x00\x05", 4));
  FailureOr<DenseElementsAttr> mask =
      convertTensorValue(bools, UnknownLoc::get(&context), "value");
  ASSERT_TRUE(succeeded(mask));
  EXPECT_EQ(llvm::to_vector(mask->getValues<bool>()),
            (SmallVector<bool>{false, true, false, true}));
}

TEST_F(GraphImportTest, RandomBytesNeverCrashAndGiveOneError) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> byte(0, 255), length(1, 400);
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes(length(rng), '\0');
    for (char &c : bytes)
      c = static_cast<char>(byte(rng));
    errors.clear();
    OwningOpRef<ModuleOp> module = importGraphFile(write(bytes, "pb"), context);
    if (module) {
      // Random bytes that happen to form a valid graph must verify.
      EXPECT_TRUE(succeeded(verify(*module)));
      continue;
    }
    EXPECT_EQ(errors.size(), 1u) << "trial " << trial;
  }
}

TEST_F(GraphImportTest, MutatedGraphsNeverCrashAndGiveOneError) {
  std::unique_ptr<GraphFile> file = readGraphFile(write(kSmallGraph, "pbtxt"), context);
  ASSERT_TRUE(file);
  std::string valid;
  ASSERT_TRUE(file->graph.SerializeToString(&valid));
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<size_t> position(0, valid.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255), flips(1, 4);
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = valid;
    for (int i = 0, e = flips(rng); i < e; ++i)
      bytes[position(rng)] = static_cast<char>(byte(rng));
    if (trial % 3 == 0)
      bytes.resize(position(rng));
    errors.clear();
    OwningOpRef<ModuleOp> module = importGraphFile(write(bytes, "pb"), context);
    if (module) {
      EXPECT_TRUE(succeeded(verify(*module))) << "trial " << trial;
      continue;
    }
    EXPECT_EQ(errors.size(), 1u) << "trial " << trial;
  }
}

} // namespace
