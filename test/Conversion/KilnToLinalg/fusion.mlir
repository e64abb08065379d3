// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck --enable-var-scope %s

// Tests that a fusion becomes one parallel generic: the bias read through
// its broadcast map, the splat constant a scalar, the values in between
// scalars.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @bias_relu
// CHECK: linalg.generic {indexing_maps = [#[[$ROW]], #[[$ID]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
func.func @bias_relu(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %0 = kiln.fusion(%b, %x) : (tensor<16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%bb: tensor<16xf32>, %xx: tensor<8x16xf32>):
    %1 = kiln.broadcast %bb : tensor<16xf32> -> tensor<8x16xf32>
    %2 = kiln.add %xx, %1 : tensor<8x16xf32>
    %3 = kiln.relu %2 : tensor<8x16xf32>
    kiln.yield %3 : tensor<8x16xf32>
  }
  return %0 : tensor<8x16xf32>
}

// -----

// Tests that a one_hot inside a fusion reads its indices along the leading
// dimensions and compares each with the position in the last one, so the
// softmax cross-entropy gradient is one loop with no one-hot tensor.
// CHECK-DAG: #[[$ALL:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$LEAD:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @softmax_cross_entropy_grad
// CHECK: linalg.generic {indexing_maps = [#[[$LEAD]], #[[$ALL]], #[[$ALL]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[LABEL:.+]]: i64, %[[P:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[POS:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[IDX:.+]] = arith.index_cast %[[LABEL]] : i64 to index
// CHECK-NEXT: %[[HIT:.+]] = arith.cmpi eq, %[[POS]], %[[IDX]] : index
// CHECK: %[[ONE:.+]] = arith.select %[[HIT]]
// CHECK: arith.subf %[[P]], %[[ONE]]
// CHECK-NOT: linalg.generic
func.func @softmax_cross_entropy_grad(%labels: tensor<32xi64>, %probs: tensor<32x10xf32>) -> tensor<32x10xf32> {
  %0 = kiln.fusion(%labels, %probs) : (tensor<32xi64>, tensor<32x10xf32>) -> tensor<32x10xf32> {
  ^bb0(%l: tensor<32xi64>, %p: tensor<32x10xf32>):
    %1 = kiln.one_hot %l : tensor<32xi64> -> tensor<32x10xf32>
    %2 = kiln.sub %p, %1 : tensor<32x10xf32>
    %3 = kiln.constant dense<0.03125> : tensor<32x10xf32>
    %4 = kiln.mul %2, %3 : tensor<32x10xf32>
    kiln.yield %4 : tensor<32x10xf32>
  }
  return %0 : tensor<32x10xf32>
}
