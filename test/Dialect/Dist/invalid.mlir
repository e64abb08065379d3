// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that a mean needs float operands.
func.func @mean_of_ints(%ids: tensor<8xi64>) {
  // expected-error @+1 {{'kdist.all_reduce' op expects float operands for mean, got operand #0 of type 'tensor<8xi64>'}}
  %0 = kdist.all_reduce mean %ids : tensor<8xi64>
  return
}

// -----

// Tests that an all-reduce has something to reduce.
func.func @empty_all_reduce() {
  // expected-error @+1 {{'kdist.all_reduce' op expects at least one operand}}
  "kdist.all_reduce"() {kind = 0 : i32} : () -> ()
  return
}

// -----

// Tests that tags are not negative.
func.func @negative_tag(%g: tensor<4xf32>) {
  // expected-error @+1 {{'kdist.all_reduce' op expects a tag >= 0, got -1}}
  %0 = kdist.all_reduce sum %g {tag = -1 : i64} : tensor<4xf32>
  return
}

// -----

// Tests that a broadcast's root is a rank.
func.func @negative_root(%g: tensor<4xf32>) {
  // expected-error @+1 {{'kdist.broadcast' op expects root >= 0, got -2}}
  %0 = kdist.broadcast %g root = -2 : tensor<4xf32>
  return
}

// -----

// Tests that all_gather's result is the operand with the axis scaled.
func.func @all_gather_type(%x: tensor<8x2xf32>) {
  // expected-error @+1 {{'kdist.all_gather' op expects result type 'tensor<16x2xf32>', got 'tensor<8x2xf32>'}}
  %0 = kdist.all_gather %x axis = 0 group_size = 2 : tensor<8x2xf32> -> tensor<8x2xf32>
  return
}

// -----

// Tests that the gathered axis exists.
func.func @all_gather_axis(%x: tensor<8x2xf32>) {
  // expected-error @+1 {{'kdist.all_gather' op expects axis in [0, 2), got 2}}
  %0 = kdist.all_gather %x axis = 2 group_size = 2 : tensor<8x2xf32> -> tensor<8x4xf32>
  return
}

// -----

// Tests that a group has at least one member.
func.func @group_size(%x: tensor<8xf32>) {
  // expected-error @+1 {{'kdist.all_gather' op expects group_size >= 1, got 0}}
  %0 = kdist.all_gather %x axis = 0 group_size = 0 : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that reduce_scatter splits its axis evenly.
func.func @reduce_scatter_uneven(%x: tensor<6x2xf32>) {
  // expected-error @+1 {{'kdist.reduce_scatter' op expects dimension 0 (6) to divide into group_size (4) blocks}}
  %0 = kdist.reduce_scatter sum %x axis = 0 group_size = 4 : tensor<6x2xf32> -> tensor<1x2xf32>
  return
}

// -----

// Tests that a started collective is waited for exactly once.
func.func @unwaited(%g: tensor<4xf32>) {
  // expected-error @+1 {{'kdist.all_reduce_start' op expects its handle to be used by exactly one kdist.wait}}
  %h = kdist.all_reduce_start sum %g tag = 0 : tensor<4xf32>
  return
}

// -----

func.func @waited_twice(%g: tensor<4xf32>) {
  // expected-error @+1 {{'kdist.all_reduce_start' op expects its handle to be used by exactly one kdist.wait}}
  %h = kdist.all_reduce_start sum %g tag = 0 : tensor<4xf32>
  %0 = kdist.wait %h : tensor<4xf32>
  %1 = kdist.wait %h : tensor<4xf32>
  return
}

// -----

// Tests that a wait gives the types its start op's blocking form would.
func.func @wait_types(%g: tensor<4xf32>, %b: tensor<2xf32>) {
  %h = kdist.all_reduce_start mean %g, %b tag = 0 : tensor<4xf32>, tensor<2xf32>
  // expected-error @+1 {{'kdist.wait' op expects result types ('tensor<4xf32>', 'tensor<2xf32>') from its start op, got ('tensor<4xf32>')}}
  %0 = kdist.wait %h : tensor<4xf32>
  return
}

// -----

// Tests that a wait's handle comes from a start op.
func.func @wait_argument(%h: !kdist.pending) {
  // expected-error @+1 {{'kdist.wait' op expects a handle from a kdist start op}}
  %0 = kdist.wait %h : tensor<4xf32>
  return
}

// -----

// Tests that a sparse tensor has one row per id.
func.func @sparse_rows(%ids: tensor<8xi64>, %rows: tensor<6x4xf32>) {
  // expected-error @+1 {{'kdist.sparse_all_reduce' op expects rows [8, ...] for ids 'tensor<8xi64>', got 'tensor<6x4xf32>'}}
  %0:2 = kdist.sparse_all_reduce mean %ids, %rows : tensor<8xi64>, tensor<6x4xf32> -> tensor<?xi64>, tensor<?x4xf32>
  return
}

// -----

// Tests that a sparse tensor's maximum is refused.
func.func @sparse_max(%ids: tensor<8xi64>, %rows: tensor<8x4xf32>) {
  // expected-error @+1 {{'kdist.sparse_all_reduce_start' op expects sum or mean: a sparse tensor's maximum is not its rows'}}
  %h = kdist.sparse_all_reduce_start max %ids, %rows tag = 0 : tensor<8xi64>, tensor<8x4xf32>
  %0:2 = kdist.wait %h : tensor<?xi64>, tensor<?x4xf32>
  return
}

// -----

// Tests that the gathered results have an unknown leading size.
func.func @sparse_static_result(%ids: tensor<8xi64>, %rows: tensor<8x4xf32>) {
  // expected-error @+1 {{'kdist.sparse_all_reduce' op expects results 'tensor<?xi64>' and 'tensor<?x4xf32>', got 'tensor<16xi64>' and 'tensor<16x4xf32>'}}
  %0:2 = kdist.sparse_all_reduce mean %ids, %rows : tensor<8xi64>, tensor<8x4xf32> -> tensor<16xi64>, tensor<16x4xf32>
  return
}

// -----

// Tests that a pull names a variable.
module {
  func.func @pull_unknown() {
    // expected-error @+1 {{'kdist.ps_pull' op expects @nothing to name a kiln.variable}}
    %w = kdist.ps_pull @nothing : tensor<4xf32>
    return
  }
}

// -----

// Tests that a pull gives the variable's type.
module {
  kiln.variable @w : tensor<4x3xf32> init <zeros>
  func.func @pull_type() {
    // expected-error @+1 {{'kdist.ps_pull' op expects the type of @w, 'tensor<4x3xf32>', got 'tensor<3x4xf32>'}}
    %w = kdist.ps_pull @w : tensor<3x4xf32>
    return
  }
}

// -----

// Tests that pulled rows have the ids' shape, then the table's rows.
module {
  kiln.variable @emb : tensor<100x5xf32> init <zeros>
  func.func @rows_shape(%ids: tensor<4xi64>) {
    // expected-error @+1 {{'kdist.ps_pull_rows' op expects a result of type 'tensor<4x5xf32>' (the ids' shape, then @emb's rows), got 'tensor<4x6xf32>'}}
    %e = kdist.ps_pull_rows @emb[%ids] : (tensor<4xi64>) -> tensor<4x6xf32>
    return
  }
}

// -----

// Tests that rows come from a table, not a scalar.
module {
  kiln.variable @s : tensor<f32> init <zeros>
  func.func @scalar_rows(%ids: tensor<4xi64>) {
    // expected-error @+1 {{'kdist.ps_pull_rows' op expects a table of rank >= 1, @s is 'tensor<f32>'}}
    %e = kdist.ps_pull_rows @s[%ids] : (tensor<4xi64>) -> tensor<4xf32>
    return
  }
}

// -----

// Tests that a dense gradient has the variable's type.
module {
  kiln.variable @w : tensor<4x3xf32> init <zeros>
  func.func @push_type(%g: tensor<4x4xf32>) {
    // expected-error @+1 {{'kdist.ps_push' op expects a gradient of @w's type 'tensor<4x3xf32>', got 'tensor<4x4xf32>'}}
    kdist.ps_push @w, %g : tensor<4x4xf32>
    return
  }
}

// -----

// Tests that pushed rows match their ids and the table's rows.
module {
  kiln.variable @emb : tensor<100x5xf32> init <zeros>
  func.func @push_rows_shape(%ids: tensor<8xi64>, %rows: tensor<7x5xf32>) {
    // expected-error @+1 {{'kdist.ps_push_rows' op expects rows of type 'tensor<8x5xf32>' (the ids' shape, then @emb's rows), got 'tensor<7x5xf32>'}}
    kdist.ps_push_rows @emb, %ids, %rows : tensor<8xi64>, tensor<7x5xf32>
    return
  }
}

// -----

// Tests that pushed ids are one list, whatever shape the pulled ids had.
module {
  kiln.variable @emb : tensor<100x5xf32> init <zeros>
  func.func @push_rows_ids(%ids: tensor<2x4xi64>, %rows: tensor<8x5xf32>) {
    // expected-error @+1 {{'kdist.ps_push_rows' op operand #0 must be 1D tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2x4xi64>'}}
    kdist.ps_push_rows @emb, %ids, %rows : tensor<2x4xi64>, tensor<8x5xf32>
    return
  }
}

// -----

// Tests that rows have the table's element type.
module {
  kiln.variable @emb : tensor<100x5xf32> init <zeros>
  func.func @push_rows_type(%ids: tensor<8xi32>, %rows: tensor<8x5xbf16>) {
    // expected-error @+1 {{'kdist.ps_push_rows' op expects rows of type 'tensor<8x5xf32>' (the ids' shape, then @emb's rows), got 'tensor<8x5xbf16>'}}
    kdist.ps_push_rows @emb, %ids, %rows : tensor<8xi32>, tensor<8x5xbf16>
    return
  }
}
