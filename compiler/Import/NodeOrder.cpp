//===- NodeOrder.cpp - Topological order of a model's nodes ---------------===//

#include "compiler/Import/NodeOrder.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <functional>
#include <queue>

namespace kiln {

mlir::FailureOr<llvm::SmallVector<int>>
orderNodes(int count,
           llvm::function_ref<void(int, llvm::SmallVectorImpl<int> &)> producers,
           llvm::SmallVectorImpl<int> &cycle) {
  llvm::SmallVector<llvm::SmallVector<int>> inputs(count), consumers(count);
  llvm::SmallVector<int> pending(count, 0);
  for (int i = 0; i < count; ++i) {
    producers(i, inputs[i]);
    pending[i] = inputs[i].size();
    for (int producer : inputs[i])
      consumers[producer].push_back(i);
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < count; ++i)
    if (pending[i] == 0)
      ready.push(i);
  llvm::SmallVector<int> order;
  while (!ready.empty()) {
    int node = ready.top();
    ready.pop();
    order.push_back(node);
    for (int consumer : consumers[node])
      if (--pending[consumer] == 0)
        ready.push(consumer);
  }
  if (static_cast<int>(order.size()) == count)
    return order;

  // Every node left waits on another node left: walking from one to a
  // producer that is left must come back to a node already visited.
  llvm::DenseMap<int, int> position;
  llvm::SmallVector<int> path;
  int node = llvm::find_if(pending, [](int p) { return p > 0; }) - pending.begin();
  while (!position.count(node)) {
    position[node] = path.size();
    path.push_back(node);
    node = *llvm::find_if(inputs[node], [&](int p) { return pending[p] > 0; });
  }
  // The walk went against the data flow; the cycle is the path from the
  // repeated node on, reversed so that each node feeds the next.
  cycle.assign(path.begin() + position[node], path.end());
  std::reverse(cycle.begin() + 1, cycle.end());
  return mlir::failure();
}

} // namespace kiln
