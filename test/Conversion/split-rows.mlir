// RUN: kiln-opt %s -split-input-file --kiln-split-rows='min-iterations=64' | FileCheck --enable-var-scope %s

// Tests kiln-split-rows: a kernel whose loop nests each write only their own
// row gets `begin` and `end` arguments bounding its outer loops and is
// recorded with its row count; kernels whose rows depend on each other, or
// that are too small, keep their signature.

// A row softmax's shape: two nests over the same 8 rows, the second reading
// the first's scratch buffer on its own row.
// CHECK: module attributes {split_rows.kernel_rows = {rows = 8 : i64}}
// CHECK-LABEL: func @rows
// CHECK-SAME: %[[BEGIN:[a-z0-9]+]]: index, %[[END:[a-z0-9]+]]: index)
// CHECK: scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step
// CHECK: scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step
func.func @rows(%a: memref<8x16xf32>, %b: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %m = memref.alloca() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %a[%i, %j] : memref<8x16xf32>
      memref.store %x, %m[%i] : memref<8xf32>
    }
  }
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %a[%i, %j] : memref<8x16xf32>
      %y = memref.load %m[%i] : memref<8xf32>
      %z = arith.subf %x, %y : f32
      memref.store %z, %b[%i, %j] : memref<8x16xf32>
    }
  }
  return
}

// -----

// A sum over the rows: every row writes the same element.
// CHECK-NOT: split_rows.kernel_rows
// CHECK-LABEL: func @column_sum
// CHECK-SAME: (%{{[a-z0-9]+}}: memref<8x16xf32>, %{{[a-z0-9]+}}: memref<16xf32>)
func.func @column_sum(%a: memref<8x16xf32>, %b: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %a[%i, %j] : memref<8x16xf32>
      %s = memref.load %b[%j] : memref<16xf32>
      %t = arith.addf %x, %s : f32
      memref.store %t, %b[%j] : memref<16xf32>
    }
  }
  return
}

// -----

// A row reads another row of what the kernel writes (a shift down).
// CHECK-NOT: split_rows.kernel_rows
// CHECK-LABEL: func @reads_another_row
// CHECK-SAME: (%{{[a-z0-9]+}}: memref<8x16xf32>)
func.func @reads_another_row(%a: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c7 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %n = arith.addi %i, %c1 : index
      %x = memref.load %a[%n, %j] : memref<8x16xf32>
      memref.store %x, %a[%i, %j] : memref<8x16xf32>
    }
  }
  return
}

// -----

// Fewer innermost iterations (4 x 8) than min-iterations (64).
// CHECK-NOT: split_rows.kernel_rows
// CHECK-LABEL: func @small
// CHECK-SAME: (%{{[a-z0-9]+}}: memref<4x8xf32>, %{{[a-z0-9]+}}: memref<4x8xf32>)
func.func @small(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i, %j] : memref<4x8xf32>
      memref.store %x, %b[%i, %j] : memref<4x8xf32>
    }
  }
  return
}

// -----

// A store through a view: its rows are not the kernel's rows.
// CHECK-NOT: split_rows.kernel_rows
// CHECK-LABEL: func @through_a_view
// CHECK-SAME: (%{{[a-z0-9]+}}: memref<8x16xf32>, %{{[a-z0-9]+}}: memref<128xf32>)
func.func @through_a_view(%a: memref<8x16xf32>, %b: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %v = memref.expand_shape %b [[0, 1]] output_shape [16, 8] : memref<128xf32> into memref<16x8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %a[%i, %j] : memref<8x16xf32>
      memref.store %x, %v[%j, %i] : memref<16x8xf32>
    }
  }
  return
}

// -----

// Nests over different row counts.
// CHECK-NOT: split_rows.kernel_rows
// CHECK-LABEL: func @different_rows
func.func @different_rows(%a: memref<8x16xf32>, %b: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %a[%i, %j] : memref<8x16xf32>
      memref.store %x, %a[%i, %j] : memref<8x16xf32>
    }
  }
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %b[%i, %j] : memref<16x8xf32>
      memref.store %x, %b[%i, %j] : memref<16x8xf32>
    }
  }
  return
}

// -----

// A maximum over every row carried from row to row, then used by each row.
// CHECK-NOT: split_rows.kernel_rows
// CHECK-LABEL: func @carried_across_rows
// CHECK-SAME: (%{{[a-z0-9]+}}: memref<8x16xf32>, %{{[a-z0-9]+}}: memref<8x16xf32>)
func.func @carried_across_rows(%a: memref<8x16xf32>, %b: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %init = arith.constant 0.0 : f32
  %max = scf.for %i = %c0 to %c8 step %c1 iter_args(%m = %init) -> (f32) {
    %x = memref.load %a[%i, %c0] : memref<8x16xf32>
    %n = arith.maximumf %m, %x : f32
    scf.yield %n : f32
  }
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %a[%i, %j] : memref<8x16xf32>
      %y = arith.subf %x, %max : f32
      memref.store %y, %b[%i, %j] : memref<8x16xf32>
    }
  }
  return
}

// -----

// An optimizer update's shape: a scalar read once before the loop from what
// the kernel does not write, and a zeroed scratch copied into a second
// scratch (a layer norm's two sums from one fill): each range does both on
// its own.
// CHECK: module attributes {split_rows.kernel_rows = {before_the_loops = 8 : i64}}
// CHECK-LABEL: func @before_the_loops
// CHECK-SAME: %[[BEGIN:[a-z0-9]+]]: index, %[[END:[a-z0-9]+]]: index)
// CHECK: memref.load %{{.+}}[] : memref<f32>
// CHECK: scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step
// CHECK: memref.copy
// CHECK: scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step
func.func @before_the_loops(%a: memref<8x16xf32>, %lr: memref<f32>, %b: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %rate = memref.load %lr[] : memref<f32>
  %sum = memref.alloca() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %zero, %sum[%i] : memref<8xf32>
  }
  %second = memref.alloca() : memref<8xf32>
  memref.copy %sum, %second : memref<8xf32> to memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %a[%i, %j] : memref<8x16xf32>
      %s = memref.load %second[%i] : memref<8xf32>
      %t = arith.addf %s, %x : f32
      memref.store %t, %second[%i] : memref<8xf32>
      %y = arith.mulf %x, %rate : f32
      memref.store %y, %b[%i, %j] : memref<8x16xf32>
    }
  }
  return
}

// -----

// Outside the loops, a read of what the kernel writes (another range may be
// writing it) and a copy into an argument (it would write other ranges'
// rows) keep the kernel whole.
// CHECK-NOT: split_rows.kernel_rows
// CHECK-LABEL: func @reads_what_it_writes
// CHECK-SAME: (%{{[a-z0-9]+}}: memref<8x16xf32>)
func.func @reads_what_it_writes(%a: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %first = memref.load %a[%c0, %c0] : memref<8x16xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      memref.store %first, %a[%i, %j] : memref<8x16xf32>
    }
  }
  return
}
// CHECK-LABEL: func @copies_into_an_argument
// CHECK-SAME: (%{{[a-z0-9]+}}: memref<8x16xf32>, %{{[a-z0-9]+}}: memref<8x16xf32>)
func.func @copies_into_an_argument(%a: memref<8x16xf32>, %b: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  memref.copy %a, %b : memref<8x16xf32> to memref<8x16xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %a[%i, %j] : memref<8x16xf32>
      memref.store %x, %a[%i, %j] : memref<8x16xf32>
    }
  }
  return
}

// -----

// The reader of a block of a product's rows (split_rows.required = 0): split
// however small it is, the attribute removed; argument 0 is read at its own
// row only.
// CHECK: module attributes {split_rows.kernel_rows = {block_reader = 4 : i64}}
// CHECK-LABEL: func @block_reader
// CHECK-NOT: split_rows.required
// CHECK-SAME: %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index)
func.func @block_reader(%c: memref<4x8xf32>, %bias: memref<8xf32>, %out: memref<4x8xf32>) attributes {split_rows.required = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %c[%i, %j] : memref<4x8xf32>
      %b = memref.load %bias[%j] : memref<8xf32>
      %y = arith.addf %x, %b : f32
      memref.store %y, %out[%i, %j] : memref<4x8xf32>
    }
  }
  return
}

// -----

// A reader of the block that reads another row of it (the first, for every
// row): the other rows are not in the block it is called on. Left whole;
// kilnc then plans the product whole.
// CHECK-LABEL: func @reads_another_row_of_the_block
// CHECK-SAME: (%{{[a-z0-9]+}}: memref<4x8xf32>, %{{[a-z0-9]+}}: memref<4x8xf32>)
func.func @reads_another_row_of_the_block(%c: memref<4x8xf32>, %out: memref<4x8xf32>) attributes {split_rows.required = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %c[%c0, %j] : memref<4x8xf32>
      memref.store %x, %out[%i, %j] : memref<4x8xf32>
    }
  }
  return
}
