//===- KilnOps.h - kiln dialect ops -----------------------------*- C++ -*-===//

#ifndef KILN_DIALECTS_KILN_KILNOPS_H
#define KILN_DIALECTS_KILN_KILNOPS_H

#include "dialects/Kiln/KilnDialect.h"
#include "dialects/Kiln/KilnShapes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Kiln/KilnOps.h.inc"

#endif // KILN_DIALECTS_KILN_KILNOPS_H
