// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that every binary elementwise op round-trips with its one type.
// CHECK-LABEL: func @binary
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4x8xf32>, %[[B:[^:]+]]: tensor<4x8xf32>)
func.func @binary(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  // CHECK-NEXT: kiln.add %[[A]], %[[B]] : tensor<4x8xf32>
  // CHECK-NEXT: kiln.sub %[[A]], %[[B]] : tensor<4x8xf32>
  // CHECK-NEXT: kiln.mul %[[A]], %[[B]] : tensor<4x8xf32>
  // CHECK-NEXT: kiln.div %[[A]], %[[B]] : tensor<4x8xf32>
  // CHECK-NEXT: kiln.maximum %[[A]], %[[B]] : tensor<4x8xf32>
  // CHECK-NEXT: kiln.minimum %[[A]], %[[B]] : tensor<4x8xf32>
  %0 = kiln.add %a, %b : tensor<4x8xf32>
  %1 = kiln.sub %a, %b : tensor<4x8xf32>
  %2 = kiln.mul %a, %b : tensor<4x8xf32>
  %3 = kiln.div %a, %b : tensor<4x8xf32>
  %4 = kiln.maximum %a, %b : tensor<4x8xf32>
  %5 = kiln.minimum %a, %b : tensor<4x8xf32>
  return
}

// -----

// Tests that binary ops take integer, half-precision and dynamic tensors.
// CHECK-LABEL: func @binary_types
func.func @binary_types(%i: tensor<3xi32>, %l: tensor<?x2xi64>, %h: tensor<f16>,
                        %b: tensor<2x?xbf16>) {
  // CHECK: kiln.div %{{.+}}, %{{.+}} : tensor<3xi32>
  // CHECK-NEXT: kiln.mul %{{.+}}, %{{.+}} : tensor<?x2xi64>
  // CHECK-NEXT: kiln.sub %{{.+}}, %{{.+}} : tensor<f16>
  // CHECK-NEXT: kiln.add %{{.+}}, %{{.+}} : tensor<2x?xbf16>
  %0 = kiln.div %i, %i : tensor<3xi32>
  %1 = kiln.mul %l, %l : tensor<?x2xi64>
  %2 = kiln.sub %h, %h : tensor<f16>
  %3 = kiln.add %b, %b : tensor<2x?xbf16>
  return
}

// -----

// Tests that every unary op round-trips, and that results chain.
// CHECK-LABEL: func @unary
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3xf32>)
func.func @unary(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %[[NEG:.+]] = kiln.neg %[[X]] : tensor<2x3xf32>
  // CHECK-NEXT: %[[EXP:.+]] = kiln.exp %[[NEG]] : tensor<2x3xf32>
  // CHECK-NEXT: %[[LOG:.+]] = kiln.log %[[EXP]] : tensor<2x3xf32>
  // CHECK-NEXT: %[[SQRT:.+]] = kiln.sqrt %[[LOG]] : tensor<2x3xf32>
  // CHECK-NEXT: %[[RSQRT:.+]] = kiln.rsqrt %[[SQRT]] : tensor<2x3xf32>
  // CHECK-NEXT: %[[TANH:.+]] = kiln.tanh %[[RSQRT]] : tensor<2x3xf32>
  // CHECK-NEXT: %[[SIG:.+]] = kiln.sigmoid %[[TANH]] : tensor<2x3xf32>
  // CHECK-NEXT: %[[RELU:.+]] = kiln.relu %[[SIG]] : tensor<2x3xf32>
  // CHECK-NEXT: return %[[RELU]]
  %0 = kiln.neg %x : tensor<2x3xf32>
  %1 = kiln.exp %0 : tensor<2x3xf32>
  %2 = kiln.log %1 : tensor<2x3xf32>
  %3 = kiln.sqrt %2 : tensor<2x3xf32>
  %4 = kiln.rsqrt %3 : tensor<2x3xf32>
  %5 = kiln.tanh %4 : tensor<2x3xf32>
  %6 = kiln.sigmoid %5 : tensor<2x3xf32>
  %7 = kiln.relu %6 : tensor<2x3xf32>
  return %7 : tensor<2x3xf32>
}

// -----

// Tests that neg and relu, unlike the transcendental ops, take integers.
// CHECK-LABEL: func @unary_int
func.func @unary_int(%x: tensor<5xi32>) {
  // CHECK: kiln.neg %{{.+}} : tensor<5xi32>
  // CHECK-NEXT: kiln.relu %{{.+}} : tensor<5xi32>
  %0 = kiln.neg %x : tensor<5xi32>
  %1 = kiln.relu %0 : tensor<5xi32>
  return
}

// -----

// Tests that gelu prints both approximations.
// CHECK-LABEL: func @gelu
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x?xbf16>)
func.func @gelu(%x: tensor<4x?xbf16>) {
  // CHECK-NEXT: kiln.gelu %[[X]] approximation(exact) : tensor<4x?xbf16>
  // CHECK-NEXT: kiln.gelu %[[X]] approximation(tanh) : tensor<4x?xbf16>
  %0 = kiln.gelu %x approximation(exact) : tensor<4x?xbf16>
  %1 = kiln.gelu %x approximation(tanh) : tensor<4x?xbf16>
  return
}

// -----

// Tests that erf, abs, pow and mod round-trip, mod with and without fmod.
// CHECK-LABEL: func @erf_abs_pow_mod
// CHECK-SAME: (%[[A:[^:]+]]: tensor<2x3xf32>, %[[B:[^:]+]]: tensor<2x3xf32>)
func.func @erf_abs_pow_mod(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // CHECK-NEXT: kiln.erf %[[A]] : tensor<2x3xf32>
  // CHECK-NEXT: kiln.abs %[[A]] : tensor<2x3xf32>
  // CHECK-NEXT: kiln.pow %[[A]], %[[B]] : tensor<2x3xf32>
  // CHECK-NEXT: kiln.mod %[[A]], %[[B]] : tensor<2x3xf32>
  // CHECK-NEXT: kiln.mod %[[A]], %[[B]] {fmod} : tensor<2x3xf32>
  %0 = kiln.erf %a : tensor<2x3xf32>
  %1 = kiln.abs %a : tensor<2x3xf32>
  %2 = kiln.pow %a, %b : tensor<2x3xf32>
  %3 = kiln.mod %a, %b : tensor<2x3xf32>
  %4 = kiln.mod %a, %b {fmod} : tensor<2x3xf32>
  return
}

// -----

// Tests that abs and mod, unlike erf and pow, take integers, and that all
// four take half-precision and `?` shapes.
// CHECK-LABEL: func @erf_abs_pow_mod_types
func.func @erf_abs_pow_mod_types(%i: tensor<4xi32>, %l: tensor<?xi64>, %h: tensor<?x2xbf16>, %f: tensor<f16>) {
  // CHECK: kiln.abs %{{.+}} : tensor<4xi32>
  // CHECK-NEXT: kiln.mod %{{.+}}, %{{.+}} : tensor<?xi64>
  // CHECK-NEXT: kiln.mod %{{.+}}, %{{.+}} {fmod} : tensor<4xi32>
  // CHECK-NEXT: kiln.erf %{{.+}} : tensor<?x2xbf16>
  // CHECK-NEXT: kiln.pow %{{.+}}, %{{.+}} : tensor<f16>
  // CHECK-NEXT: kiln.abs %{{.+}} : tensor<f16>
  %0 = kiln.abs %i : tensor<4xi32>
  %1 = kiln.mod %l, %l : tensor<?xi64>
  %2 = kiln.mod %i, %i {fmod} : tensor<4xi32>
  %3 = kiln.erf %h : tensor<?x2xbf16>
  %4 = kiln.pow %f, %f : tensor<f16>
  %5 = kiln.abs %f : tensor<f16>
  return
}
