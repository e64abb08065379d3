//===- TfGraphImporter.h - The walk over a GraphDef -------------*- C++ -*-===//
//
// The state of one GraphDef's import, shared by the files that implement it:
// TfImporter.cpp (outputs, Placeholders, Consts, the walk), TfWhileLoops.cpp
// (while frames unrolled) and TfTensorLists.cpp (TensorLists, which exist
// only at import time: a loop's inputs and outputs by step).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFGRAPHIMPORTER_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFGRAPHIMPORTER_H

#include "compiler/Import/ForwardFunction.h"
#include "compiler/Import/TensorFlow/TfFrames.h"
#include "compiler/Import/TensorFlow/TfGraph.h"
#include "compiler/Import/TensorFlow/TfGraphFile.h"
#include "compiler/Import/TensorFlow/TfImporter.h"
#include "compiler/Import/TensorFlow/TfNode.h"
#include "compiler/Import/TensorFlow/TfSparseLookups.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"

#include <memory>

namespace kiln {
namespace tf_import {

/// A TensorList: its elements by index, null until set.
struct TensorList {
  llvm::SmallVector<mlir::Value> items;
};

class TfGraphImporter final : public ImportValueScope {
public:
  TfGraphImporter(llvm::StringRef path, bool text, mlir::MLIRContext &context,
                  const TfImportOptions &options)
      : path(path), text(text), context(context), options(options),
        builder(&context) {}

  mlir::OwningOpRef<mlir::ModuleOp> import();

  mlir::Value lookup(llvm::StringRef key) override;
  mlir::DenseElementsAttr lookupConstant(llvm::StringRef key) override;
  void define(llvm::StringRef key, mlir::Value value) override {
    noteFrameKey(key);
    values[key] = value;
  }
  void defineConstant(llvm::StringRef key, mlir::DenseElementsAttr value,
                      mlir::Location loc) override {
    noteFrameKey(key);
    known.try_emplace(key, Known{value, loc, {}, false, true, {}});
  }
  void alias(llvm::StringRef key, llvm::StringRef source) override {
    noteFrameKey(key);
    aliases[key] = resolve(source).str();
  }
  bool isUsed(llvm::StringRef key) override { return used.contains(key); }

private:
  /// A value known at import time: a Const's, or one computed from Consts.
  struct Known {
    mlir::DenseElementsAttr value;
    mlir::Location loc;
    /// The variable's name, for a frozen variable.
    std::string variable;
    bool isVariable;
    bool trainable;
    /// Its variable read or constant, once used as data.
    mlir::Value materialized;
  };

  // TfImporter.cpp
  mlir::Location nodeLoc(int i) const;
  llvm::StringRef resolve(llvm::StringRef key) const;
  mlir::LogicalResult pickOutputs();
  mlir::LogicalResult checkFrozen(const std::vector<bool> &needed) const;
  mlir::FailureOr<mlir::RankedTensorType> getPlaceholderType(int i);
  mlir::LogicalResult buildFunction(llvm::ArrayRef<int> order);
  mlir::LogicalResult readConst(int i);
  mlir::LogicalResult convertNode(int i, KilnOpBuilder &kiln);
  mlir::LogicalResult buildReturn();
  mlir::Value materialize(Known &entry);
  /// The node's data inputs as value keys.
  llvm::SmallVector<std::string> inputKeys(int i) const;
  /// A lookup over a SparseTensor (TfSparseLookups.h): its embedding bag.
  mlir::LogicalResult convertSparseLookup(int i, EmbeddingCombiner combiner,
                                          KilnOpBuilder &kiln);

  // TfWhileLoops.cpp
  /// Unrolls frame `f`: its nodes converted once per iteration while its
  /// condition, known at import time, holds; its Exits then name the loop
  /// variables' last values.
  mlir::LogicalResult runFrame(int f, llvm::ArrayRef<int> order, KilnOpBuilder &kiln);
  /// Copies what `from` names (a value, a constant, a TensorList) to `to`;
  /// it must name something (hasBinding).
  void snapshot(llvm::StringRef from, const std::string &to);
  /// Whether `key` names a value, a constant or a TensorList.
  bool hasBinding(llvm::StringRef key) const;
  /// Drops what `key` names.
  void forget(llvm::StringRef key);
  /// Drops what the frame's nodes defined in the last iteration.
  void forgetFrameKeys();
  void noteFrameKey(llvm::StringRef key) {
    if (inFrame)
      frameKeys.push_back(key.str());
  }

  // TfTensorLists.cpp
  static bool isTensorListOp(llvm::StringRef op);
  mlir::LogicalResult convertTensorListOp(int i, KilnOpBuilder &kiln);
  /// The TensorList a key names, or null.
  std::shared_ptr<TensorList> lookupList(llvm::StringRef key) const;
  void defineList(llvm::StringRef key, std::shared_ptr<TensorList> list) {
    noteFrameKey(key);
    lists[key] = std::move(list);
  }

  llvm::StringRef path;
  bool text;
  mlir::MLIRContext &context;
  const TfImportOptions &options;
  mlir::OpBuilder builder;

  std::unique_ptr<TfGraphFile> file;
  /// The nodes the file holds; those after them come from inlined calls.
  int fileNodes = 0;
  std::unique_ptr<TfGraph> graph;
  TfFrames frames;
  TfSparseLookups sparseLookups;
  std::vector<bool> frozenVariables, statistics;
  llvm::SmallVector<TfOutputRef> outputs;
  llvm::SmallVector<std::string> outputNames;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp function;
  ForwardPrologue prologue;

  llvm::StringMap<mlir::Value> values;
  llvm::StringMap<Known> known;
  llvm::StringMap<std::string> aliases;
  llvm::StringMap<std::shared_ptr<TensorList>> lists;
  llvm::StringSet<> used;

  /// While a frame runs: the keys its nodes define, dropped before the next
  /// iteration.
  bool inFrame = false;
  std::vector<std::string> frameKeys;
};

} // namespace tf_import
} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFGRAPHIMPORTER_H
