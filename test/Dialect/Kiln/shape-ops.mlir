// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that reshape round-trips, including to and from rank 0 and with a `?`.
// CHECK-LABEL: func @reshape
// CHECK-SAME: (%[[X:[^:]+]]: tensor<32x28x28xf32>, %[[S:[^:]+]]: tensor<1x1xi64>)
func.func @reshape(%x: tensor<32x28x28xf32>, %s: tensor<1x1xi64>) {
  // CHECK-NEXT: kiln.reshape %[[X]] : tensor<32x28x28xf32> -> tensor<32x784xf32>
  // CHECK-NEXT: kiln.reshape %[[X]] : tensor<32x28x28xf32> -> tensor<?x784xf32>
  // CHECK-NEXT: kiln.reshape %[[S]] : tensor<1x1xi64> -> tensor<i64>
  %0 = kiln.reshape %x : tensor<32x28x28xf32> -> tensor<32x784xf32>
  %1 = kiln.reshape %x : tensor<32x28x28xf32> -> tensor<?x784xf32>
  %2 = kiln.reshape %s : tensor<1x1xi64> -> tensor<i64>
  return
}

// -----

// Tests that broadcast adds leading dimensions and stretches size-1 ones.
// CHECK-LABEL: func @broadcast
// CHECK-SAME: (%[[B:[^:]+]]: tensor<128xf32>, %[[C:[^:]+]]: tensor<4x1xi1>, %[[S:[^:]+]]: tensor<f32>)
func.func @broadcast(%b: tensor<128xf32>, %c: tensor<4x1xi1>, %s: tensor<f32>) {
  // CHECK-NEXT: kiln.broadcast %[[B]] : tensor<128xf32> -> tensor<32x128xf32>
  // CHECK-NEXT: kiln.broadcast %[[C]] : tensor<4x1xi1> -> tensor<2x4x6xi1>
  // CHECK-NEXT: kiln.broadcast %[[S]] : tensor<f32> -> tensor<3x3xf32>
  // CHECK-NEXT: kiln.broadcast %[[B]] : tensor<128xf32> -> tensor<?x128xf32>
  %0 = kiln.broadcast %b : tensor<128xf32> -> tensor<32x128xf32>
  %1 = kiln.broadcast %c : tensor<4x1xi1> -> tensor<2x4x6xi1>
  %2 = kiln.broadcast %s : tensor<f32> -> tensor<3x3xf32>
  %3 = kiln.broadcast %b : tensor<128xf32> -> tensor<?x128xf32>
  return
}

// -----

// Tests that transpose prints its permutation.
// CHECK-LABEL: func @transpose
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xi32>)
func.func @transpose(%x: tensor<2x3x4xi32>) {
  // CHECK-NEXT: kiln.transpose %[[X]] [2, 0, 1] : tensor<2x3x4xi32> -> tensor<4x2x3xi32>
  // CHECK-NEXT: kiln.transpose %[[X]] [0, 1, 2] : tensor<2x3x4xi32> -> tensor<2x3x4xi32>
  %0 = kiln.transpose %x [2, 0, 1] : tensor<2x3x4xi32> -> tensor<4x2x3xi32>
  %1 = kiln.transpose %x [0, 1, 2] : tensor<2x3x4xi32> -> tensor<2x3x4xi32>
  return
}

// -----

// Tests that concat round-trips with one, two and three inputs.
// CHECK-LABEL: func @concat
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4x2xf16>, %[[B:[^:]+]]: tensor<4x3xf16>)
func.func @concat(%a: tensor<4x2xf16>, %b: tensor<4x3xf16>) {
  // CHECK-NEXT: kiln.concat %[[A]] axis = 1 : (tensor<4x2xf16>) -> tensor<4x2xf16>
  // CHECK-NEXT: kiln.concat %[[A]], %[[B]] axis = 1 : (tensor<4x2xf16>, tensor<4x3xf16>) -> tensor<4x5xf16>
  // CHECK-NEXT: kiln.concat %[[A]], %[[A]], %[[A]] axis = 0 : (tensor<4x2xf16>, tensor<4x2xf16>, tensor<4x2xf16>) -> tensor<12x2xf16>
  %0 = kiln.concat %a axis = 1 : (tensor<4x2xf16>) -> tensor<4x2xf16>
  %1 = kiln.concat %a, %b axis = 1 : (tensor<4x2xf16>, tensor<4x3xf16>) -> tensor<4x5xf16>
  %2 = kiln.concat %a, %a, %a axis = 0 : (tensor<4x2xf16>, tensor<4x2xf16>, tensor<4x2xf16>) -> tensor<12x2xf16>
  return
}

// -----

// Tests that a `?` along the axis gives a `?` result size.
// CHECK-LABEL: func @concat_dynamic
func.func @concat_dynamic(%a: tensor<?x2xf32>, %b: tensor<3x2xf32>) {
  // CHECK: kiln.concat %{{.+}}, %{{.+}} axis = 0 : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %0 = kiln.concat %a, %b axis = 0 : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  return
}

// -----

// Tests that slice prints start, limit and step, including strided and
// empty slices.
// CHECK-LABEL: func @slice
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>)
func.func @slice(%x: tensor<4x8xf32>) {
  // CHECK-NEXT: kiln.slice %[[X]] start [0, 2] limit [4, 8] step [1, 2] : tensor<4x8xf32> -> tensor<4x3xf32>
  // CHECK-NEXT: kiln.slice %[[X]] start [1, 0] limit [2, 8] step [1, 3] : tensor<4x8xf32> -> tensor<1x3xf32>
  // CHECK-NEXT: kiln.slice %[[X]] start [2, 0] limit [2, 8] step [1, 1] : tensor<4x8xf32> -> tensor<0x8xf32>
  %0 = kiln.slice %x start [0, 2] limit [4, 8] step [1, 2] : tensor<4x8xf32> -> tensor<4x3xf32>
  %1 = kiln.slice %x start [1, 0] limit [2, 8] step [1, 3] : tensor<4x8xf32> -> tensor<1x3xf32>
  %2 = kiln.slice %x start [2, 0] limit [2, 8] step [1, 1] : tensor<4x8xf32> -> tensor<0x8xf32>
  return
}

// -----

// Tests that slicing a `?` dimension gives a static size.
// CHECK-LABEL: func @slice_dynamic
func.func @slice_dynamic(%x: tensor<?x8xf32>) {
  // CHECK: kiln.slice %{{.+}} start [0, 0] limit [5, 8] step [2, 1] : tensor<?x8xf32> -> tensor<3x8xf32>
  %0 = kiln.slice %x start [0, 0] limit [5, 8] step [2, 1] : tensor<?x8xf32> -> tensor<3x8xf32>
  return
}
