//===- DTypes.cpp - Element types of artifact buffers ---------------------===//

#include "runtime/artifact/DTypes.h"

namespace kiln::artifact {

bool isKnownDType(DType dtype) {
  return dtype >= DType_MIN && dtype <= DType_MAX;
}

bool isFloatDType(DType dtype) {
  return dtype == DType_F32 || dtype == DType_F16 || dtype == DType_BF16;
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType_F32:
  case DType_I32:
    return 4;
  case DType_F16:
  case DType_BF16:
    return 2;
  case DType_I64:
    return 8;
  case DType_I1:
    return 1;
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType_F32:
    return "f32";
  case DType_F16:
    return "f16";
  case DType_BF16:
    return "bf16";
  case DType_I32:
    return "i32";
  case DType_I64:
    return "i64";
  case DType_I1:
    return "i1";
  }
  return "unknown";
}

std::string shapeString(const flatbuffers::Vector<int64_t> *shape) {
  std::string text = "[";
  if (shape) {
    for (flatbuffers::uoffset_t i = 0; i < shape->size(); ++i) {
      if (i)
        text += ", ";
      text += std::to_string(shape->Get(i));
    }
  }
  return text + "]";
}

} // namespace kiln::artifact
