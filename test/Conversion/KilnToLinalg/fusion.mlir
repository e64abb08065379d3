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

// -----

// Tests that a transpose inside a fusion reads its input through the
// permutation (no transposed tensor), here with the cast of a bf16
// product's input: one loop that reads [4, 8] and writes [8, 4] in bf16.
// CHECK-DAG: #[[$SWAP:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$ALL:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @transposed_cast
// CHECK: linalg.generic {indexing_maps = [#[[$SWAP]], #[[$ALL]]], iterator_types = ["parallel", "parallel"]} ins(%{{.+}} : tensor<4x8xf32>) outs(%{{.+}} : tensor<8x4xbf16>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %{{.+}}: bf16):
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[X]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[H]]
// CHECK-NOT: linalg.generic
func.func @transposed_cast(%x: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  %0 = kiln.fusion(%x) : (tensor<4x8xf32>) -> tensor<8x4xbf16> {
  ^bb0(%a: tensor<4x8xf32>):
    %1 = kiln.transpose %a [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    %2 = kiln.cast %1 : tensor<8x4xf32> to tensor<8x4xbf16>
    kiln.yield %2 : tensor<8x4xbf16>
  }
  return %0 : tensor<8x4xbf16>
}

// -----

// Tests an input read both transposed and as it is (a square one): the
// generic takes it twice, once through each map.
// CHECK-DAG: #[[$SWAP:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$ALL:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @transposed_and_plain
// CHECK: linalg.generic {indexing_maps = [#[[$SWAP]], #[[$ALL]], #[[$ALL]]], iterator_types = ["parallel", "parallel"]} ins(%[[IN:.+]], %[[IN]] : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT: ^bb0(%[[T:.+]]: f32, %[[P:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: arith.addf %[[P]], %[[T]] : f32
func.func @transposed_and_plain(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = kiln.fusion(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %1 = kiln.transpose %a [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
    %2 = kiln.add %a, %1 : tensor<4x4xf32>
    kiln.yield %2 : tensor<4x4xf32>
  }
  return %0 : tensor<4x4xf32>
}
