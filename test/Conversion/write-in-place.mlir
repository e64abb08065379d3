// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-write-in-place))' | FileCheck --enable-var-scope %s

// Tests that an elementwise generic whose result goes back into the memref
// it reads writes over that input: outs is the input tensor, not an empty one.
// CHECK-LABEL: func @update
// CHECK: %[[P:.+]] = bufferization.to_tensor %arg0 restrict writable
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[P]] : tensor<16xf32>)
#id = affine_map<(d0) -> (d0)>
func.func @update(%arg0: memref<16xf32>, %arg1: memref<16xf32>, %arg2: memref<16xf32>) {
  %p = bufferization.to_tensor %arg0 restrict writable : memref<16xf32>
  %g = bufferization.to_tensor %arg1 restrict : memref<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%p, %g : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  bufferization.materialize_in_destination %r in writable %arg0 : (tensor<16xf32>, memref<16xf32>) -> ()
  return
}

// -----

// Tests that an input read at another index (a transpose) is not written
// over: its elements would be overwritten before they are read.
// CHECK-LABEL: func @transposed
// CHECK: %[[E:.+]] = tensor.empty
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[E]] : tensor<4x4xf32>)
#t = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @transposed(%arg0: memref<4x4xf32>, %arg1: memref<4x4xf32>) {
  %p = bufferization.to_tensor %arg0 restrict writable : memref<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#t, #id2], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  bufferization.materialize_in_destination %r in writable %arg0 : (tensor<4x4xf32>, memref<4x4xf32>) -> ()
  return
}

// -----

// Tests that a reduction is left alone.
// CHECK-LABEL: func @reduction
// CHECK: %[[E:.+]] = tensor.empty
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[E]] : tensor<4xf32>)
#red_in = affine_map<(d0, d1) -> (d0, d1)>
#red_out = affine_map<(d0, d1) -> (d0)>
func.func @reduction(%arg0: memref<4xf32>, %arg1: memref<4x4xf32>) {
  %p = bufferization.to_tensor %arg0 restrict writable : memref<4xf32>
  %m = bufferization.to_tensor %arg1 restrict : memref<4x4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#red_in, #red_out], iterator_types = ["parallel", "reduction"]} ins(%m : tensor<4x4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  bufferization.materialize_in_destination %r in writable %arg0 : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}
