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

def KilnExpandArith : Pass<"kiln-expand-arith"> {
  let summary = "arith-expand without the min/max expansions";
  let description = [{
    Expands what the LLVM lowering cannot take (bf16 extensions and
    truncations, ceil/floor divisions) but leaves `maximumf`/`minimumf`
    to become `llvm.maximum`/`llvm.minimum`: arith-expand's compare-and-
    select form of them hides a max reduction (softmax's row max) from
    LLVM's vectorizer.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def KilnApproximateMath : Pass<"kiln-approximate-math"> {
  let summary = "Replaces f32 transcendental calls by polynomial approximations";
  let description = [{
    MLIR's polynomial approximations of f32 `math` ops (exp, expm1, log,
    log1p, log2, tanh, erf, sin, cos, atan, ...): arithmetic the loop
    vectorizer can widen, instead of one scalar libm call per element
    (softmax's exp and GELU's tanh were a quarter of a transformer training
    step). f64 ops are left to libm. Runs on loops, before
    `convert-math-to-llvm`; the numerics tests bound the error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def KilnWriteInPlace : Pass<"kiln-write-in-place", "::mlir::func::FuncOp"> {
  let summary = "Makes a kernel's elementwise generic write over the input it updates";
  let description = [{
    For a kernel (a function over memrefs) whose result is materialized into
    the same memref one of its inputs is read from (the planner's in-place
    updates), rewrites the producing `linalg.generic` to use that input
    tensor as its `outs` operand, in place of its `tensor.empty`: one-shot
    bufferization then writes the result over the input with no copy, and the
    loop reads and writes one pointer, so LLVM's vectorizer needs no runtime
    alias check between them (a check that fails when the two are equal and
    falls back to scalar code). Only all-parallel generics where the input
    and the result share an identity indexing map are rewritten: each
    element is read before it is overwritten, at the same index.

    Before:
    ```
    %p = bufferization.to_tensor %arg0 restrict writable : memref<4xf32>
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {...} ins(%p, %g : ...) outs(%e : tensor<4xf32>) {...}
    bufferization.materialize_in_destination %r in writable %arg0 : ...
    ```
    After: `outs(%p : tensor<4xf32>)`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def KilnSplitRows : Pass<"kiln-split-rows", "::mlir::ModuleOp"> {
  let summary = "Lets a kernel compute a range of its rows, for several threads";
  let description = [{
    Runs on kernels lowered to loops over memrefs. A kernel whose body is a
    sequence of loop nests whose outer loops all run over the same rows
    [0, N), each writing only at its own row (every store's first index is
    the outer induction variable) and reading what the kernel itself writes
    only at its own row, computes any range of rows independently of the
    others. Such a kernel gets two more arguments, `begin` and `end`, that
    bound every outer loop; the module's `split_rows.kernel_rows` dictionary
    records N by kernel name. Outside the loops the kernel may read what it
    does not write (an optimizer's learning rate) and copy into its own
    scratch buffers (each call has its own): every range does that too.
    Kernels with less than `min-iterations` innermost iterations in all
    (unless marked `split_rows.required = K`: the reader of a product
    computed by blocks of rows, which needs the row entry whatever its size
    and reads its argument K, the block, only at its own row), or
    whose body does anything else that writes memory (a copy into an
    argument, a call, a store through a view), are left alone.

    Before:
    ```
    func.func @kiln_kernel_0(%a: memref<512x1000xf32>, %b: memref<512x1000xf32>) {
      scf.for %i = %c0 to %c512 step %c1 {
        scf.for %j = %c0 to %c1000 step %c1 {
          %x = memref.load %a[%i, %j] : memref<512x1000xf32>
          memref.store %x, %b[%i, %j] : memref<512x1000xf32>
        }
      }
    }
    ```
    After: `func.func @kiln_kernel_0(..., %begin: index, %end: index)` with
    `scf.for %i = %begin to %end step %c1`, and `split_rows.kernel_rows =
    {kiln_kernel_0 = 512 : i64}` on the module.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", "16384",
           "The fewest innermost iterations a kernel needs to be split (a "
           "smaller one cannot gain from a second thread; of the others, "
           "the runtime measures which do)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect"];
}

#endif // KILN_PASSES_CONVERSION_PASSES_TD
