//===- KilnFusionOps.td - Ops computed as one kernel -------*- tablegen -*-===//
//
// What kiln-fuse-elementwise builds: a region of ops that lowering turns into
// one loop nest, so the values between them never go to memory.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FUSION_OPS_TD
#define KILN_FUSION_OPS_TD

def Kiln_FusionOp : Kiln_Op<"fusion",
    [IsolatedFromAbove, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "Ops computed together in one kernel";
  let description = [{
    The body's block arguments stand for `inputs`, one each with its type;
    `kiln.yield` gives the results. The body holds elementwise ops, compare,
    select, cast, gelu and its gradient, stop_gradient, and broadcasts of the
    inputs, all over one iteration shape: lowering makes it one
    `linalg.generic` that reads each input once per element (a broadcast
    input through its broadcast map) and writes every result. It may end in
    a reduce_sum, reduce_mean or reduce_max of that shape giving its only
    result: the generic then reduces the elements the body computes.
    ```
    %r = kiln.fusion (%x, %b) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a: tensor<8x16xf32>, %c: tensor<16xf32>):
      %0 = kiln.broadcast %c : tensor<16xf32> -> tensor<8x16xf32>
      %1 = kiln.add %a, %0 : tensor<8x16xf32>
      %2 = kiln.relu %1 : tensor<8x16xf32>
      kiln.yield %2 : tensor<8x16xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs);
  let results = (outs Variadic<Kiln_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The terminator of the body.
    YieldOp getYield();
  }];
}

def Kiln_YieldOp : Kiln_Op<"yield",
    [Pure, Terminator, HasParent<"FusionOp">]> {
  let summary = "The results of a kiln.fusion";
  let arguments = (ins Variadic<Kiln_Tensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

#endif // KILN_FUSION_OPS_TD
