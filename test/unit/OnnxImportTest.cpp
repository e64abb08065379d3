//===- OnnxImportTest.cpp - ONNX models in, modules or one error out ------===//
//
// What the lit tests cannot say easily: graphs built here in C++ with
// defects no fixture holds (unsorted nodes, names reused, --dim values kilnc
// itself refuses), and that random and mutated model files never crash the
// importer and always give either a verified module or exactly one error.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxImporter.h"

#include "dialects/Kiln/KilnOps.h"
#include "ImportTestBase.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
using namespace kiln;

namespace {

class OnnxImportTest : public ImportTestBase {
protected:
  OwningOpRef<ModuleOp> import(const onnx::ModelProto &model,
                               const OnnxImportOptions &options = {}) {
    std::string bytes;
    EXPECT_TRUE(model.SerializeToString(&bytes));
    errors.clear();
    return importOnnxFile(write("model.onnx", bytes), context, options);
  }

  /// Import fails with exactly one error that contains `text`.
  void expectError(const onnx::ModelProto &model, llvm::StringRef text,
                   const OnnxImportOptions &options = {}) {
    EXPECT_FALSE(import(model, options));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].find(text.str()), std::string::npos)
        << "error: " << errors[0] << "\nexpected to contain: " << text.str();
  }

  /// A model at opset 13 whose graph computes y = x + w over [2, 3] floats.
  static onnx::ModelProto addModel() {
    onnx::ModelProto model;
    model.set_ir_version(8);
    onnx::OperatorSetIdProto *opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(13);
    onnx::GraphProto *graph = model.mutable_graph();
    addValue(graph->add_input(), "x", {2, 3});
    addValue(graph->add_output(), "y", {2, 3});
    onnx::TensorProto *w = graph->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(2);
    w->add_dims(3);
    for (int i = 0; i < 6; ++i)
      w->add_float_data(i);
    addNode(graph, "Add", {"x", "w"}, {"y"}, "add");
    return model;
  }

  static void addValue(onnx::ValueInfoProto *value, const std::string &name,
                       std::vector<int64_t> dims,
                       const std::string &param = "") {
    value->set_name(name);
    onnx::TypeProto::Tensor *type =
        value->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto::FLOAT);
    onnx::TensorShapeProto *shape = type->mutable_shape();
    if (!param.empty())
      shape->add_dim()->set_dim_param(param);
    for (int64_t d : dims)
      shape->add_dim()->set_dim_value(d);
  }

  static onnx::NodeProto *addNode(onnx::GraphProto *graph,
                                  const std::string &op,
                                  std::vector<std::string> inputs,
                                  std::vector<std::string> outputs,
                                  const std::string &name = "") {
    onnx::NodeProto *node = graph->add_node();
    node->set_op_type(op);
    node->set_name(name);
    for (const std::string &input : inputs)
      node->add_input(input);
    for (const std::string &output : outputs)
      node->add_output(output);
    return node;
  }

  /// Imports `path` and checks the contract: a verified module, or no
  /// module and exactly one error.
  void expectModuleOrOneError(const std::string &path,
                              const std::string &what) {
    errors.clear();
    OnnxImportOptions options;
    options.dimSizes["batch"] = 2;
    OwningOpRef<ModuleOp> module = importOnnxFile(path, context, options);
    if (module) {
      EXPECT_TRUE(errors.empty()) << what << ": " << errors.front();
      EXPECT_TRUE(succeeded(verify(*module))) << what;
    } else {
      EXPECT_EQ(errors.size(), 1u) << what << ": " << llvm::join(errors, " | ");
    }
  }

  template <typename OpTy> static unsigned count(ModuleOp module) {
    unsigned n = 0;
    module.walk([&](OpTy) { ++n; });
    return n;
  }
};

TEST_F(OnnxImportTest, BuildsVariablesArgumentsAndResults) {
  OwningOpRef<ModuleOp> module = import(addModel());
  ASSERT_TRUE(module) << errors.front();
  ASSERT_TRUE(succeeded(verify(*module)));
  auto variable = module->lookupSymbol<VariableOp>("w");
  ASSERT_TRUE(variable);
  EXPECT_TRUE(variable.getTrainable());
  EXPECT_EQ(variable.getInitializer().getKind(), InitKind::constant);
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  ASSERT_TRUE(forward);
  EXPECT_EQ(forward.getArgAttrOfType<StringAttr>(0, "kiln.name").getValue(),
            "x");
  EXPECT_EQ(forward.getResultAttrOfType<StringAttr>(0, "kiln.name").getValue(),
            "y");
  EXPECT_EQ(count<ReadOp>(*module), 1u);
}

TEST_F(OnnxImportTest, OrdersUnsortedNodes) {
  onnx::ModelProto model = addModel();
  onnx::GraphProto *graph = model.mutable_graph();
  graph->mutable_node(0)->set_output(0, "sum");
  // The consumer comes first in the file.
  addNode(graph, "Relu", {"sum"}, {"y"}, "relu");
  graph->mutable_node()->SwapElements(0, 1);
  OwningOpRef<ModuleOp> module = import(model);
  ASSERT_TRUE(module) << errors.front();
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(OnnxImportTest, InitializersListedAsInputsAreNotArguments) {
  // Before IR version 4, every initializer is also a graph input.
  onnx::ModelProto model = addModel();
  addValue(model.mutable_graph()->add_input(), "w", {2, 3});
  OwningOpRef<ModuleOp> module = import(model);
  ASSERT_TRUE(module) << errors.front();
  EXPECT_EQ(module->lookupSymbol<func::FuncOp>("forward").getNumArguments(),
            1u);
}

TEST_F(OnnxImportTest, UnusedAndShapeOnlyInitializersLeaveNoTrace) {
  onnx::ModelProto model = addModel();
  onnx::GraphProto *graph = model.mutable_graph();
  onnx::TensorProto *unused = graph->add_initializer();
  *unused = graph->initializer(0);
  unused->set_name("unused");
  onnx::TensorProto *shape = graph->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(1);
  shape->add_int64_data(6);
  graph->mutable_node(0)->set_output(0, "sum");
  addNode(graph, "Reshape", {"sum", "shape"}, {"flat"}, "flatten");
  // Identity keeps the shape known at import time.
  addNode(graph, "Identity", {"shape"}, {"shape2"}, "same_shape");
  addNode(graph, "Reshape", {"flat", "shape2"}, {"flat2"}, "again");
  addNode(graph, "Relu", {"flat2"}, {"y"}, "relu");
  graph->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->clear_shape();
  OwningOpRef<ModuleOp> module = import(model);
  ASSERT_TRUE(module) << errors.front();
  EXPECT_TRUE(succeeded(verify(*module)));
  EXPECT_EQ(count<VariableOp>(*module), 1u);
  EXPECT_EQ(count<ConstantOp>(*module), 0u);
}

TEST_F(OnnxImportTest, RefusesNamesUsedTwice) {
  onnx::ModelProto twice = addModel();
  addNode(twice.mutable_graph(), "Relu", {"x"}, {"y"}, "again");
  expectError(twice, "output 'y' is already produced by node #0");

  onnx::ModelProto shadow = addModel();
  addNode(shadow.mutable_graph(), "Relu", {"y"}, {"w"}, "shadow");
  expectError(shadow,
              "output 'w' has the name of a graph input or initializer");

  onnx::ModelProto initializers = addModel();
  *initializers.mutable_graph()->add_initializer() =
      initializers.graph().initializer(0);
  expectError(initializers, "is defined twice");

  onnx::ModelProto forward = addModel();
  forward.mutable_graph()->mutable_initializer(0)->set_name("forward");
  forward.mutable_graph()->mutable_node(0)->set_input(1, "forward");
  expectError(forward, "has the name of the @forward function");
}

TEST_F(OnnxImportTest, BindsNamedDimensions) {
  onnx::ModelProto model = addModel();
  onnx::GraphProto *graph = model.mutable_graph();
  graph->clear_input();
  addValue(graph->add_input(), "x", {3}, "batch");
  graph->clear_output();
  addValue(graph->add_output(), "y", {3}, "batch");
  graph->mutable_node(0)->set_input(1, "x");

  OnnxImportOptions options;
  options.dimSizes["batch"] = 5;
  OwningOpRef<ModuleOp> module = import(model, options);
  ASSERT_TRUE(module) << errors.front();
  auto type = llvm::cast<RankedTensorType>(
      module->lookupSymbol<func::FuncOp>("forward").getArgumentTypes()[0]);
  EXPECT_EQ(type.getShape(), ArrayRef<int64_t>({5, 3}));

  expectError(model, "has dimension 0 ('batch') without a size; pass --dim "
                     "batch=SIZE");
  for (int64_t bad : {0, -4}) {
    options.dimSizes["batch"] = bad;
    expectError(model,
                "has dimension 0 ('batch') bound to size " +
                    std::to_string(bad) + ", expected a positive size",
                options);
  }
}

TEST_F(OnnxImportTest, ChecksDeclaredOutputTypes) {
  onnx::ModelProto model = addModel();
  model.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(4);
  expectError(model, "is declared with element type FLOAT and shape [2, 4], "
                     "but the graph computes 'tensor<2x3xf32>'");
}

TEST_F(OnnxImportTest, RefusesOpsetsItDoesNotKnow) {
  onnx::ModelProto old = addModel();
  old.mutable_opset_import(0)->set_version(6);
  expectError(old,
              "imports opset 6 of the default ONNX domain; kiln reads 7 to");
  onnx::ModelProto none = addModel();
  none.mutable_opset_import(0)->set_domain("ai.onnx.ml");
  expectError(none, "imports no opset of the default ONNX domain");
  onnx::ModelProto gelu = addModel();
  addNode(gelu.mutable_graph(), "Gelu", {"y"}, {"g"}, "gelu");
  expectError(gelu, "Gelu needs opset 20 or newer, the model imports opset 13");
}

TEST_F(OnnxImportTest, RefusesBadAttributes) {
  onnx::ModelProto unknown = addModel();
  onnx::AttributeProto *attr =
      unknown.mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("broadcast");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(1);
  expectError(unknown, "unsupported attribute 'broadcast' on Add");

  onnx::ModelProto mistyped = addModel();
  mistyped.mutable_graph()->mutable_node(0)->set_op_type("Softmax");
  mistyped.mutable_graph()->mutable_node(0)->mutable_input()->RemoveLast();
  attr = mistyped.mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("axis");
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(1.0f);
  expectError(mistyped, "expects attribute 'axis' to be an INT, got FLOAT");
}

TEST_F(OnnxImportTest, KeepsEveryErrorOnOneLine) {
  onnx::ModelProto model = addModel();
  model.mutable_graph()->mutable_node(0)->set_op_type("Bad\nOp");
  model.mutable_graph()->mutable_node(0)->set_name("line\rbreak");
  expectError(model, "unsupported ONNX op 'Bad\\x0aOp'");
  EXPECT_EQ(errors[0].find('\n'), std::string::npos);
}

TEST_F(OnnxImportTest, RandomBytesNeverCrashAndGiveOneError) {
  unsigned seed = drawTestSeed();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), size(1, 512);
  for (int i = 0; i < 200; ++i) {
    std::string bytes(size(rng), '\0');
    for (char &c : bytes)
      c = static_cast<char>(byte(rng));
    std::string path = write("random.onnx", bytes);
    expectModuleOrOneError(path, "seed " + std::to_string(seed) + " case " +
                                     std::to_string(i));
  }
}

TEST_F(OnnxImportTest, MutatedFixturesNeverCrashAndGiveOneError) {
  // The working directory is test/ (see test/unit/CMakeLists.txt).
  std::vector<std::string> fixtures;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(KILN_TEST_INPUTS "/onnx", ec), end;
       it != end && !ec; it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) == ".onnx")
      fixtures.push_back(it->path());
    // External data files travel with the mutated models.
    if (llvm::sys::path::extension(it->path()) == ".bin") {
      llvm::SmallString<256> copy(dir);
      llvm::sys::path::append(copy, llvm::sys::path::filename(it->path()));
      ASSERT_FALSE(llvm::sys::fs::copy_file(it->path(), copy));
    }
  }
  ASSERT_FALSE(fixtures.empty()) << "no fixtures in " KILN_TEST_INPUTS "/onnx";
  std::sort(fixtures.begin(), fixtures.end());
  unsigned seed = drawTestSeed();
  std::mt19937 rng(seed);
  for (const std::string &fixture : fixtures) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(fixture);
    ASSERT_TRUE(bool(file)) << fixture;
    std::string original = (*file)->getBuffer().str();
    if (original.empty())
      continue;
    for (int i = 0; i < 40; ++i) {
      std::string bytes = original;
      std::uniform_int_distribution<size_t> at(0, bytes.size() - 1);
      std::uniform_int_distribution<int> byte(0, 255), edits(1, 4), kind(0, 3);
      for (int e = edits(rng); e > 0 && !bytes.empty(); --e) {
        size_t p = at(rng) % bytes.size();
        switch (kind(rng)) {
        case 0:
          bytes[p] = static_cast<char>(byte(rng));
          break;
        case 1:
          bytes[p] ^= static_cast<char>(1 << (byte(rng) % 8));
          break;
        case 2:
          bytes.erase(p, 1 + byte(rng) % 8);
          break;
        default:
          bytes.insert(p, 1, static_cast<char>(byte(rng)));
        }
      }
      std::string path = write("mutated.onnx", bytes);
      expectModuleOrOneError(path, fixture + " seed " + std::to_string(seed) +
                                       " case " + std::to_string(i));
    }
  }
}

} // namespace
