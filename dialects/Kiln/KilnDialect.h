//===- KilnDialect.h - kiln dialect, enums and attributes -------*- C++ -*-===//

#ifndef KILN_DIALECTS_KILN_KILNDIALECT_H
#define KILN_DIALECTS_KILN_KILNDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"

#include "dialects/Kiln/KilnDialect.h.inc"
#include "dialects/Kiln/KilnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Kiln/KilnAttrs.h.inc"

#endif // KILN_DIALECTS_KILN_KILNDIALECT_H
