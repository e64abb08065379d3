// RUN: kiln-opt %s -cse -canonicalize | FileCheck --enable-var-scope %s

// Tests the parameter-server ops' effects: two pulls with no push between
// them are one (CSE), a pull after a push is not merged with one before it,
// an unused pull is dropped, and pushes stay though nothing uses them.
// CHECK-LABEL: func @effects
// CHECK-SAME: (%[[G:[^:]+]]: tensor<4x3xf32>, %[[IDS:[^:]+]]: tensor<8xi64>, %[[ROWS:[^:]+]]: tensor<8x5xf32>)
// CHECK-NEXT: %[[A:.+]] = kdist.ps_pull @w : tensor<4x3xf32>
// CHECK-NEXT: kdist.ps_push @w, %[[G]] : tensor<4x3xf32>
// CHECK-NEXT: %[[B:.+]] = kdist.ps_pull @w : tensor<4x3xf32>
// CHECK-NEXT: kdist.ps_push_rows @emb, %[[IDS]], %[[ROWS]] : tensor<8xi64>, tensor<8x5xf32>
// CHECK-NEXT: return %[[A]], %[[A]], %[[B]]
module {
  kiln.variable @w : tensor<4x3xf32> init <zeros>
  kiln.variable @emb : tensor<100x5xf32> init <zeros>
  func.func @effects(%g: tensor<4x3xf32>, %ids: tensor<8xi64>, %rows: tensor<8x5xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
    %a = kdist.ps_pull @w : tensor<4x3xf32>
    %a2 = kdist.ps_pull @w : tensor<4x3xf32>
    %unused = kdist.ps_pull_rows @emb[%ids] : (tensor<8xi64>) -> tensor<8x5xf32>
    kdist.ps_push @w, %g : tensor<4x3xf32>
    %b = kdist.ps_pull @w : tensor<4x3xf32>
    kdist.ps_push_rows @emb, %ids, %rows : tensor<8xi64>, tensor<8x5xf32>
    return %a, %a2, %b : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  }
}
