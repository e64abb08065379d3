// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-mask-pooled-gradients))' | FileCheck --enable-var-scope %s

// Tests that the mask over a max pool's spread gradient, where the pooled
// input is > 0, becomes a mask over the pooled gradient where the pooled
// output is > 0, before the spreading: the large compare and select gone.
// CHECK-LABEL: func @relu_then_pool
// CHECK-SAME: (%[[Y:.+]]: tensor<2x3x4x4xf32>, %[[G:.+]]: tensor<2x3x2x2xf32>)
// CHECK: %[[Z:.+]] = kiln.max_pool %[[Y]]
// CHECK: %[[I:.+]] = kiln.max_pool_indices %[[Y]]
// CHECK: %[[ZERO:.+]] = kiln.constant dense<0.000000e+00> : tensor<2x3x2x2xf32>
// CHECK: %[[POSITIVE:.+]] = kiln.compare gt, %[[Z]], %[[ZERO]] : tensor<2x3x2x2xf32>
// CHECK: %[[MASKED:.+]] = kiln.select %[[POSITIVE]], %[[G]], %[[ZERO]] : tensor<2x3x2x2xi1>, tensor<2x3x2x2xf32>
// CHECK: %[[DX:.+]] = kiln.max_pool_grad %[[MASKED]], %[[I]]
// CHECK-NOT: kiln.compare
// CHECK-NOT: kiln.select
// CHECK: return %[[Z]], %[[DX]]
func.func @relu_then_pool(%y: tensor<2x3x4x4xf32>, %g: tensor<2x3x2x2xf32>) -> (tensor<2x3x2x2xf32>, tensor<2x3x4x4xf32>) {
  %z = kiln.max_pool %y kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : tensor<2x3x4x4xf32> -> tensor<2x3x2x2xf32>
  %i = kiln.max_pool_indices %y kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : tensor<2x3x4x4xf32> -> tensor<2x3x2x2xi32>
  %s = kiln.max_pool_grad %g, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xi32>) -> tensor<2x3x4x4xf32>
  %zero = kiln.constant dense<0.0> : tensor<2x3x4x4xf32>
  %m = kiln.compare gt, %y, %zero : tensor<2x3x4x4xf32>
  %dx = kiln.select %m, %s, %zero : tensor<2x3x4x4xi1>, tensor<2x3x4x4xf32>
  return %z, %dx : tensor<2x3x2x2xf32>, tensor<2x3x4x4xf32>
}

// -----

// Tests what stays: no max_pool of the masked tensor with the gradient's
// window (another window; none at all), a mask over another tensor, a
// spread gradient read twice, and a mask that keeps the negatives.
// CHECK-LABEL: func @left_alone
// CHECK-COUNT-5: kiln.select %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x3x4x4xi1>, tensor<2x3x4x4xf32>
// CHECK-NOT: tensor<2x3x2x2xi1>
func.func @left_alone(%y: tensor<2x3x4x4xf32>, %other: tensor<2x3x4x4xf32>, %g: tensor<2x3x2x2xf32>) -> (tensor<2x3x3x3xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  %z = kiln.max_pool %y kernel [2, 2] strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : tensor<2x3x4x4xf32> -> tensor<2x3x3x3xf32>
  %i = kiln.max_pool_indices %y kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : tensor<2x3x4x4xf32> -> tensor<2x3x2x2xi32>
  %zero = kiln.constant dense<0.0> : tensor<2x3x4x4xf32>
  %s1 = kiln.max_pool_grad %g, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xi32>) -> tensor<2x3x4x4xf32>
  %m1 = kiln.compare gt, %y, %zero : tensor<2x3x4x4xf32>
  %d1 = kiln.select %m1, %s1, %zero : tensor<2x3x4x4xi1>, tensor<2x3x4x4xf32>
  %s2 = kiln.max_pool_grad %g, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xi32>) -> tensor<2x3x4x4xf32>
  %m2 = kiln.compare gt, %other, %zero : tensor<2x3x4x4xf32>
  %d2 = kiln.select %m2, %s2, %zero : tensor<2x3x4x4xi1>, tensor<2x3x4x4xf32>
  %s3 = kiln.max_pool_grad %g, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xi32>) -> tensor<2x3x4x4xf32>
  %d3 = kiln.select %m1, %s3, %zero : tensor<2x3x4x4xi1>, tensor<2x3x4x4xf32>
  %s4 = kiln.max_pool_grad %g, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xi32>) -> tensor<2x3x4x4xf32>
  %m4 = kiln.compare lt, %y, %zero : tensor<2x3x4x4xf32>
  %d4 = kiln.select %m4, %s4, %zero : tensor<2x3x4x4xi1>, tensor<2x3x4x4xf32>
  %s5 = kiln.max_pool_grad %g, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xi32>) -> tensor<2x3x4x4xf32>
  %d5 = kiln.select %m1, %zero, %s5 : tensor<2x3x4x4xi1>, tensor<2x3x4x4xf32>
  return %z, %d1, %d2, %d3, %s3, %d4, %d5 : tensor<2x3x3x3xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}

// -----

// Tests that the pooled output must be computed before the gradient: a
// max_pool after it is not used.
// CHECK-LABEL: func @pooled_after
// CHECK: kiln.select %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x3x4x4xi1>, tensor<2x3x4x4xf32>
// CHECK-NOT: tensor<2x3x2x2xi1>
func.func @pooled_after(%y: tensor<2x3x4x4xf32>, %g: tensor<2x3x2x2xf32>) -> (tensor<2x3x2x2xf32>, tensor<2x3x4x4xf32>) {
  %i = kiln.max_pool_indices %y kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : tensor<2x3x4x4xf32> -> tensor<2x3x2x2xi32>
  %s = kiln.max_pool_grad %g, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xi32>) -> tensor<2x3x4x4xf32>
  %zero = kiln.constant dense<0.0> : tensor<2x3x4x4xf32>
  %m = kiln.compare gt, %y, %zero : tensor<2x3x4x4xf32>
  %dx = kiln.select %m, %s, %zero : tensor<2x3x4x4xi1>, tensor<2x3x4x4xf32>
  %z = kiln.max_pool %y kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : tensor<2x3x4x4xf32> -> tensor<2x3x2x2xf32>
  return %z, %dx : tensor<2x3x2x2xf32>, tensor<2x3x4x4xf32>
}
