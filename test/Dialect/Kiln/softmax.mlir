// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that softmax and log_softmax round-trip with their axis.
// CHECK-LABEL: func @softmax
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x10xf32>)
func.func @softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // CHECK-NEXT: %[[P:.+]] = kiln.softmax %[[X]] axis = 1 : tensor<4x10xf32>
  // CHECK-NEXT: %[[L:.+]] = kiln.log_softmax %[[P]] axis = 0 : tensor<4x10xf32>
  // CHECK-NEXT: return %[[L]]
  %p = kiln.softmax %x axis = 1 : tensor<4x10xf32>
  %l = kiln.log_softmax %p axis = 0 : tensor<4x10xf32>
  return %l : tensor<4x10xf32>
}

// -----

// Tests that softmax takes half-precision and dynamic tensors.
// CHECK-LABEL: func @softmax_types
func.func @softmax_types(%h: tensor<2x?x8xf16>, %b: tensor<?xbf16>) {
  // CHECK: kiln.softmax %{{.+}} axis = 2 : tensor<2x?x8xf16>
  // CHECK-NEXT: kiln.log_softmax %{{.+}} axis = 0 : tensor<?xbf16>
  %0 = kiln.softmax %h axis = 2 : tensor<2x?x8xf16>
  %1 = kiln.log_softmax %b axis = 0 : tensor<?xbf16>
  return
}
