// RUN: kiln-opt %s -split-input-file --canonicalize | FileCheck --enable-var-scope %s

// Tests that a reshape to the operand's own type is gone.
// CHECK-LABEL: func @reshape_identity
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>)
func.func @reshape_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: return %[[X]]
  %0 = kiln.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that a chain of reshapes is one reshape, and none when it comes back
// to the start.
// CHECK-LABEL: func @reshape_chain
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>)
func.func @reshape_chain(%x: tensor<4x8xf32>) -> (tensor<2x16xf32>, tensor<4x8xf32>) {
  // CHECK-NEXT: %[[R:.+]] = kiln.reshape %[[X]] : tensor<4x8xf32> -> tensor<2x16xf32>
  // CHECK-NEXT: return %[[R]], %[[X]]
  %0 = kiln.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %1 = kiln.reshape %0 : tensor<32xf32> -> tensor<2x16xf32>
  %2 = kiln.reshape %1 : tensor<2x16xf32> -> tensor<4x8xf32>
  return %1, %2 : tensor<2x16xf32>, tensor<4x8xf32>
}

// -----

// Tests that a reshaped constant is a constant of the new shape.
// CHECK-LABEL: func @reshape_constant
func.func @reshape_constant() -> tensor<2x2xi32> {
  // CHECK-NEXT: %[[C:.+]] = kiln.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi32>
  // CHECK-NEXT: return %[[C]]
  %c = kiln.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %0 = kiln.reshape %c : tensor<4xi32> -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// -----

// Tests that a constant reshaped to a `?` shape stays a reshape.
// CHECK-LABEL: func @reshape_constant_dynamic
func.func @reshape_constant_dynamic() -> tensor<?xi32> {
  // CHECK: %[[R:.+]] = kiln.reshape %{{.+}} : tensor<2x2xi32> -> tensor<?xi32>
  // CHECK-NEXT: return %[[R]]
  %c = kiln.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %0 = kiln.reshape %c : tensor<2x2xi32> -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

// Tests that a broadcast to the operand's own type is gone, and a chain of
// broadcasts is one.
// CHECK-LABEL: func @broadcast_identity_and_chain
// CHECK-SAME: (%[[B:[^:]+]]: tensor<8xf32>)
func.func @broadcast_identity_and_chain(%b: tensor<8xf32>) -> (tensor<8xf32>, tensor<2x4x8xf32>) {
  // CHECK-NEXT: %[[R:.+]] = kiln.broadcast %[[B]] : tensor<8xf32> -> tensor<2x4x8xf32>
  // CHECK-NEXT: return %[[B]], %[[R]]
  %0 = kiln.broadcast %b : tensor<8xf32> -> tensor<8xf32>
  %1 = kiln.broadcast %b : tensor<8xf32> -> tensor<4x8xf32>
  %2 = kiln.broadcast %1 : tensor<4x8xf32> -> tensor<2x4x8xf32>
  return %0, %2 : tensor<8xf32>, tensor<2x4x8xf32>
}

// -----

// Tests that a broadcast splat is a bigger splat and a small broadcast
// constant (shape arithmetic, masks) a constant; one of more than 65536
// elements stays a broadcast (no need to store the copies).
// CHECK-LABEL: func @broadcast_constant
func.func @broadcast_constant() -> (tensor<3x4xf16>, tensor<3x2xi64>, tensor<40000x2xi64>) {
  // CHECK-DAG: %[[S:.+]] = kiln.constant dense<1.500000e+00> : tensor<3x4xf16>
  // CHECK-DAG: %[[D:.+]] = kiln.constant dense<{{\[}}[1, 2], [1, 2], [1, 2]]> : tensor<3x2xi64>
  // CHECK-DAG: %[[E:.+]] = kiln.constant dense<[1, 2]> : tensor<2xi64>
  // CHECK: %[[B:.+]] = kiln.broadcast %[[E]] : tensor<2xi64> -> tensor<40000x2xi64>
  // CHECK-NEXT: return %[[S]], %[[D]], %[[B]]
  %s = kiln.constant dense<1.5> : tensor<4xf16>
  %0 = kiln.broadcast %s : tensor<4xf16> -> tensor<3x4xf16>
  %d = kiln.constant dense<[1, 2]> : tensor<2xi64>
  %1 = kiln.broadcast %d : tensor<2xi64> -> tensor<3x2xi64>
  %2 = kiln.broadcast %d : tensor<2xi64> -> tensor<40000x2xi64>
  return %0, %1, %2 : tensor<3x4xf16>, tensor<3x2xi64>, tensor<40000x2xi64>
}

// -----

// Tests that an identity permutation is gone.
// CHECK-LABEL: func @transpose_identity
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32>)
func.func @transpose_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT: return %[[X]]
  %0 = kiln.transpose %x [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Tests that an identity permutation with a more static result is kept: it
// carries shape information.
// CHECK-LABEL: func @transpose_identity_refining
func.func @transpose_identity_refining(%x: tensor<?x4xf32>) -> tensor<3x4xf32> {
  // CHECK: kiln.transpose %{{.+}} [0, 1] : tensor<?x4xf32> -> tensor<3x4xf32>
  %0 = kiln.transpose %x [0, 1] : tensor<?x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Tests that two transposes compose into one permutation.
// CHECK-LABEL: func @transpose_composition
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32>)
func.func @transpose_composition(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // CHECK-NEXT: %[[T:.+]] = kiln.transpose %[[X]] [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  // CHECK-NEXT: return %[[T]]
  %0 = kiln.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = kiln.transpose %0 [0, 2, 1] : tensor<3x4x2xf32> -> tensor<3x2x4xf32>
  return %1 : tensor<3x2x4xf32>
}

// -----

// Tests that a transpose and its inverse are nothing.
// CHECK-LABEL: func @transpose_inverse
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xi32>)
func.func @transpose_inverse(%x: tensor<2x3x4xi32>) -> tensor<2x3x4xi32> {
  // CHECK-NEXT: return %[[X]]
  %0 = kiln.transpose %x [2, 0, 1] : tensor<2x3x4xi32> -> tensor<4x2x3xi32>
  %1 = kiln.transpose %0 [1, 2, 0] : tensor<4x2x3xi32> -> tensor<2x3x4xi32>
  return %1 : tensor<2x3x4xi32>
}

// -----

// Tests that a transposed constant is a constant.
// CHECK-LABEL: func @transpose_constant
func.func @transpose_constant() -> (tensor<3x2xbf16>, tensor<2x1xi32>) {
  // CHECK-DAG: %[[S:.+]] = kiln.constant dense<2.000000e+00> : tensor<3x2xbf16>
  // CHECK-DAG: %[[T:.+]] = kiln.constant dense<{{\[}}[1], [2]]> : tensor<2x1xi32>
  // CHECK-NEXT: return %[[S]], %[[T]]
  %s = kiln.constant dense<2.0> : tensor<2x3xbf16>
  %0 = kiln.transpose %s [1, 0] : tensor<2x3xbf16> -> tensor<3x2xbf16>
  %d = kiln.constant dense<[[1, 2]]> : tensor<1x2xi32>
  %1 = kiln.transpose %d [1, 0] : tensor<1x2xi32> -> tensor<2x1xi32>
  return %0, %1 : tensor<3x2xbf16>, tensor<2x1xi32>
}

// -----

// Tests that a concat of one input is that input, and that longer concats
// stay.
// CHECK-LABEL: func @concat_single
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4x2xf32>)
func.func @concat_single(%a: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<8x2xf32>) {
  // CHECK-NEXT: %[[C:.+]] = kiln.concat %[[A]], %[[A]] axis = 0 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  // CHECK-NEXT: return %[[A]], %[[C]]
  %0 = kiln.concat %a axis = 1 : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = kiln.concat %a, %a axis = 0 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<8x2xf32>
}

// -----

// Tests that a slice of the full range is the operand; a partial, strided or
// `?`-sized one stays.
// CHECK-LABEL: func @slice_full
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>, %[[D:[^:]+]]: tensor<?x8xf32>)
func.func @slice_full(%x: tensor<4x8xf32>, %d: tensor<?x8xf32>) -> (tensor<4x8xf32>, tensor<4x7xf32>, tensor<2x8xf32>, tensor<4x8xf32>) {
  // CHECK-NEXT: %[[P:.+]] = kiln.slice %[[X]] start [0, 1] limit [4, 8] step [1, 1]
  // CHECK-NEXT: %[[S:.+]] = kiln.slice %[[X]] start [0, 0] limit [4, 8] step [2, 1]
  // CHECK-NEXT: %[[Q:.+]] = kiln.slice %[[D]] start [0, 0] limit [4, 8] step [1, 1]
  // CHECK-NEXT: return %[[X]], %[[P]], %[[S]], %[[Q]]
  %0 = kiln.slice %x start [0, 0] limit [4, 8] step [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = kiln.slice %x start [0, 1] limit [4, 8] step [1, 1] : tensor<4x8xf32> -> tensor<4x7xf32>
  %2 = kiln.slice %x start [0, 0] limit [4, 8] step [2, 1] : tensor<4x8xf32> -> tensor<2x8xf32>
  %3 = kiln.slice %d start [0, 0] limit [4, 8] step [1, 1] : tensor<?x8xf32> -> tensor<4x8xf32>
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x7xf32>, tensor<2x8xf32>, tensor<4x8xf32>
}

// -----

// Tests that a slice of a splat is a smaller splat.
// CHECK-LABEL: func @slice_constant
func.func @slice_constant() -> tensor<2x3xi64> {
  // CHECK-NEXT: %[[C:.+]] = kiln.constant dense<9> : tensor<2x3xi64>
  // CHECK-NEXT: return %[[C]]
  %c = kiln.constant dense<9> : tensor<4x8xi64>
  %0 = kiln.slice %c start [1, 2] limit [3, 8] step [1, 2] : tensor<4x8xi64> -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}
