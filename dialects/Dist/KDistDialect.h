//===- KDistDialect.h - kdist dialect, its type and enums -------*- C++ -*-===//

#ifndef KILN_DIALECTS_DIST_KDISTDIALECT_H
#define KILN_DIALECTS_DIST_KDISTDIALECT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"

#include "dialects/Dist/KDistDialect.h.inc"
#include "dialects/Dist/KDistEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Dist/KDistTypes.h.inc"

#endif // KILN_DIALECTS_DIST_KDISTDIALECT_H
