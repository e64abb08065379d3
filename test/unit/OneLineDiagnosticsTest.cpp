//===- OneLineDiagnosticsTest.cpp - One line per error --------------------===//

#include "compiler/Support/OneLineDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace kiln;

namespace {

class OneLineDiagnosticsTest : public ::testing::Test {
protected:
  /// What the handler prints for one error at `loc`.
  std::string printError(Location loc, llvm::StringRef message) {
    std::string out;
    llvm::raw_string_ostream os(out);
    OneLineDiagnosticHandler handler(&context, os);
    emitError(loc) << message;
    return out;
  }

  Location file(llvm::StringRef name, unsigned line, unsigned column) {
    return FileLineColLoc::get(&context, name, line, column);
  }
  Location named(llvm::StringRef label, Location child) {
    return NameLoc::get(StringAttr::get(&context, label), child);
  }

  MLIRContext context;
};

TEST_F(OneLineDiagnosticsTest, PrintsFileLineColumnAndLabel) {
  EXPECT_EQ(printError(named("node 'fc1'", file("m.pbtxt", 12, 3)), "bad shape"),
            "m.pbtxt:12:3: error: node 'fc1': bad shape\n");
}

TEST_F(OneLineDiagnosticsTest, OmitsLineZeroAndKeepsNestedLabels) {
  Location loc = named("node 'a' (Gemm)", named("in 'b'", file("m.onnx", 0, 0)));
  EXPECT_EQ(printError(loc, "oops"), "m.onnx: error: node 'a' (Gemm): in 'b': oops\n");
}

TEST_F(OneLineDiagnosticsTest, UsesTheFirstLocationOfAFusedLocation) {
  Location fused = FusedLoc::get(&context, {file("a.mlir", 1, 2), file("b.mlir", 3, 4)});
  EXPECT_EQ(printError(fused, "x"), "a.mlir:1:2: error: x\n");
}

TEST_F(OneLineDiagnosticsTest, UnknownLocationHasNoPosition) {
  EXPECT_EQ(printError(UnknownLoc::get(&context), "x"), "error: x\n");
}

TEST_F(OneLineDiagnosticsTest, PrintsOnlyTheFirstErrorAndCountsTheRest) {
  std::string out;
  llvm::raw_string_ostream os(out);
  OneLineDiagnosticHandler handler(&context, os);
  emitError(file("m.mlir", 1, 1)) << "first";
  emitError(file("m.mlir", 2, 1)) << "second";
  emitWarning(file("m.mlir", 3, 1)) << "careful";
  EXPECT_EQ(out, "m.mlir:1:1: error: first\nm.mlir:3:1: warning: careful\n");
  EXPECT_EQ(handler.getErrorCount(), 2u);
}

TEST_F(OneLineDiagnosticsTest, FoldsNewlinesInMessages) {
  EXPECT_EQ(printError(file("m.mlir", 1, 1), "a\nb"), "m.mlir:1:1: error: a b\n");
}

} // namespace
