// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that softmax cross-entropy takes i32 and i64 class ids.
// CHECK-LABEL: func @softmax_cross_entropy
// CHECK-SAME: (%[[L:[^:]+]]: tensor<32x10xf32>, %[[Y:[^:]+]]: tensor<32xi32>, %[[Z:[^:]+]]: tensor<?xi64>)
func.func @softmax_cross_entropy(%logits: tensor<32x10xf32>, %labels: tensor<32xi32>,
                                 %labels64: tensor<?xi64>) {
  // CHECK-NEXT: kiln.softmax_cross_entropy %[[L]], %[[Y]] : (tensor<32x10xf32>, tensor<32xi32>) -> tensor<f32>
  // CHECK-NEXT: kiln.softmax_cross_entropy %[[L]], %[[Z]] : (tensor<32x10xf32>, tensor<?xi64>) -> tensor<f32>
  %0 = kiln.softmax_cross_entropy %logits, %labels : (tensor<32x10xf32>, tensor<32xi32>) -> tensor<f32>
  %1 = kiln.softmax_cross_entropy %logits, %labels64 : (tensor<32x10xf32>, tensor<?xi64>) -> tensor<f32>
  return
}

// -----

// Tests that the pointwise losses round-trip, with a result of the inputs'
// float type.
// CHECK-LABEL: func @pointwise
// CHECK-SAME: (%[[A:[^:]+]]: tensor<32x1xf32>, %[[B:[^:]+]]: tensor<32x1xf32>, %[[H:[^:]+]]: tensor<?x3xbf16>)
func.func @pointwise(%a: tensor<32x1xf32>, %b: tensor<32x1xf32>, %h: tensor<?x3xbf16>) {
  // CHECK-NEXT: kiln.sigmoid_cross_entropy %[[A]], %[[B]] : tensor<32x1xf32> -> tensor<f32>
  // CHECK-NEXT: kiln.mean_squared_error %[[A]], %[[B]] : tensor<32x1xf32> -> tensor<f32>
  // CHECK-NEXT: kiln.mean_squared_error %[[H]], %[[H]] : tensor<?x3xbf16> -> tensor<bf16>
  %0 = kiln.sigmoid_cross_entropy %a, %b : tensor<32x1xf32> -> tensor<f32>
  %1 = kiln.mean_squared_error %a, %b : tensor<32x1xf32> -> tensor<f32>
  %2 = kiln.mean_squared_error %h, %h : tensor<?x3xbf16> -> tensor<bf16>
  return
}
