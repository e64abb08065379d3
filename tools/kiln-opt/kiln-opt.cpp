//===- kiln-opt.cpp - Runs kiln passes over .mlir files -------------------===//
//
// mlir-opt with the kiln dialect and every kiln pass registered; the driver of
// the lit tests.
//
//===----------------------------------------------------------------------===//

#include "compiler/RegisterAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  kiln::registerAllDialects(registry);
  kiln::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kiln optimizer driver\n", registry));
}
