//===- KDistDialect.cpp - kdist dialect registration ----------------------===//

#include "dialects/Dist/KDistDialect.h"
#include "dialects/Dist/KDistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::dist;

#include "dialects/Dist/KDistDialect.cpp.inc"
#include "dialects/Dist/KDistEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Dist/KDistTypes.cpp.inc"

void KDistDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Dist/KDistOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Dist/KDistTypes.cpp.inc"
      >();
}
