//===- Passes.td - Distribution passes --------------------*- tablegen -*-===//

#ifndef KILN_PASSES_DISTRIBUTE_PASSES_TD
#define KILN_PASSES_DISTRIBUTE_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnInsertAllReduce : Pass<"kiln-insert-allreduce", "::mlir::ModuleOp"> {
  let summary = "Averages @train_step's gradients over the replicas in buckets";
  let description = [{
    Only when the train spec's strategy is `all_reduce` (kilnc
    --strategy=data-parallel). Runs between kiln-autodiff (and
    kiln-accumulate-gradients) and kiln-expand-optimizer, on the gradients
    @train_step returns:

      - a sparse gradient (ids and rows of an embedding table) is gathered:
        `kdist.sparse_all_reduce_start mean` gives every replica's ids and
        rows (`?` rows: their number depends on the replicas), the rows
        divided by the number of replicas, for kiln.sparse_apply to add up.
        When 8 replicas' ids and rows would outweigh twice the table, or
        the optimizer clips by global norm (which needs static shapes), the
        gradient becomes the table's dense gradient instead and joins the
        buckets; lazy momentum and Adam are then refused, since a dense
        average moves rows no replica looked up;
      - gradients are taken in the order the backward pass produces them and
        cut into buckets of at most `bucket_bytes` (a gradient larger than
        that is a bucket alone);
      - each bucket is a `kdist.all_reduce_start mean` placed right after its
        last gradient is computed, so it travels while the rest of the
        backward pass runs, and a `kdist.wait` just before the return, whose
        results replace the gradients;
      - the model's loss joins the first bucket, so @train_step's `loss` is
        the mean over all replicas' examples.

    `mean` divides by the number of replicas at run time: one artifact
    serves any number of them, and N replicas at batch B compute the
    gradient one process computes at batch N*B. With accumulate_steps above
    1 the all-reduce is in the update step: one per applied step.

    After, for two gradients in one bucket:
    ```
    %dw2 = ...
    %dw1 = ...
    %h = kdist.all_reduce_start mean %loss, %dw2, %dw1 tag = 0 : tensor<f32>, ...
    %r:3 = kdist.wait %h : tensor<f32>, ...
    return %r#0, %r#2, %r#1 : ...
    ```
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"0",
           "Bucket size in bytes (0: the train spec's strategy.bucket_bytes)">,
  ];
  let dependentDialects = ["::kiln::KilnDialect", "::kiln::dist::KDistDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // KILN_PASSES_DISTRIBUTE_PASSES_TD
