// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that layer_norm round-trips with a scale and a bias.
// CHECK-LABEL: func @with_bias
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>, %[[G:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xf32>)
func.func @with_bias(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %[[Y:.+]] = kiln.layer_norm %[[X]], %[[G]], %[[B]] axis = 1 epsilon = 1.000000e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: return %[[Y]]
  %y = kiln.layer_norm %x, %g, %b axis = 1 epsilon = 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Tests that the bias is optional, and that normalizing from an inner axis
// takes a scale of the trailing shape.
// CHECK-LABEL: func @without_bias
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xbf16>, %[[G:[^:]+]]: tensor<3x4xbf16>)
func.func @without_bias(%x: tensor<2x3x4xbf16>, %g: tensor<3x4xbf16>) {
  // CHECK-NEXT: kiln.layer_norm %[[X]], %[[G]] axis = 1 epsilon = 0.000000e+00 : (tensor<2x3x4xbf16>, tensor<3x4xbf16>) -> tensor<2x3x4xbf16>
  %y = kiln.layer_norm %x, %g axis = 1 epsilon = 0.0 : (tensor<2x3x4xbf16>, tensor<3x4xbf16>) -> tensor<2x3x4xbf16>
  return
}

// -----

// Tests that `?` dimensions in the input and scale are compatible.
// CHECK-LABEL: func @dynamic
func.func @dynamic(%x: tensor<?x?xf16>, %g: tensor<16xf16>) {
  // CHECK: kiln.layer_norm %{{.+}}, %{{.+}} axis = 1 epsilon = 1.000000e-03 : (tensor<?x?xf16>, tensor<16xf16>) -> tensor<?x?xf16>
  %y = kiln.layer_norm %x, %g axis = 1 epsilon = 1.0e-03 : (tensor<?x?xf16>, tensor<16xf16>) -> tensor<?x?xf16>
  return
}
