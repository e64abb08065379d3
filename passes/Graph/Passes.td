//===- Passes.td - Graph-level passes over the kiln dialect -*- tablegen -*-===//

#ifndef KILN_PASSES_GRAPH_PASSES_TD
#define KILN_PASSES_GRAPH_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnInferShapes : Pass<"kiln-infer-shapes", "::mlir::ModuleOp"> {
  let summary = "Refines `?` dimensions from the shape rules of each op";
  let description = [{
    Walks every function in order and replaces each result type by the more
    static type its op's shape rule infers, then updates the function's
    result types. A reshape result with one `?` gets it from the element
    count, like -1 in numpy. Sizes that turn out to disagree (operands of an
    elementwise op, a count a reshape cannot hold) are errors.

    A refinement is taken back where the IR could not hold it: for values
    used by ops outside kiln, values returned from a function that is called
    (its signature stays), and operands that must share one type (an
    elementwise op's, compare's) where only some could be refined.

    Before:
    ```
    func.func @f(%x: tensor<4x8xf32>) -> tensor<?x?xf32> {
      %0 = kiln.reshape %x : tensor<4x8xf32> -> tensor<?x2xf32>
      %1 = kiln.exp %0 : tensor<?x2xf32>
      %2 = kiln.matmul %1, %1 {transpose_b} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x?xf32>
      return %2 : tensor<?x?xf32>
    }
    ```
    After:
    ```
    func.func @f(%x: tensor<4x8xf32>) -> tensor<16x16xf32> {
      %0 = kiln.reshape %x : tensor<4x8xf32> -> tensor<16x2xf32>
      %1 = kiln.exp %0 : tensor<16x2xf32>
      %2 = kiln.matmul %1, %1 {transpose_b} : (tensor<16x2xf32>, tensor<16x2xf32>) -> tensor<16x16xf32>
      return %2 : tensor<16x16xf32>
    }
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect", "::mlir::func::FuncDialect"];
}

#endif // KILN_PASSES_GRAPH_PASSES_TD
