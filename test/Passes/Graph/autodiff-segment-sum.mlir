// RUN: kiln-opt %s --kiln-autodiff | FileCheck --enable-var-scope %s

// Tests the gradient of kiln.scatter_add_rows's rows (an EmbeddingBag with
// offsets sums its rows into bags so): each row's gradient is its bag's,
// gathered by the row's id, and zero for an id outside the bags (-1, or the
// bag count: ids before the first offset or past the last end), which the
// forward op dropped. The table's gradient is the gather's: those rows at
// the ids (a sparse gradient).
// CHECK-LABEL: func @train_step
// CHECK-SAME: (%[[IDS:.+]]: tensor<5xi64>, %[[SEG:.+]]: tensor<5xi64>)
// CHECK: %[[G:.+]] = kiln.gather %{{.+}}[%[[SEG]]] : (tensor<3x2xf32>, tensor<5xi64>) -> tensor<5x2xf32>
// CHECK-DAG: %[[PAST:.+]] = kiln.constant dense<3> : tensor<5xi64>
// CHECK-DAG: %[[ZERO:.+]] = kiln.constant dense<0> : tensor<5xi64>
// CHECK: %[[GE:.+]] = kiln.compare ge, %[[SEG]], %[[ZERO]]
// CHECK: %[[NONNEG:.+]] = kiln.select %[[GE]], %[[SEG]], %[[PAST]]
// CHECK: %[[IN:.+]] = kiln.compare lt, %[[NONNEG]], %[[PAST]]
// CHECK: %[[MASK:.+]] = kiln.broadcast %{{.+}} : tensor<5x1xi1> -> tensor<5x2xi1>
// CHECK: %[[ROWS:.+]] = kiln.select %[[MASK]], %[[G]], %{{.+}} : tensor<5x2xi1>, tensor<5x2xf32>
// CHECK: return %{{.+}}, %[[IDS]], %[[ROWS]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @table : tensor<4x2xf32> init <zeros>
  func.func @forward(%ids: tensor<5xi64>, %seg: tensor<5xi64>) -> (tensor<f32> {kiln.name = "loss"}) {
    %t = kiln.read @table : tensor<4x2xf32>
    %rows = kiln.gather %t[%ids] : (tensor<4x2xf32>, tensor<5xi64>) -> tensor<5x2xf32>
    %bags = kiln.scatter_add_rows %rows[%seg] : (tensor<5x2xf32>, tensor<5xi64>) -> tensor<3x2xf32>
    %sq = kiln.mul %bags, %bags : tensor<3x2xf32>
    %l = kiln.reduce_sum %sq axes [0, 1] : tensor<3x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
