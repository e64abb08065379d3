// RUN: kiln-opt %s -split-input-file | kiln-opt | FileCheck --enable-var-scope %s

// Tests that a fusion with a broadcast input and two results prints and
// parses back.
// CHECK-LABEL: func @fusion
func.func @fusion(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xi1>) {
  // CHECK: %[[F:.+]]:2 = kiln.fusion(%{{.+}}, %{{.+}}) : (tensor<8x16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xi1>) {
  // CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<8x16xf32>, %[[C:.+]]: tensor<16xf32>):
  // CHECK-NEXT: kiln.broadcast %[[C]]
  // CHECK: kiln.yield %{{.+}}, %{{.+}} : tensor<8x16xf32>, tensor<8x16xi1>
  %r:2 = kiln.fusion(%x, %b) : (tensor<8x16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xi1>) {
  ^bb0(%a: tensor<8x16xf32>, %c: tensor<16xf32>):
    %0 = kiln.broadcast %c : tensor<16xf32> -> tensor<8x16xf32>
    %1 = kiln.add %a, %0 : tensor<8x16xf32>
    %2 = kiln.compare gt, %1, %a : tensor<8x16xf32>
    kiln.yield %1, %2 : tensor<8x16xf32>, tensor<8x16xi1>
  }
  return %r#0, %r#1 : tensor<8x16xf32>, tensor<8x16xi1>
}
