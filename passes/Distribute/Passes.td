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
        that is a bucket alone); one value returned for several variables
        (two biases added to one sum, after the CSE kilnc runs first) is
        averaged once, and each of those results is that average;
      - each bucket is a `kdist.all_reduce_start mean` placed right after its
        last gradient is computed, so it travels while the rest of the
        backward pass runs, and a `kdist.wait` just before the return, whose
        results replace the gradients;
      - the model's loss joins the first bucket, so @train_step's `loss` is
        the mean over all replicas' examples;
      - with fp16 loss scaling (the train spec's precision fp16_mixed), each
        gathered gradient's rows are checked (their sum minus itself: 0, or
        NaN where one is not finite) and divided by the loss scale before
        the gather, on each replica's own rows of static shape; the checks'
        sum is an extra f32 result (kiln.loss_scale_rows_check) averaged
        with the gradients, the rows result is marked
        kiln.loss_scale_unscaled, and kiln-expand-optimizer adds the check
        to its finite flag: every replica skips the step alike.

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

def KilnInsertPsOps : Pass<"kiln-insert-ps-ops", "::mlir::ModuleOp"> {
  let summary = "Puts the trainable variables on parameter servers: pulls and pushes";
  let description = [{
    Only when the train spec's strategy is `parameter_server` (kilnc
    --strategy=parameter-server). Runs after kiln-autodiff (and
    kiln-accumulate-gradients) in place of kiln-expand-optimizer, which does
    nothing for this strategy: the servers apply the optimizer.

      - Every trainable variable goes to the servers; non-trainable ones
        (counters, running statistics) stay with the worker.
      - A variable read only as the table of axis-0 `kiln.gather`s is a
        *table*: each gather becomes `kdist.ps_pull_rows`, so only the rows
        a batch looks up travel. Any other variable is pulled whole, once
        per function, by one `kdist.ps_pull` where its first read was. This
        holds in every function: @forward (evaluation) pulls too.
      - The partitioner's `hash_embeddings` are hash tables: only row
        gathers may read them (any int64 id; rows created on first touch);
        they must be rank 2 ([rows, width]).
      - @train_step's gradient results become pushes, each right after its
        gradient is computed so it travels while the backward pass goes on:
        `kdist.ps_push` for a dense gradient, `kdist.ps_push_rows` for an
        embedding's ids and rows (after the later of the two). They leave
        the function's results; the others (the loss) stay. A sparse
        gradient of a variable pulled whole is made dense and pushed whole.
      - Each variable on the servers gets a `kdist.placement` dictionary:
          `kind`: "dense" (pulled and pushed whole), "table" (by rows) or
            "hash" (by rows, any id);
          `partitioner`: "none", "fixed_shards", "min_shard_bytes" or
            "max_shard_bytes" (always "none" for a scalar: one shard);
          `num_shards` (fixed_shards), `min_shard_bytes` (min_shard_bytes),
            `max_shard_bytes` (max_shard_bytes), `max_shards` (both sizes;
            0: as many as there are servers): only the partitioner's own;
          `row_split`: "div" or "mod", tables only (a hash table's rows go
            by a hash of the id).
        The runtime resolves the shard map from it and the number of servers
        at launch: one artifact runs on any number of them.
      - fp16 loss scaling (train spec precision fp16_mixed): the loss scale
        stays with the worker; the step checks every gradient it pushes (the
        sum of all, minus itself, is 0) and pushes them as they are, times
        the scale (the runtime sends the scale, the servers divide), and
        moves the scale as kiln-expand-optimizer does (passes/Graph/
        LossScaling.h), returning `loss_scale` and `skipped_step`; where they
        are not finite the runtime sends a skip marker instead.

    Refused, with the reason: global-norm clipping (the norm needs every
    server's gradients), non-f32 trainable variables, `fixed_shards:N` with
    more shards than a variable has rows, a hash table read other than by
    row gathers or not of rank 2, a `kiln.assign` to a variable on the
    servers.

    Before and after, for an embedding and a dense weight (min_shard_bytes):
    ```
    kiln.variable @emb : tensor<100x8xf32> init <normal(0.0, 0.01)>
    kiln.variable @w : tensor<8x2xf32> init <glorot_uniform>
    %t = kiln.read @emb : tensor<100x8xf32>
    %e = kiln.gather %t[%ids] : (tensor<100x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
    %w = kiln.read @w : tensor<8x2xf32>
    ...
    return %loss, %dw, %gids, %grows  // kiln.gradient = @w, ...
    ```
    ```
    kiln.variable @emb : ... {kdist.placement = {kind = "table",
        max_shards = 0 : i64, min_shard_bytes = 262144 : i64,
        partitioner = "min_shard_bytes", row_split = "div"}}
    kiln.variable @w : ... {kdist.placement = {kind = "dense", ...}}
    %e = kdist.ps_pull_rows @emb[%ids] : (tensor<4xi64>) -> tensor<4x8xf32>
    %w = kdist.ps_pull @w : tensor<8x2xf32>
    ...
    kdist.ps_push @w, %dw : tensor<8x2xf32>
    kdist.ps_push_rows @emb, %gids, %grows : tensor<4xi64>, tensor<4x8xf32>
    return %loss
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect", "::kiln::dist::KDistDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // KILN_PASSES_DISTRIBUTE_PASSES_TD
