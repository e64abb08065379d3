// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that reshape keeps the element type.
func.func @reshape_element_type(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{'kiln.reshape' op expects result element type 'f32', got 'f16'}}
  %0 = kiln.reshape %x : tensor<4x2xf32> -> tensor<8xf16>
  return
}

// -----

// Tests that reshape keeps the element count.
func.func @reshape_element_count(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{'kiln.reshape' op expects the same element count, got 8 ([4, 2]) and 6 ([2, 3])}}
  %0 = kiln.reshape %x : tensor<4x2xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that a scalar holds one element.
func.func @reshape_to_scalar(%x: tensor<2xi64>) {
  // expected-error @+1 {{'kiln.reshape' op expects the same element count, got 2 ([2]) and 1 ([])}}
  %0 = kiln.reshape %x : tensor<2xi64> -> tensor<i64>
  return
}

// -----

// Tests that reshape takes only ranked tensors.
func.func @reshape_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{'kiln.reshape' op operand #0 must be ranked tensor of}}
  %0 = "kiln.reshape"(%x) : (tensor<*xf32>) -> tensor<8xf32>
  return
}

// -----

// Tests that broadcast keeps the element type.
func.func @broadcast_element_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.broadcast' op expects result element type 'f32', got 'bf16'}}
  %0 = kiln.broadcast %x : tensor<4xf32> -> tensor<2x4xbf16>
  return
}

// -----

// Tests that only size-1 dimensions stretch.
func.func @broadcast_stretch(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'kiln.broadcast' op cannot broadcast [3, 4] to [6, 4]}}
  %0 = kiln.broadcast %x : tensor<3x4xf32> -> tensor<6x4xf32>
  return
}

// -----

// Tests that dimensions align from the right.
func.func @broadcast_alignment(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.broadcast' op cannot broadcast [4] to [4, 2]}}
  %0 = kiln.broadcast %x : tensor<4xf32> -> tensor<4x2xf32>
  return
}

// -----

// Tests that broadcast never drops dimensions.
func.func @broadcast_lower_rank(%x: tensor<1x4xf32>) {
  // expected-error @+1 {{'kiln.broadcast' op cannot broadcast [1, 4] to [4]}}
  %0 = kiln.broadcast %x : tensor<1x4xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that a permutation names every dimension once: a repeat.
func.func @transpose_repeat(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'kiln.transpose' op expects a permutation of [0, 2), got [0, 0]}}
  // expected-error @+1 {{'kiln.transpose' op failed to infer returned types}}
  %0 = kiln.transpose %x [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

// Tests that a permutation names every dimension once: a short one.
func.func @transpose_short(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'kiln.transpose' op expects a permutation of [0, 3), got [1, 0]}}
  // expected-error @+1 {{'kiln.transpose' op failed to infer returned types}}
  %0 = kiln.transpose %x [1, 0] : tensor<2x3x4xf32> -> tensor<3x2xf32>
  return
}

// -----

// Tests that a permutation names every dimension once: out of range.
func.func @transpose_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'kiln.transpose' op expects a permutation of [0, 2), got [2, -1]}}
  // expected-error @+1 {{'kiln.transpose' op failed to infer returned types}}
  %0 = kiln.transpose %x [2, -1] : tensor<2x3xf32> -> tensor<3x2xf32>
  return
}

// -----

// Tests that the transpose result type is checked.
func.func @transpose_wrong_result(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'kiln.transpose' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{'kiln.transpose' op failed to infer returned types}}
  %0 = kiln.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that concat needs an input.
func.func @concat_nothing() {
  // expected-error @+2 {{'kiln.concat' op expects at least one input}}
  // expected-error @+1 {{'kiln.concat' op failed to infer returned types}}
  %0 = kiln.concat axis = 0 : () -> tensor<4xf32>
  return
}

// -----

// Tests that the concat axis is a dimension of the inputs.
func.func @concat_axis(%a: tensor<4x2xf32>) {
  // expected-error @+2 {{'kiln.concat' op expects axis (2) to be in [0, 2)}}
  // expected-error @+1 {{'kiln.concat' op failed to infer returned types}}
  %0 = kiln.concat %a, %a axis = 2 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
  return
}

// -----

// Tests that concat inputs share an element type.
func.func @concat_element_types(%a: tensor<4x2xf32>, %b: tensor<4x2xi32>) {
  // expected-error @+2 {{'kiln.concat' op expects inputs of one element type, got 'f32' and 'i32'}}
  // expected-error @+1 {{'kiln.concat' op failed to infer returned types}}
  %0 = kiln.concat %a, %b axis = 1 : (tensor<4x2xf32>, tensor<4x2xi32>) -> tensor<4x4xf32>
  return
}

// -----

// Tests that concat inputs share a rank.
func.func @concat_ranks(%a: tensor<4x2xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'kiln.concat' op expects inputs of one rank, got 2 and 1}}
  // expected-error @+1 {{'kiln.concat' op failed to infer returned types}}
  %0 = kiln.concat %a, %b axis = 0 : (tensor<4x2xf32>, tensor<4xf32>) -> tensor<8x2xf32>
  return
}

// -----

// Tests that concat inputs agree off the axis.
func.func @concat_off_axis(%a: tensor<4x2xf32>, %b: tensor<3x2xf32>) {
  // expected-error @+2 {{'kiln.concat' op expects inputs to agree outside axis 1, got [4, 2] and [3, 2]}}
  // expected-error @+1 {{'kiln.concat' op failed to infer returned types}}
  %0 = kiln.concat %a, %b axis = 1 : (tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x4xf32>
  return
}

// -----

// Tests that the concat result sums the sizes along the axis.
func.func @concat_wrong_result(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+2 {{'kiln.concat' op inferred type(s) 'tensor<4x5xf32>' are incompatible with return type(s) of operation 'tensor<4x6xf32>'}}
  // expected-error @+1 {{'kiln.concat' op failed to infer returned types}}
  %0 = kiln.concat %a, %b axis = 1 : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x6xf32>
  return
}

// -----

// Tests that start, limit and step have one entry per dimension.
func.func @slice_lengths(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'kiln.slice' op expects start, limit and step of length 2 (the rank), got 2, 1 and 2}}
  // expected-error @+1 {{'kiln.slice' op failed to infer returned types}}
  %0 = kiln.slice %x start [0, 0] limit [4] step [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// Tests that steps are positive.
func.func @slice_step(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'kiln.slice' op expects step >= 1, got 0 in dimension 1}}
  // expected-error @+1 {{'kiln.slice' op failed to infer returned types}}
  %0 = kiln.slice %x start [0, 0] limit [4, 8] step [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// Tests that the limit stays inside the dimension.
func.func @slice_past_end(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'kiln.slice' op expects 0 <= start <= limit <= size in dimension 0, got start 0, limit 5, size 4}}
  // expected-error @+1 {{'kiln.slice' op failed to infer returned types}}
  %0 = kiln.slice %x start [0, 0] limit [5, 8] step [1, 1] : tensor<4x8xf32> -> tensor<5x8xf32>
  return
}

// -----

// Tests that start does not pass limit.
func.func @slice_backwards(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'kiln.slice' op expects 0 <= start <= limit <= size in dimension 1, got start 6, limit 2, size 8}}
  // expected-error @+1 {{'kiln.slice' op failed to infer returned types}}
  %0 = kiln.slice %x start [0, 6] limit [4, 2] step [1, 1] : tensor<4x8xf32> -> tensor<4x0xf32>
  return
}

// -----

// Tests that start is not negative, also in a `?` dimension.
func.func @slice_negative_start(%x: tensor<?x8xf32>) {
  // expected-error @+2 {{'kiln.slice' op expects 0 <= start <= limit <= size in dimension 0, got start -1, limit 2, size ?}}
  // expected-error @+1 {{'kiln.slice' op failed to infer returned types}}
  %0 = kiln.slice %x start [-1, 0] limit [2, 8] step [1, 1] : tensor<?x8xf32> -> tensor<3x8xf32>
  return
}

// -----

// Tests that a strided slice rounds its size up.
func.func @slice_wrong_result(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'kiln.slice' op inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x2xf32>'}}
  // expected-error @+1 {{'kiln.slice' op failed to infer returned types}}
  %0 = kiln.slice %x start [0, 1] limit [4, 8] step [1, 3] : tensor<4x8xf32> -> tensor<4x2xf32>
  return
}
