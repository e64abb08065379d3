// RUN: kiln-opt %s --kiln-approximate-math | FileCheck --enable-var-scope %s

// Tests that f32 exp and tanh become arithmetic (no math call left for libm)
// and that f64 stays a call.
// CHECK-LABEL: func @f32_ops
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK: arith.mulf
// CHECK: return
func.func @f32_ops(%x: f32) -> (f32, f32) {
  %e = math.exp %x : f32
  %t = math.tanh %x : f32
  return %e, %t : f32, f32
}

// CHECK-LABEL: func @f64_pow
// CHECK: math.powf %{{.+}}, %{{.+}} : f64
func.func @f64_pow(%x: f64, %y: f64) -> f64 {
  %p = math.powf %x, %y : f64
  return %p : f64
}
