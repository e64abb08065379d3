//===- Passes.td - Conversions out of the kiln dialect ----*- tablegen -*-===//

#ifndef KILN_PASSES_CONVERSION_PASSES_TD
#define KILN_PASSES_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertKilnToLinalg : Pass<"convert-kiln-to-linalg"> {
  let summary = "Lowers kiln tensor ops to linalg, tensor, arith and math";
  let description = [{
    Elementwise ops, broadcasts, slices, concats, reductions, softmax, layer
    norm, gather and the losses become `linalg.generic` ops on tensors;
    transpose becomes `linalg.transpose`, matmul `linalg.matmul` /
    `linalg.batch_matmul`, reshape `tensor.collapse_shape` + `tensor.expand_shape`
    (views) and constants
    `arith.constant`. Variables and their reads are left alone: the execution
    plan gives them memory. Shapes must be static (run `kiln-infer-shapes`
    first); an op with a dynamic dimension is reported and the pass fails.

    Before:
    ```
    %0 = kiln.add %a, %b : tensor<4xf32>
    ```
    After:
    ```
    %0 = tensor.empty() : tensor<4xf32>
    %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
           ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
         ^bb0(%x: f32, %y: f32, %out: f32):
           %s = arith.addf %x, %y : f32
           linalg.yield %s : f32
         } -> tensor<4xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // KILN_PASSES_CONVERSION_PASSES_TD
