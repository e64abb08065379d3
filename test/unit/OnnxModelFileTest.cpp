//===- OnnxModelFileTest.cpp - ONNX model files and external data ---------===//
//
// Reading model files, and the checks on external data: paths must stay in
// the model's folder (no absolute paths, no `..`, no symlinks out of it),
// ranges must lie inside the data file and match the tensor's size.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxModelFile.h"
#include "compiler/Import/Onnx/OnnxTensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace kiln;

namespace {

class OnnxModelFileTest : public ::testing::Test {
protected:
  OnnxModelFileTest() {
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      errors.push_back(diag.str());
      return success();
    });
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("onnx-test", root));
    // The model's folder sits one level down so `..` has somewhere to go.
    modelDir = path("model");
    EXPECT_FALSE(llvm::sys::fs::create_directory(modelDir));
    write("secret.bin", std::string(64, 's'));
  }

  ~OnnxModelFileTest() override { llvm::sys::fs::remove_directories(root); }

  /// `relative` under the temporary root.
  std::string path(llvm::StringRef relative) {
    llvm::SmallString<256> p(root);
    llvm::sys::path::append(p, relative);
    return p.str().str();
  }

  void write(llvm::StringRef relative, llvm::StringRef bytes) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path(relative), ec);
    ASSERT_FALSE(ec) << ec.message();
    os << bytes;
  }

  /// A FLOAT tensor of `count` elements stored in `location`.
  static onnx::TensorProto external(llvm::StringRef location, int64_t count,
                                    std::optional<std::string> offset = {},
                                    std::optional<std::string> length = {}) {
    onnx::TensorProto t;
    t.set_name("w");
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(count);
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char *key, llvm::StringRef value) {
      onnx::StringStringEntryProto *entry = t.add_external_data();
      entry->set_key(key);
      entry->set_value(value.str());
    };
    add("location", location);
    if (offset)
      add("offset", *offset);
    if (length)
      add("length", *length);
    return t;
  }

  FailureOr<DenseElementsAttr> decode(const onnx::TensorProto &tensor) {
    errors.clear();
    return decodeOnnxTensor(tensor, modelDir, UnknownLoc::get(&context));
  }

  /// Decoding fails with exactly one error that contains `text`.
  void expectError(const onnx::TensorProto &tensor, llvm::StringRef text) {
    EXPECT_TRUE(failed(decode(tensor)));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].find(text.str()), std::string::npos)
        << "error: " << errors[0] << "\nexpected to contain: " << text.str();
  }

  MLIRContext context;
  std::vector<std::string> errors;
  llvm::SmallString<128> root;
  std::string modelDir;
};

TEST_F(OnnxModelFileTest, ModelDirIsTheFilesFolder) {
  EXPECT_EQ(getOnnxModelDir("a/b/model.onnx"), "a/b");
  EXPECT_EQ(getOnnxModelDir("model.onnx"), ".");
  EXPECT_EQ(getOnnxModelDir("/m.onnx"), "/");
}

TEST_F(OnnxModelFileTest, ReadsDataAtItsOffset) {
  std::vector<float> values = {1.0f, 2.0f, 3.0f};
  std::string blob(8, 'x');
  blob.append(reinterpret_cast<const char *>(values.data()), 12);
  blob.append(4, 'y');
  write("model/weights.bin", blob);

  FailureOr<DenseElementsAttr> attr =
      decode(external("weights.bin", 3, "8", "12"));
  ASSERT_TRUE(succeeded(attr)) << (errors.empty() ? "" : errors[0]);
  EXPECT_EQ(*std::next(attr->getValues<float>().begin(), 2), 3.0f);

  // Without a length the data runs to the end of the file.
  write("model/tail.bin", blob.substr(0, 20));
  EXPECT_TRUE(succeeded(decode(external("tail.bin", 3, "8"))));

  // Subfolders of the model's folder are fine.
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("model/sub")));
  write("model/sub/w.bin", blob.substr(8, 12));
  EXPECT_TRUE(succeeded(decode(external("sub/w.bin", 3))));
  EXPECT_TRUE(succeeded(decode(external("./sub/w.bin", 3))));
}

TEST_F(OnnxModelFileTest, RefusesPathsOutsideTheModelFolder) {
  expectError(external("../secret.bin", 4),
              "external data path '../secret.bin' leaves the model's folder");
  expectError(external("sub/../../secret.bin", 4), "leaves the model's folder");
  expectError(external(path("secret.bin"), 4), "is absolute");
  expectError(external("/etc/passwd", 4),
              "external data path '/etc/passwd' is absolute");
  expectError(external("", 4), "has an empty external data path");
  expectError(external(std::string("a\0b", 3), 4), "NUL character");
}

TEST_F(OnnxModelFileTest, RefusesSymlinksThatLeaveTheModelFolder) {
  ASSERT_FALSE(
      llvm::sys::fs::create_link(path("secret.bin"), path("model/link.bin")));
  expectError(external("link.bin", 4),
              "external data path 'link.bin' resolves outside the model's "
              "folder");
  // A folder link out of the model's folder is refused the same way.
  ASSERT_FALSE(llvm::sys::fs::create_link(root, path("model/up")));
  expectError(external("up/secret.bin", 4),
              "resolves outside the model's folder");
  // A link that stays inside is followed.
  write("model/real.bin", std::string(16, '\0'));
  ASSERT_FALSE(llvm::sys::fs::create_link(path("model/real.bin"),
                                          path("model/inner.bin")));
  EXPECT_TRUE(succeeded(decode(external("inner.bin", 4))));
}

TEST_F(OnnxModelFileTest, ChecksRangesAgainstTheFileSize) {
  write("model/short.bin", std::string(32, '\0'));
  expectError(external("short.bin", 6, "16", "24"),
              "external data at offset 16 with length 24 runs beyond the end "
              "of 'short.bin' (32 bytes)");
  expectError(external("short.bin", 1, "33"),
              "external data offset 33 is beyond the end of 'short.bin' (32 "
              "bytes)");
  // offset + length overflows uint64: still refused, nothing read.
  expectError(external("short.bin", 1, "16", "18446744073709551615"),
              "runs beyond the end");
  expectError(external("short.bin", 6, "0", "20"),
              "external data holds 20 bytes, but the tensor's type and shape "
              "need 24");
  // The tensor declares far more than the file holds.
  expectError(external("short.bin", int64_t(1) << 40), "need 4398046511104");
}

TEST_F(OnnxModelFileTest, RefusesMalformedEntries) {
  expectError(
      external("w.bin", 1, "12a"),
      "has external data offset '12a', expected a non-negative integer");
  expectError(external("w.bin", 1, "-1"), "expected a non-negative integer");
  expectError(external("w.bin", 1, "0", "99999999999999999999999"),
              "has external data length");
  onnx::TensorProto noLocation = external("w.bin", 1);
  noLocation.clear_external_data();
  expectError(noLocation, "has no 'location' entry");
  expectError(external("missing.bin", 1),
              "cannot open external data file 'missing.bin'");
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("model/dir.bin")));
  expectError(external("dir.bin", 1), "'dir.bin' is not a regular file");
}

TEST_F(OnnxModelFileTest, ReportsUnreadableModelFiles) {
  errors.clear();
  EXPECT_FALSE(readOnnxModelFile(path("model/none.onnx"), context));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("cannot read file"), std::string::npos) << errors[0];

  write("model/empty.onnx", "");
  errors.clear();
  EXPECT_FALSE(readOnnxModelFile(path("model/empty.onnx"), context));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "empty file");

  write("model/text.onnx", "this is not a protobuf\n");
  errors.clear();
  EXPECT_FALSE(readOnnxModelFile(path("model/text.onnx"), context));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "not an ONNX model file (protobuf parse failed: at offset 0: an end-group "
                       "tag for field 14 with no group open)");
}

} // namespace
