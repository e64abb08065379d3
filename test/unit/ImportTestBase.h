//===- ImportTestBase.h - Shared fixture of the importer tests --*- C++ -*-===//

#ifndef KILN_TEST_UNIT_IMPORTTESTBASE_H
#define KILN_TEST_UNIT_IMPORTTESTBASE_H

#include "compiler/RegisterAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <google/protobuf/stubs/logging.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace kiln {

/// A context with every kiln dialect, the errors it reports (in `errors`),
/// and a private temporary folder for model files.
/// A seed for a test's random inputs: fresh each run, or KILN_TEST_SEED's
/// value to replay the one a failure printed.
inline unsigned drawTestSeed() {
  if (const char *fixed = std::getenv("KILN_TEST_SEED"))
    return unsigned(std::strtoul(fixed, nullptr, 10));
  return std::random_device{}();
}

class ImportTestBase : public ::testing::Test {
protected:
  ImportTestBase() {
    // As in kilnc: malformed files are reported through diagnostics only.
    google::protobuf::SetLogHandler(nullptr);
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.getDiagEngine().registerHandler([this](mlir::Diagnostic &diag) {
      errors.push_back(diag.str());
      return mlir::success();
    });
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("kiln-import", dir));
  }

  ~ImportTestBase() override { llvm::sys::fs::remove_directories(dir); }

  /// Writes `bytes` to `name` in the temporary folder; returns its path.
  std::string write(llvm::StringRef name, llvm::StringRef bytes) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    EXPECT_FALSE(ec) << ec.message();
    os << bytes;
    return path.str().str();
  }

  mlir::MLIRContext context;
  std::vector<std::string> errors;
  llvm::SmallString<128> dir;
};

} // namespace kiln

#endif // KILN_TEST_UNIT_IMPORTTESTBASE_H
