// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that the blocking collectives round-trip: all_reduce and broadcast
// keep their operands' types, all_gather and reduce_scatter scale one
// dimension by the group size.
// CHECK-LABEL: func @blocking
// CHECK-SAME: (%[[G:[^:]+]]: tensor<4x2xf32>, %[[B:[^:]+]]: tensor<2xf32>, %[[IDS:[^:]+]]: tensor<8xi64>)
func.func @blocking(%g: tensor<4x2xf32>, %b: tensor<2xf32>, %ids: tensor<8xi64>) {
  // CHECK-NEXT: %{{.+}}:2 = kdist.all_reduce mean %[[G]], %[[B]] : tensor<4x2xf32>, tensor<2xf32>
  // CHECK-NEXT: kdist.all_reduce sum %[[IDS]] {tag = 3 : i64} : tensor<8xi64>
  // CHECK-NEXT: kdist.all_reduce max %[[B]] : tensor<2xf32>
  // CHECK-NEXT: kdist.broadcast %[[G]] root = 0 : tensor<4x2xf32>
  // CHECK-NEXT: kdist.all_gather %[[IDS]] axis = 0 group_size = 2 : tensor<8xi64> -> tensor<16xi64>
  // CHECK-NEXT: kdist.reduce_scatter sum %[[G]] axis = 0 group_size = 2 : tensor<4x2xf32> -> tensor<2x2xf32>
  // CHECK-NEXT: kdist.barrier
  %0:2 = kdist.all_reduce mean %g, %b : tensor<4x2xf32>, tensor<2xf32>
  %1 = kdist.all_reduce sum %ids {tag = 3 : i64} : tensor<8xi64>
  %2 = kdist.all_reduce max %b : tensor<2xf32>
  %3 = kdist.broadcast %g root = 0 : tensor<4x2xf32>
  %4 = kdist.all_gather %ids axis = 0 group_size = 2 : tensor<8xi64> -> tensor<16xi64>
  %5 = kdist.reduce_scatter sum %g axis = 0 group_size = 2 : tensor<4x2xf32> -> tensor<2x2xf32>
  kdist.barrier
  return
}

// -----

// Tests that each start op hands a !kdist.pending to its wait, which gives
// the blocking form's results.
// CHECK-LABEL: func @start_wait
func.func @start_wait(%g: tensor<4x2xf32>, %b: tensor<2xf32>, %ids: tensor<8xi64>) {
  // CHECK: %[[H0:.+]] = kdist.all_reduce_start mean %{{.+}}, %{{.+}} tag = 0 : tensor<4x2xf32>, tensor<2xf32>
  // CHECK: %[[H1:.+]] = kdist.broadcast_start %{{.+}} root = 1 tag = 1 : tensor<2xf32>
  // CHECK: %[[H2:.+]] = kdist.all_gather_start %{{.+}} axis = 0 group_size = 4 tag = 2 : tensor<8xi64>
  // CHECK: %[[H3:.+]] = kdist.reduce_scatter_start sum %{{.+}} axis = 1 group_size = 2 tag = 3 : tensor<4x2xf32>
  // CHECK: kdist.wait %[[H0]] : tensor<4x2xf32>, tensor<2xf32>
  // CHECK: kdist.wait %[[H1]] : tensor<2xf32>
  // CHECK: kdist.wait %[[H2]] : tensor<32xi64>
  // CHECK: kdist.wait %[[H3]] : tensor<4x1xf32>
  %h0 = kdist.all_reduce_start mean %g, %b tag = 0 : tensor<4x2xf32>, tensor<2xf32>
  %h1 = kdist.broadcast_start %b root = 1 tag = 1 : tensor<2xf32>
  %h2 = kdist.all_gather_start %ids axis = 0 group_size = 4 tag = 2 : tensor<8xi64>
  %h3 = kdist.reduce_scatter_start sum %g axis = 1 group_size = 2 tag = 3 : tensor<4x2xf32>
  %0:2 = kdist.wait %h0 : tensor<4x2xf32>, tensor<2xf32>
  %1 = kdist.wait %h1 : tensor<2xf32>
  %2 = kdist.wait %h2 : tensor<32xi64>
  %3 = kdist.wait %h3 : tensor<4x1xf32>
  return
}

// -----

// Tests that a sparse all-reduce gathers ids and rows into tensors whose
// leading size is known at run time only, blocking or started.
// CHECK-LABEL: func @sparse
func.func @sparse(%ids: tensor<8xi64>, %rows: tensor<8x4xf32>) {
  // CHECK: kdist.sparse_all_reduce mean %{{.+}}, %{{.+}} : tensor<8xi64>, tensor<8x4xf32> -> tensor<?xi64>, tensor<?x4xf32>
  // CHECK: %[[H:.+]] = kdist.sparse_all_reduce_start sum %{{.+}}, %{{.+}} tag = 5 : tensor<8xi64>, tensor<8x4xf32>
  // CHECK: kdist.wait %[[H]] : tensor<?xi64>, tensor<?x4xf32>
  %0:2 = kdist.sparse_all_reduce mean %ids, %rows : tensor<8xi64>, tensor<8x4xf32> -> tensor<?xi64>, tensor<?x4xf32>
  %h = kdist.sparse_all_reduce_start sum %ids, %rows tag = 5 : tensor<8xi64>, tensor<8x4xf32>
  %1:2 = kdist.wait %h : tensor<?xi64>, tensor<?x4xf32>
  return
}

// -----

// Tests that the parameter-server ops round-trip: a whole pull, rows at ids
// of any shape, and the two pushes.
// CHECK-LABEL: func @parameter_servers
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<4x2xi64>, %[[FLAT:[^:]+]]: tensor<8xi32>, %[[G:[^:]+]]: tensor<4x3xf32>, %[[ROWS:[^:]+]]: tensor<8x5xf32>)
// CHECK-NEXT: kdist.ps_pull @w : tensor<4x3xf32>
// CHECK-NEXT: kdist.ps_pull_rows @emb[%[[IDS]]] : (tensor<4x2xi64>) -> tensor<4x2x5xf32>
// CHECK-NEXT: kdist.ps_push @w, %[[G]] : tensor<4x3xf32>
// CHECK-NEXT: kdist.ps_push_rows @emb, %[[FLAT]], %[[ROWS]] : tensor<8xi32>, tensor<8x5xf32>
module {
  kiln.variable @w : tensor<4x3xf32> init <zeros>
  kiln.variable @emb : tensor<100x5xf32> init <zeros>
  func.func @parameter_servers(%ids: tensor<4x2xi64>, %flat: tensor<8xi32>, %g: tensor<4x3xf32>, %rows: tensor<8x5xf32>) {
    %w = kdist.ps_pull @w : tensor<4x3xf32>
    %e = kdist.ps_pull_rows @emb[%ids] : (tensor<4x2xi64>) -> tensor<4x2x5xf32>
    kdist.ps_push @w, %g : tensor<4x3xf32>
    kdist.ps_push_rows @emb, %flat, %rows : tensor<8xi32>, tensor<8x5xf32>
    return
  }
}
