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

def KilnAutodiff : Pass<"kiln-autodiff", "::mlir::ModuleOp"> {
  let summary = "Builds @train_step: @forward plus the gradients of the loss";
  let description = [{
    Reverse mode from the train spec's `loss` output. @train_step returns
    @forward's outputs, then for each trainable variable the loss depends
    on either a dense gradient (`kiln.gradient = @var`) or, for a variable
    only looked up by axis-0 gathers, a sparse one: the ids
    (`kiln.gradient_indices`) and the rows' gradients (`kiln.gradient_rows`),
    duplicates not merged. kiln-expand-optimizer consumes them.

    Before:
    ```
    kiln.variable @w : tensor<4x2xf32> init <zeros>
    func.func @forward(%x: tensor<8x4xf32>, %t: tensor<8x2xf32>) -> (tensor<f32> {kiln.name = "loss"}) {
      %w = kiln.read @w : tensor<4x2xf32>
      %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
      %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
      return %l : tensor<f32>
    }
    ```
    After (@forward unchanged), in @train_step:
    ```
    %dy = ... 2 (y - t) / 16 ...
    %dw = kiln.matmul %x, %dy {transpose_a} : (tensor<8x4xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
    return %l, %dw : tensor<f32>, tensor<4x2xf32>   // {kiln.gradient = @w}
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect", "::mlir::func::FuncDialect"];
}

def KilnAccumulateGradients : Pass<"kiln-accumulate-gradients", "::mlir::ModuleOp"> {
  let summary = "Splits @train_step into per-micro-batch accumulation and one update";
  let description = [{
    Only when the train spec's `accumulate_steps` N is above 1. kiln-autodiff's
    @train_step becomes @accumulate_step (run on each micro-batch): it keeps
    @forward's outputs and adds each dense gradient into `<var>/gradient_sum`;
    a sparse gradient's K ids and rows are shifted into `<var>/gradient_ids`
    [N*K] and `<var>/gradient_rows` [N*K, ...]. A new @train_step without
    arguments returns the accumulated gradients (sums and rows divided by N,
    with their kiln.gradient* attributes) and zeroes the sums, for
    kiln-expand-optimizer to turn into the update.

    After, for a dense @w and N = 4:
    ```
    func.func @accumulate_step(%x: ..., %t: ...) -> (tensor<f32> {kiln.name = "loss"}) {
      ...
      %s = kiln.read @"w/gradient_sum" : tensor<4x2xf32>
      %s1 = kiln.add %s, %dw : tensor<4x2xf32>
      kiln.assign @"w/gradient_sum", %s1 : tensor<4x2xf32>
      return %l : tensor<f32>
    }
    func.func @train_step() -> (tensor<4x2xf32> {kiln.gradient = @w}) {
      %s = kiln.read @"w/gradient_sum" : tensor<4x2xf32>
      %g = kiln.mul %s, %quarter : tensor<4x2xf32>
      %z = kiln.mul %s, %zero : tensor<4x2xf32>
      kiln.assign @"w/gradient_sum", %z : tensor<4x2xf32>
      return %g : tensor<4x2xf32>
    }
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect", "::mlir::func::FuncDialect"];
}

def KilnExpandOptimizer : Pass<"kiln-expand-optimizer", "::mlir::ModuleOp"> {
  let summary = "Replaces @train_step's gradients by the optimizer's update";
  let description = [{
    Adds a `global_step` counter and the optimizer's slot variables
    (`<var>/m`, `<var>/v`, `<var>/momentum`, `<var>/accumulator`), computes
    this step's learning rate from the schedule, clips by global norm when
    asked, and updates each variable (kiln.apply_* for dense gradients,
    kiln.sparse_apply for sparse ones) followed by kiln.assign. The gradient
    results become one `learning_rate` output.

    Before: `return %l, %dw : ... {kiln.gradient = @w}`. After:
    ```
    %w0 = kiln.read @w : tensor<4x2xf32>
    %w1 = kiln.apply_sgd %w0, %dw, %lr : tensor<4x2xf32>, tensor<f32>
    kiln.assign @w, %w1 : tensor<4x2xf32>
    return %l, %lr : tensor<f32>, tensor<f32>
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect", "::mlir::func::FuncDialect"];
}

#endif // KILN_PASSES_GRAPH_PASSES_TD
