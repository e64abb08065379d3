// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that the non-random initializers print without a seed.
// CHECK-LABEL: module
// CHECK-NEXT: kiln.variable @zeros : tensor<2x3xf32> init <zeros>{{$}}
// CHECK-NEXT: kiln.variable @ones : tensor<4xbf16> init <ones>{{$}}
// CHECK-NEXT: kiln.variable @table : tensor<2xf32> init <constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>>{{$}}
// CHECK-NEXT: kiln.variable @splat : tensor<2x2xi32> init <constant dense<7> : tensor<2x2xi32>>{{$}}
kiln.variable @zeros : tensor<2x3xf32> init <zeros>
kiln.variable @ones : tensor<4xbf16> init <ones>
kiln.variable @table : tensor<2xf32> init <constant dense<[1.0, 2.0]> : tensor<2xf32>>
kiln.variable @splat : tensor<2x2xi32> init <constant dense<7> : tensor<2x2xi32>>

// -----

// Tests that the random initializers print their parameters and seed.
// CHECK-LABEL: module
// CHECK-NEXT: kiln.variable @u : tensor<8xf32> init <uniform(-5.000000e-02, 5.000000e-02), seed = 3>
// CHECK-NEXT: kiln.variable @n : tensor<8xf16> init <normal(0.000000e+00, 1.000000e-02), seed = 4>
// CHECK-NEXT: kiln.variable @t : tensor<8xbf16> init <truncated_normal(1.000000e+00, 2.500000e-01), seed = 18446744073709551615>
// CHECK-NEXT: kiln.variable @gu : tensor<784x128xf32> init <glorot_uniform, seed = 1>
// CHECK-NEXT: kiln.variable @gn : tensor<3x3x16xf32> init <glorot_normal, seed = 2>
kiln.variable @u : tensor<8xf32> init <uniform(-0.05, 0.05), seed = 3>
kiln.variable @n : tensor<8xf16> init <normal(0.0, 0.01), seed = 4>
kiln.variable @t : tensor<8xbf16> init <truncated_normal(1.0, 0.25), seed = 18446744073709551615>
kiln.variable @gu : tensor<784x128xf32> init <glorot_uniform, seed = 1>
kiln.variable @gn : tensor<3x3x16xf32> init <glorot_normal, seed = 2>

// -----

// Tests that an omitted seed reads as 0 and prints, and that parameters keep
// full double precision.
// CHECK-LABEL: module
// CHECK-NEXT: kiln.variable @u : tensor<8xf32> init <uniform(-0.123456789, 0.33333333333333331), seed = 0>
// CHECK-NEXT: kiln.variable @g : tensor<8xf32> init <glorot_uniform, seed = 0>
kiln.variable @u : tensor<8xf32> init <uniform(-0.123456789, 0.3333333333333333)>
kiln.variable @g : tensor<8xf32> init <glorot_uniform>

// -----

// Tests that `trainable = false` round-trips and the default `true` is not
// printed; that scalar and dotted names are fine.
// CHECK-LABEL: module
// CHECK-NEXT: kiln.variable @steps : tensor<i64> init <zeros> {trainable = false}
// CHECK-NEXT: kiln.variable @fc1.w : tensor<4x4xf32> init <ones>{{$}}
kiln.variable @steps : tensor<i64> init <zeros> {trainable = false}
kiln.variable @fc1.w : tensor<4x4xf32> init <ones> {trainable = true}

// -----

// Tests that kiln.read names a variable and gives its type.
// CHECK-LABEL: kiln.variable @w
kiln.variable @w : tensor<4x4xf32> init <glorot_uniform, seed = 9>
kiln.variable @fc1.b : tensor<4xf32> init <zeros>
// CHECK-LABEL: func @read
func.func @read() -> (tensor<4x4xf32>, tensor<4xf32>) {
  // CHECK-NEXT: %[[W:.+]] = kiln.read @w : tensor<4x4xf32>
  // CHECK-NEXT: %[[B:.+]] = kiln.read @fc1.b : tensor<4xf32>
  // CHECK-NEXT: return %[[W]], %[[B]]
  %w = kiln.read @w : tensor<4x4xf32>
  %b = kiln.read @fc1.b : tensor<4xf32>
  return %w, %b : tensor<4x4xf32>, tensor<4xf32>
}
