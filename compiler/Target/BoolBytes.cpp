//===- BoolBytes.cpp - Boolean elements loaded and stored as bytes --------===//

#include "compiler/Target/BoolBytes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

namespace kiln {

void accessBoolsAsBytes(llvm::Module &module) {
  llvm::SmallVector<llvm::Instruction *> accesses;
  for (llvm::Function &function : module)
    for (llvm::BasicBlock &block : function)
      for (llvm::Instruction &instruction : block) {
        if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&instruction);
            load && load->getType()->isIntegerTy(1))
          accesses.push_back(load);
        if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&instruction);
            store && store->getValueOperand()->getType()->isIntegerTy(1))
          accesses.push_back(store);
      }
  for (llvm::Instruction *access : accesses) {
    llvm::IRBuilder<> builder(access);
    llvm::Type *byte = builder.getInt8Ty();
    if (auto *load = llvm::dyn_cast<llvm::LoadInst>(access)) {
      llvm::LoadInst *wide =
          builder.CreateAlignedLoad(byte, load->getPointerOperand(),
                                    load->getAlign(), load->isVolatile());
      wide->copyMetadata(*load);
      load->replaceAllUsesWith(builder.CreateTrunc(wide, builder.getInt1Ty()));
    } else {
      auto *store = llvm::cast<llvm::StoreInst>(access);
      llvm::StoreInst *wide = builder.CreateAlignedStore(
          builder.CreateZExt(store->getValueOperand(), byte),
          store->getPointerOperand(), store->getAlign(), store->isVolatile());
      wide->copyMetadata(*store);
    }
    access->eraseFromParent();
  }
}

} // namespace kiln
