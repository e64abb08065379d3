//===- KDistOps.td - kdist dialect: communication ops -----*- tablegen -*-===//
//
// The `kdist` dialect holds what one replica of a distributed program says to
// the others: collectives over the replicas of a data-parallel job. Every
// replica runs the same program, so matching ops meet by their order and
// their `tag`. Each collective has a blocking form and a start/wait pair: the
// start op hands its operands to the communication layer and returns a
// `!kdist.pending` handle; `kdist.wait` gives the results. Between them the
// schedule is free to run compute, which is how communication overlaps the
// backward pass.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_KDIST_OPS_TD
#define KILN_KDIST_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"

def KDist_Dialect : Dialect {
  let name = "kdist";
  let cppNamespace = "::kiln::dist";
  let summary = "Collectives between the replicas of a distributed program";
  let description = [{
    All-reduce, reduce-scatter, all-gather, broadcast and barrier over the
    replicas of a job, each blocking or as a start/wait pair. The number of
    replicas is known only when the program runs, so an op whose shapes
    depend on it (all_gather, reduce_scatter) names the group size it was
    built for; all_reduce and broadcast work for any number of replicas,
    and `mean` divides by the number read at run time.
  }];
  let useDefaultTypePrinterParser = 1;
}

class KDist_Op<string mnemonic, list<Trait> traits = []>
    : Op<KDist_Dialect, mnemonic, traits>;

def KDist_PendingType : TypeDef<KDist_Dialect, "Pending"> {
  let mnemonic = "pending";
  let summary = "A collective in flight";
  let description = [{
    Returned by a `*_start` op and consumed by exactly one `kdist.wait`,
    which gives the collective's results.
  }];
}

def KDist_ReduceKind : I32EnumAttr<"ReduceKind", "reduction", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"max", 2>]> {
  let cppNamespace = "::kiln::dist";
}

def KDist_Tensor : RankedTensorOf<[F32, F16, BF16, I32, I64]>;
def KDist_IndexTensor : 1DTensorOf<[I32, I64]>;
def KDist_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def KDist_IndexTensorAnyRank : RankedTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// Blocking collectives
//===----------------------------------------------------------------------===//

def KDist_AllReduceOp : KDist_Op<"all_reduce",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Reduces each operand elementwise over every replica";
  let description = [{
    Every replica gets, for each operand, the elementwise sum, mean or
    maximum of that operand over all replicas. Several operands travel as
    one message (a bucket); results have the operands' types. `mean` divides
    by the number of replicas at run time.
    ```
    %dw, %db = kdist.all_reduce mean %gw, %gb : tensor<4x2xf32>, tensor<2xf32>
    ```
  }];
  let arguments = (ins KDist_ReduceKind:$kind, Variadic<KDist_Tensor>:$inputs,
                       DefaultValuedAttr<I64Attr, "0">:$tag);
  let results = (outs Variadic<KDist_Tensor>:$results);
  let assemblyFormat = "$kind $inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

def KDist_BroadcastOp : KDist_Op<"broadcast",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Gives every replica the operands of replica `root`";
  let description = [{
    ```
    %w = kdist.broadcast %w0 root = 0 : tensor<4x2xf32>
    ```
  }];
  let arguments = (ins Variadic<KDist_Tensor>:$inputs, I64Attr:$root,
                       DefaultValuedAttr<I64Attr, "0">:$tag);
  let results = (outs Variadic<KDist_Tensor>:$results);
  let assemblyFormat = "$inputs `root` `=` $root attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

def KDist_AllGatherOp : KDist_Op<"all_gather"> {
  let summary = "Concatenates one operand from every replica along an axis";
  let description = [{
    Built for `group_size` replicas: the result's `axis` dimension is
    `group_size` times the operand's, replica r's operand at block r.
    ```
    %all = kdist.all_gather %ids axis = 0 group_size = 2 : tensor<8xi64> -> tensor<16xi64>
    ```
  }];
  let arguments = (ins KDist_Tensor:$input, I64Attr:$axis, I64Attr:$group_size,
                       DefaultValuedAttr<I64Attr, "0">:$tag);
  let results = (outs KDist_Tensor:$result);
  let assemblyFormat = [{
    $input `axis` `=` $axis `group_size` `=` $group_size attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def KDist_ReduceScatterOp : KDist_Op<"reduce_scatter"> {
  let summary = "Reduces over every replica and leaves each one block of the result";
  let description = [{
    Built for `group_size` replicas: the operand's `axis` dimension splits
    into `group_size` equal blocks and replica r keeps block r of the
    reduction.
    ```
    %part = kdist.reduce_scatter sum %g axis = 0 group_size = 2 : tensor<8x4xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins KDist_ReduceKind:$kind, KDist_Tensor:$input, I64Attr:$axis,
                       I64Attr:$group_size, DefaultValuedAttr<I64Attr, "0">:$tag);
  let results = (outs KDist_Tensor:$result);
  let assemblyFormat = [{
    $kind $input `axis` `=` $axis `group_size` `=` $group_size attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def KDist_SparseAllReduceOp : KDist_Op<"sparse_all_reduce"> {
  let summary = "Reduces a sparse tensor (ids and rows) over every replica";
  let description = [{
    A sparse tensor such as an embedding table's gradient: row `rows[k]` of
    the table belongs at id `ids[k]`, duplicates adding up. Its reduction
    over the replicas is every replica's ids and rows, concatenated in rank
    order (an all-gather; duplicates stay for the consumer to add up), the
    rows divided by the number of replicas for `mean`. The leading size of
    the results is the replicas' count times the operands', known at run
    time only: `?`.
    ```
    %all_ids, %all_rows = kdist.sparse_all_reduce mean %ids, %rows
        : tensor<256xi64>, tensor<256x16xf32> -> tensor<?xi64>, tensor<?x16xf32>
    ```
  }];
  let arguments = (ins KDist_ReduceKind:$kind, KDist_IndexTensor:$ids,
                       KDist_FloatTensor:$rows, DefaultValuedAttr<I64Attr, "0">:$tag);
  let results = (outs KDist_IndexTensor:$all_ids, KDist_FloatTensor:$all_rows);
  let assemblyFormat = [{
    $kind $ids `,` $rows attr-dict `:` type($ids) `,` type($rows) `->` type($all_ids) `,`
    type($all_rows)
  }];
  let hasVerifier = 1;
}

def KDist_BarrierOp : KDist_Op<"barrier"> {
  let summary = "Returns when every replica has reached it";
  let description = [{
    ```
    kdist.barrier
    ```
  }];
  let arguments = (ins DefaultValuedAttr<I64Attr, "0">:$tag);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Start/wait forms
//===----------------------------------------------------------------------===//

def KDist_AllReduceStartOp : KDist_Op<"all_reduce_start"> {
  let summary = "Starts an all_reduce; kdist.wait gives its results";
  let description = [{
    The operands are handed over at the start: the buffers holding them may
    be reused before the wait. Replicas start their all-reduces in the same
    order; `tag` tells concurrent ones apart (the distribute pass numbers
    its buckets with it).
    ```
    %h = kdist.all_reduce_start mean %gw, %gb tag = 0 : tensor<4x2xf32>, tensor<2xf32>
    %dw, %db = kdist.wait %h : tensor<4x2xf32>, tensor<2xf32>
    ```
  }];
  let arguments = (ins KDist_ReduceKind:$kind, Variadic<KDist_Tensor>:$inputs,
                       I64Attr:$tag);
  let results = (outs KDist_PendingType:$pending);
  let assemblyFormat = "$kind $inputs `tag` `=` $tag attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

def KDist_BroadcastStartOp : KDist_Op<"broadcast_start"> {
  let summary = "Starts a broadcast; kdist.wait gives its results";
  let arguments = (ins Variadic<KDist_Tensor>:$inputs, I64Attr:$root, I64Attr:$tag);
  let results = (outs KDist_PendingType:$pending);
  let assemblyFormat =
      "$inputs `root` `=` $root `tag` `=` $tag attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

def KDist_AllGatherStartOp : KDist_Op<"all_gather_start"> {
  let summary = "Starts an all_gather; kdist.wait gives its result";
  let arguments = (ins KDist_Tensor:$input, I64Attr:$axis, I64Attr:$group_size,
                       I64Attr:$tag);
  let results = (outs KDist_PendingType:$pending);
  let assemblyFormat = [{
    $input `axis` `=` $axis `group_size` `=` $group_size `tag` `=` $tag attr-dict
    `:` type($input)
  }];
  let hasVerifier = 1;
}

def KDist_ReduceScatterStartOp : KDist_Op<"reduce_scatter_start"> {
  let summary = "Starts a reduce_scatter; kdist.wait gives its result";
  let arguments = (ins KDist_ReduceKind:$kind, KDist_Tensor:$input, I64Attr:$axis,
                       I64Attr:$group_size, I64Attr:$tag);
  let results = (outs KDist_PendingType:$pending);
  let assemblyFormat = [{
    $kind $input `axis` `=` $axis `group_size` `=` $group_size `tag` `=` $tag
    attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def KDist_SparseAllReduceStartOp : KDist_Op<"sparse_all_reduce_start"> {
  let summary = "Starts a sparse_all_reduce; kdist.wait gives its ids and rows";
  let arguments = (ins KDist_ReduceKind:$kind, KDist_IndexTensor:$ids,
                       KDist_FloatTensor:$rows, I64Attr:$tag);
  let results = (outs KDist_PendingType:$pending);
  let assemblyFormat = [{
    $kind $ids `,` $rows `tag` `=` $tag attr-dict `:` type($ids) `,` type($rows)
  }];
  let hasVerifier = 1;
}

def KDist_WaitOp : KDist_Op<"wait"> {
  let summary = "Waits for a started collective and gives its results";
  let description = [{
    The results are those the blocking form of the start op would give, in
    its order. Each handle has exactly one wait, after its start in the
    same block.
  }];
  let arguments = (ins KDist_PendingType:$pending);
  let results = (outs Variadic<KDist_Tensor>:$results);
  let assemblyFormat = "$pending attr-dict `:` type($results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Parameter servers
//===----------------------------------------------------------------------===//

// Pulls read the servers' state and pushes write it: the ops carry those
// effects on a resource of their own, so CSE never merges two pulls across a
// push and nothing moves a pull past a push, while an unused pull may still
// be dropped.
def KDist_ParameterServerResource
    : Resource<"::kiln::dist::ParameterServerResource">;

class KDist_PsOp<string mnemonic, list<Trait> traits = []>
    : KDist_Op<mnemonic, !listconcat(traits,
                                     [DeclareOpInterfaceMethods<SymbolUserOpInterface>])>;

def KDist_PsPullOp : KDist_PsOp<"ps_pull",
    [MemoryEffects<[MemRead<KDist_ParameterServerResource>]>]> {
  let summary = "The whole value of a variable the parameter servers hold";
  let description = [{
    Gathers every shard of dense variable `variable` from the servers
    holding them (the shard map is resolved at launch from the number of
    servers). The result has the variable's type.
    ```
    %w = kdist.ps_pull @w : tensor<4x2xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable);
  let results = (outs KDist_FloatTensor:$result);
  let assemblyFormat = "$variable attr-dict `:` type($result)";
}

def KDist_PsPullRowsOp : KDist_PsOp<"ps_pull_rows",
    [MemoryEffects<[MemRead<KDist_ParameterServerResource>]>]> {
  let summary = "Rows of a table the parameter servers hold";
  let description = [{
    What `kiln.gather %table[%ids]` (axis 0) gives, with only the rows at
    `ids` travelling: the result is `ids`' shape followed by the table's row
    shape. A hash table (unbounded ids) is read only this way. With
    `padded` (the rows of a `kiln.embedding_bag`), ids of -1 pad the lists:
    their rows are zeros and no server is asked for them. (The runtime gives
    -1 a zero row in any pull; `padded` tells it the input may hold -1.)
    ```
    %e = kdist.ps_pull_rows @emb[%ids] : (tensor<32x4xi64>) -> tensor<32x4x16xf32>
    %b = kdist.ps_pull_rows @emb[%lists] {padded} : (tensor<32x5xi64>) -> tensor<32x5x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable, KDist_IndexTensorAnyRank:$ids,
                       UnitAttr:$padded);
  let results = (outs KDist_FloatTensor:$result);
  let assemblyFormat = [{
    $variable `[` $ids `]` attr-dict `:` functional-type($ids, $result)
  }];
}

def KDist_PsPushOp : KDist_PsOp<"ps_push",
    [MemoryEffects<[MemWrite<KDist_ParameterServerResource>]>]> {
  let summary = "Sends a variable's dense gradient to the parameter servers";
  let description = [{
    The gradient has the variable's type; the servers apply the optimizer
    (sync: once every worker's gradient of the step has arrived).
    ```
    kdist.ps_push @w, %g : tensor<4x2xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable, KDist_FloatTensor:$gradient);
  let assemblyFormat = "$variable `,` $gradient attr-dict `:` type($gradient)";
}

def KDist_PsPushRowsOp : KDist_PsOp<"ps_push_rows",
    [MemoryEffects<[MemWrite<KDist_ParameterServerResource>]>]> {
  let summary = "Sends a table's sparse gradient to the parameter servers";
  let description = [{
    `rows[k]` is the gradient of row `ids[k]`; duplicate ids add up. `ids`
    is [N], `rows` [N] followed by the table's row shape.
    ```
    kdist.ps_push_rows @emb, %ids, %rows : tensor<128xi64>, tensor<128x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable, KDist_IndexTensor:$ids,
                       KDist_FloatTensor:$rows);
  let assemblyFormat = [{
    $variable `,` $ids `,` $rows attr-dict `:` type($ids) `,` type($rows)
  }];
}

#endif // KILN_KDIST_OPS_TD
