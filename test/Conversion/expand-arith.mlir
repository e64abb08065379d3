// RUN: kiln-opt %s --kiln-expand-arith | FileCheck --enable-var-scope %s

// Tests that maximumf stays one op (LLVM vectorizes its reductions; the
// compare-and-select form hides them) while a ceil division and a bf16
// truncation are expanded for the LLVM lowering.
// CHECK-LABEL: func @ops
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : f32
// CHECK-NOT: arith.ceildivsi
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @ops(%x: f32, %y: f32, %a: i32, %b: i32) -> (f32, i32, bf16) {
  %m = arith.maximumf %x, %y : f32
  %c = arith.ceildivsi %a, %b : i32
  %t = arith.truncf %x : f32 to bf16
  return %m, %c, %t : f32, i32, bf16
}
