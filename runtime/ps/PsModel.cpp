//===- PsModel.cpp - What the parameter servers hold ----------------------===//

#include "runtime/ps/PsModel.h"

namespace kiln::ps {

const PsVariable *PsModel::find(uint32_t artifactIndex) const {
  int ordinal = ordinalOf(artifactIndex);
  return ordinal < 0 ? nullptr : &variables[ordinal];
}

int PsModel::ordinalOf(uint32_t artifactIndex) const {
  for (size_t i = 0; i < variables.size(); ++i)
    if (variables[i].artifactIndex == artifactIndex)
      return static_cast<int>(i);
  return -1;
}

} // namespace kiln::ps
