//===- OnnxTensorTest.cpp - ONNX tensors in, dense values or one error out ===//
//
// Decoding of initializers and Constant values: raw_data and every typed
// field, the exact size checks (made before anything is allocated), and the
// element types kiln refuses.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxTensor.h"

#include "dialects/Kiln/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace mlir;
using namespace kiln;

namespace {

class OnnxTensorTest : public ::testing::Test {
protected:
  OnnxTensorTest() {
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      errors.push_back(diag.str());
      return success();
    });
  }

  FailureOr<DenseElementsAttr> decode(const onnx::TensorProto &tensor) {
    return decodeOnnxTensor(tensor, ".", UnknownLoc::get(&context));
  }

  /// Decoding fails with exactly one error that contains `text`.
  void expectError(const onnx::TensorProto &tensor, llvm::StringRef text) {
    errors.clear();
    EXPECT_TRUE(failed(decode(tensor)));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].find(text.str()), std::string::npos)
        << "error: " << errors[0] << "\nexpected to contain: " << text.str();
  }

  static onnx::TensorProto tensor(int dataType, std::vector<int64_t> dims) {
    onnx::TensorProto t;
    t.set_name("t");
    t.set_data_type(dataType);
    for (int64_t d : dims)
      t.add_dims(d);
    return t;
  }

  template <typename T>
  static std::string bytesOf(const std::vector<T> &values) {
    return std::string(reinterpret_cast<const char *>(values.data()),
                       values.size() * sizeof(T));
  }

  MLIRContext context;
  std::vector<std::string> errors;
};

TEST_F(OnnxTensorTest, MapsTheSupportedElementTypes) {
  Builder b(&context);
  EXPECT_EQ(getOnnxElementType(context, onnx::TensorProto::FLOAT),
            b.getF32Type());
  EXPECT_EQ(getOnnxElementType(context, onnx::TensorProto::FLOAT16),
            b.getF16Type());
  EXPECT_EQ(getOnnxElementType(context, onnx::TensorProto::BFLOAT16),
            b.getBF16Type());
  EXPECT_EQ(getOnnxElementType(context, onnx::TensorProto::INT32),
            b.getI32Type());
  EXPECT_EQ(getOnnxElementType(context, onnx::TensorProto::INT64),
            b.getI64Type());
  EXPECT_EQ(getOnnxElementType(context, onnx::TensorProto::BOOL),
            b.getI1Type());
  for (int other : {0, 2, 3, 4, 5, 8, 11, 12, 13, 14, 15, 17, 23, 99, -1})
    EXPECT_FALSE(getOnnxElementType(context, other)) << "data type " << other;
  EXPECT_EQ(getOnnxDataTypeName(onnx::TensorProto::DOUBLE), "DOUBLE");
  EXPECT_EQ(getOnnxDataTypeName(99), "data type 99");
  EXPECT_EQ(getOnnxDataTypeName(int64_t(1) << 40), "data type 1099511627776");
}

TEST_F(OnnxTensorTest, DecodesRawFloatsInRowMajorOrder) {
  onnx::TensorProto t = tensor(onnx::TensorProto::FLOAT, {2, 3});
  std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 1e-3f, -7.0f};
  t.set_raw_data(bytesOf(values));
  FailureOr<DenseElementsAttr> attr = decode(t);
  ASSERT_TRUE(succeeded(attr));
  EXPECT_EQ(attr->getType().getShape(), ArrayRef<int64_t>({2, 3}));
  std::vector<float> decoded(attr->getValues<float>().begin(),
                             attr->getValues<float>().end());
  EXPECT_EQ(decoded, values);
}

TEST_F(OnnxTensorTest, DecodesRawIntegersHalvesAndBools) {
  onnx::TensorProto i64 = tensor(onnx::TensorProto::INT64, {3});
  i64.set_raw_data(bytesOf(std::vector<int64_t>{-1, int64_t(1) << 40, 7}));
  FailureOr<DenseElementsAttr> ints = decode(i64);
  ASSERT_TRUE(succeeded(ints));
  EXPECT_EQ(*std::next(ints->getValues<int64_t>().begin(), 1), int64_t(1)
                                                                   << 40);

  // 1.5 and -2.0 as IEEE half bits.
  onnx::TensorProto f16 = tensor(onnx::TensorProto::FLOAT16, {2});
  f16.set_raw_data(bytesOf(std::vector<uint16_t>{0x3e00, 0xc000}));
  FailureOr<DenseElementsAttr> halves = decode(f16);
  ASSERT_TRUE(succeeded(halves));
  auto half = halves->getValues<APFloat>();
  EXPECT_EQ((*half.begin()).convertToDouble(), 1.5);
  EXPECT_EQ((*std::next(half.begin())).convertToDouble(), -2.0);

  // Any nonzero byte is true.
  onnx::TensorProto b = tensor(onnx::TensorProto::BOOL, {4});
  b.set_raw_data(std::string("\x01\x00\x02\x00", 4));
  FailureOr<DenseElementsAttr> bools = decode(b);
  ASSERT_TRUE(succeeded(bools));
  std::vector<bool> decoded(bools->getValues<bool>().begin(),
                            bools->getValues<bool>().end());
  EXPECT_EQ(decoded, (std::vector<bool>{true, false, true, false}));
}

TEST_F(OnnxTensorTest, DecodesEveryTypedField) {
  onnx::TensorProto f32 = tensor(onnx::TensorProto::FLOAT, {2});
  f32.add_float_data(0.5f);
  f32.add_float_data(-4.0f);
  FailureOr<DenseElementsAttr> floats = decode(f32);
  ASSERT_TRUE(succeeded(floats));
  EXPECT_EQ(*std::next(floats->getValues<float>().begin()), -4.0f);

  onnx::TensorProto i32 = tensor(onnx::TensorProto::INT32, {1, 2});
  i32.add_int32_data(-3);
  i32.add_int32_data(9);
  FailureOr<DenseElementsAttr> ints = decode(i32);
  ASSERT_TRUE(succeeded(ints));
  EXPECT_EQ(*ints->getValues<int32_t>().begin(), -3);

  onnx::TensorProto i64 = tensor(onnx::TensorProto::INT64, {});
  i64.add_int64_data(-(int64_t(1) << 50));
  FailureOr<DenseElementsAttr> scalar = decode(i64);
  ASSERT_TRUE(succeeded(scalar));
  EXPECT_EQ(scalar->getType().getRank(), 0);
  EXPECT_EQ(*scalar->getValues<int64_t>().begin(), -(int64_t(1) << 50));

  // 16-bit floats keep their bits in the low half of int32_data.
  onnx::TensorProto bf16 = tensor(onnx::TensorProto::BFLOAT16, {2});
  bf16.add_int32_data(0x3f00); // 0.5
  bf16.add_int32_data(0x4040); // 3.0
  FailureOr<DenseElementsAttr> brains = decode(bf16);
  ASSERT_TRUE(succeeded(brains));
  EXPECT_TRUE(brains->getElementType().isBF16());
  EXPECT_EQ(
      (*std::next(brains->getValues<APFloat>().begin())).convertToDouble(),
      3.0);

  onnx::TensorProto b = tensor(onnx::TensorProto::BOOL, {3});
  for (int v : {0, 1, 5})
    b.add_int32_data(v);
  FailureOr<DenseElementsAttr> bools = decode(b);
  ASSERT_TRUE(succeeded(bools));
  EXPECT_TRUE(*std::next(bools->getValues<bool>().begin(), 2));
}

TEST_F(OnnxTensorTest, AcceptsEmptyTensors) {
  onnx::TensorProto raw = tensor(onnx::TensorProto::FLOAT, {0, 4});
  raw.set_raw_data("");
  FailureOr<DenseElementsAttr> a = decode(raw);
  ASSERT_TRUE(succeeded(a));
  EXPECT_EQ(a->getNumElements(), 0);
  FailureOr<DenseElementsAttr> b =
      decode(tensor(onnx::TensorProto::INT64, {3, 0}));
  ASSERT_TRUE(succeeded(b));
  EXPECT_EQ(b->getNumElements(), 0);
}

TEST_F(OnnxTensorTest, RefusesDataOfTheWrongSize) {
  onnx::TensorProto raw = tensor(onnx::TensorProto::FLOAT, {2, 3});
  raw.set_raw_data(std::string(20, '\0'));
  expectError(raw, "declares 6 elements of FLOAT (shape [2, 3], 24 bytes), "
                   "but raw_data holds 20 bytes");

  onnx::TensorProto typed = tensor(onnx::TensorProto::FLOAT, {2, 3});
  for (int i = 0; i < 5; ++i)
    typed.add_float_data(i);
  expectError(typed, "declares 6 elements of FLOAT (shape [2, 3]), but "
                     "float_data holds 5");

  // Values in the field of another type do not count.
  onnx::TensorProto wrongField = tensor(onnx::TensorProto::INT64, {2});
  wrongField.add_int32_data(1);
  wrongField.add_int32_data(2);
  expectError(wrongField, "but int64_data holds 0");

  expectError(tensor(onnx::TensorProto::INT32, {4}), "but int32_data holds 0");
}

TEST_F(OnnxTensorTest, ChecksHugeShapesBeforeAllocating) {
  // 2^40 elements declared, 4 bytes present: refused without allocating.
  onnx::TensorProto big = tensor(onnx::TensorProto::FLOAT, {1 << 20, 1 << 20});
  big.set_raw_data(std::string(4, '\0'));
  expectError(big, "declares 1099511627776 elements");

  // The element count overflows int64.
  onnx::TensorProto overflow =
      tensor(onnx::TensorProto::FLOAT, {int64_t(1) << 40, int64_t(1) << 40});
  expectError(overflow, "too many elements");
  // The byte count overflows int64 although the element count does not.
  expectError(tensor(onnx::TensorProto::INT64, {int64_t(1) << 61}),
              "too many elements");

  expectError(tensor(onnx::TensorProto::FLOAT, {2, -3}),
              "negative dimension in its shape [2, -3]");
}

TEST_F(OnnxTensorTest, RefusesUnsupportedTypesByName) {
  onnx::TensorProto d = tensor(onnx::TensorProto::DOUBLE, {1});
  d.add_double_data(1.0);
  expectError(d, "unsupported element type DOUBLE");
  expectError(tensor(onnx::TensorProto::UINT8, {1}),
              "unsupported element type UINT8");
  expectError(tensor(onnx::TensorProto::STRING, {1}),
              "unsupported element type STRING");
  expectError(tensor(onnx::TensorProto::UNDEFINED, {1}),
              "unsupported element type UNDEFINED");
  expectError(tensor(23, {1}), "unsupported element type data type 23");
}

TEST_F(OnnxTensorTest, RefusesAmbiguousStorage) {
  onnx::TensorProto both = tensor(onnx::TensorProto::FLOAT, {1});
  both.set_raw_data(std::string(4, '\0'));
  both.add_float_data(1.0f);
  expectError(both, "has both raw_data and typed data fields");

  onnx::TensorProto segment = tensor(onnx::TensorProto::FLOAT, {1});
  segment.mutable_segment()->set_begin(0);
  segment.add_float_data(1.0f);
  expectError(segment, "is a segment of a larger tensor");

  onnx::TensorProto external = tensor(onnx::TensorProto::FLOAT, {1});
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  external.add_float_data(1.0f);
  expectError(external,
              "stores its data externally and also in the model file");
}

} // namespace
