//===- Passes.td - Optimization passes over kiln ----------*- tablegen -*-===//

#ifndef KILN_PASSES_OPTIMIZE_PASSES_TD
#define KILN_PASSES_OPTIMIZE_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnFuseElementwise : Pass<"kiln-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Groups producer-consumer chains of elementwise ops into kiln.fusion";
  let description = [{
    Walks a function's ops in order. An elementwise op (the `Elementwise`
    kiln ops, which include compare, select, cast, gelu and gelu_grad), a
    broadcast or a stop_gradient joins the groups of its operands' producers
    that compute the same shape, when no op outside them reads one of their
    values before it (so the group can move to where its last op is, and no
    path leaves the group and comes back) and no op writing memory (a
    kiln.assign) lies in between. A reduce_sum, reduce_mean or reduce_max
    of a group's value ends the group when nothing else reads the group's
    values. Each group of two or more ops becomes one `kiln.fusion` at the
    place of its last op, yielding every value read outside it; splat
    constants are copied into the body. The CPU lowering computes a fusion
    as one loop nest.

    Before:
    ```
    %0 = kiln.broadcast %b : tensor<16xf32> -> tensor<8x16xf32>
    %1 = kiln.add %x, %0 : tensor<8x16xf32>
    %2 = kiln.relu %1 : tensor<8x16xf32>
    ```
    After:
    ```
    %2 = kiln.fusion (%x, %b) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a: tensor<8x16xf32>, %c: tensor<16xf32>):
      %0 = kiln.broadcast %c : tensor<16xf32> -> tensor<8x16xf32>
      %1 = kiln.add %a, %0 : tensor<8x16xf32>
      %r = kiln.relu %1 : tensor<8x16xf32>
      kiln.yield %r : tensor<8x16xf32>
    }
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

#endif // KILN_PASSES_OPTIMIZE_PASSES_TD
