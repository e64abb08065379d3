// The CPU back end's lowering (kLoweringPipeline in compiler/Target/CpuCodegen.cpp)
// on kernels written as `kilnc --emit=kernels` writes them: only the LLVM
// dialect may remain, with memref arguments as bare pointers, and nothing
// that needs MLIR's runner library (memrefCopy) at load time. Heap memory
// only for temporaries above 64 KiB.
// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(convert-kiln-to-linalg, canonicalize, cse, \
// RUN:   eliminate-empty-tensors, one-shot-bufferize, func.func(promote-buffers-to-stack{max-alloc-size-in-bytes=65536}), \
// RUN:   buffer-deallocation-pipeline, convert-linalg-to-loops, lower-affine, convert-scf-to-cf, math-legalize-to-f32, \
// RUN:   expand-strided-metadata, finalize-memref-to-llvm, convert-math-to-llvm, convert-math-to-libm, convert-arith-to-llvm, \
// RUN:   convert-func-to-llvm{use-bare-ptr-memref-call-conv=1}, convert-cf-to-llvm, reconcile-unrealized-casts)" \
// RUN: | FileCheck --enable-var-scope %s \
// RUN:   --implicit-check-not='{{[ ="](arith|bufferization|cf|func|kiln|linalg|math|memref|scf|tensor)\.[a-z_]+}}' \
// RUN:   --implicit-check-not=unrealized_conversion_cast --implicit-check-not=memrefCopy \
// RUN:   --implicit-check-not=@malloc --implicit-check-not=@free

// Tests that exact gelu reaches libm's erff (there is no LLVM intrinsic for
// erf) and that the kernel takes and writes bare pointers.
// CHECK: llvm.func @erff(f32) -> f32
// CHECK-LABEL: llvm.func @gelu_exact
// CHECK-SAME: (%[[IN:.+]]: !llvm.ptr, %[[OUT:.+]]: !llvm.ptr) {
// CHECK: llvm.insertvalue %[[OUT]]
// CHECK: llvm.insertvalue %[[IN]]
// CHECK: %[[X:.+]] = llvm.load %{{.+}} : !llvm.ptr -> f32
// CHECK-NEXT: %[[SCALED:.+]] = llvm.fmul %[[X]], %{{.+}} : f32
// CHECK-NEXT: %[[ERF:.+]] = llvm.call @erff(%[[SCALED]]) : (f32) -> f32
// CHECK: llvm.store %{{.+}}, %{{.+}} : f32, !llvm.ptr
// CHECK: llvm.return
func.func @gelu_exact(%arg0: memref<4x8xf32>, %arg1: memref<4x8xf32>) {
  %0 = bufferization.to_tensor %arg0 restrict : memref<4x8xf32>
  %1 = kiln.gelu %0 approximation(exact) : tensor<4x8xf32>
  bufferization.materialize_in_destination %1 in restrict writable %arg1 : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
  return
}

// -----

// Tests that concat writes each input straight into the output: one loop
// nest per input in turn, whose innermost block loads an element and stores
// it (its address computed between), with no temporary and no strided copy.
// CHECK-LABEL: llvm.func @concat
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) {
// CHECK-NOT: llvm.alloca
// CHECK: %[[A:.+]] = llvm.load %{{.+}} : !llvm.ptr -> f32
// CHECK: llvm.store %[[A]], %{{.+}} : f32, !llvm.ptr
// CHECK: %[[B:.+]] = llvm.load %{{.+}} : !llvm.ptr -> f32
// CHECK: llvm.store %[[B]], %{{.+}} : f32, !llvm.ptr
// CHECK-NOT: llvm.alloca
// CHECK-NOT: llvm.load
// CHECK: llvm.return
func.func @concat(%arg0: memref<4x2xf32>, %arg1: memref<4x3xf32>, %arg2: memref<4x5xf32>) {
  %0 = bufferization.to_tensor %arg0 restrict : memref<4x2xf32>
  %1 = bufferization.to_tensor %arg1 restrict : memref<4x3xf32>
  %2 = kiln.concat %0, %1 axis = 1 : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
  bufferization.materialize_in_destination %2 in restrict writable %arg2 : (tensor<4x5xf32>, memref<4x5xf32>) -> ()
  return
}

// -----

// Tests that a strided slice is one loop nest loading at start + step * i
// and storing into the output, with no temporary and no strided copy.
// CHECK-LABEL: llvm.func @slice
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) {
// CHECK-NOT: llvm.alloca
// CHECK: llvm.load %{{.+}} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.extractvalue
// CHECK: llvm.store %{{.+}}, %{{.+}} : f32, !llvm.ptr
// CHECK-NOT: llvm.alloca
// CHECK: llvm.return
func.func @slice(%arg0: memref<4x8xf32>, %arg1: memref<2x3xf32>) {
  %0 = bufferization.to_tensor %arg0 restrict : memref<4x8xf32>
  %1 = kiln.slice %0 start [1, 2] limit [4, 8] step [2, 2] : tensor<4x8xf32> -> tensor<2x3xf32>
  bufferization.materialize_in_destination %1 in restrict writable %arg1 : (tensor<2x3xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

// Tests that a reduction's small accumulator lives on the stack, and that
// the keep_dims reshape is a view (no copy, no shape global).
// CHECK-NOT: llvm.mlir.global
// CHECK-LABEL: llvm.func @reduce_mean_keep_dims
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) {
// CHECK: llvm.alloca %{{.+}} x f32
// CHECK: llvm.fadd
// CHECK: llvm.fdiv
// CHECK: llvm.return
func.func @reduce_mean_keep_dims(%arg0: memref<4x8xf32>, %arg1: memref<4x1xf32>) {
  %0 = bufferization.to_tensor %arg0 restrict : memref<4x8xf32>
  %1 = kiln.reduce_mean %0 axes [1] {keep_dims} : tensor<4x8xf32> -> tensor<4x1xf32>
  bufferization.materialize_in_destination %1 in restrict writable %arg1 : (tensor<4x1xf32>, memref<4x1xf32>) -> ()
  return
}

// -----

// Tests that softmax keeps its row max and row sum (4 floats each) on the
// stack, no other buffer, and lowers to max, exp(x - max) summed and stored
// into the result, then the stored values divided by the sum: one exp.
// CHECK-LABEL: llvm.func @softmax
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %[[OUT:.+]]: !llvm.ptr) {
// CHECK-COUNT-2: llvm.alloca %{{.+}} x f32
// CHECK-NOT: llvm.alloca
// CHECK-NOT: llvm.call @malloc
// CHECK: llvm.intr.maximum
// CHECK: %[[SHIFTED:.+]] = llvm.fsub
// CHECK-NEXT: %[[EXP:.+]] = llvm.intr.exp(%[[SHIFTED]])
// CHECK-NEXT: llvm.fadd %[[EXP]]
// CHECK: llvm.store %[[EXP]]
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.fdiv
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.return
func.func @softmax(%arg0: memref<4x10xf32>, %arg1: memref<4x10xf32>) {
  %0 = bufferization.to_tensor %arg0 restrict : memref<4x10xf32>
  %1 = kiln.softmax %0 axis = 1 : tensor<4x10xf32>
  bufferization.materialize_in_destination %1 in restrict writable %arg1 : (tensor<4x10xf32>, memref<4x10xf32>) -> ()
  return
}

// -----

// Tests that the gather clamp survives as smax(id, 0) then smin(., 99),
// stored to the kernel's own stack buffer of rows (an alloca, which no
// store to the result can change), from which the copy loop loads the row
// before computing its address.
// CHECK-LABEL: llvm.func @gather
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) {
// CHECK: %[[LAST:.+]] = llvm.mlir.constant(99 : index) : i64
// CHECK-NEXT: %[[FIRST:.+]] = llvm.mlir.constant(0 : index) : i64
// CHECK: %[[ROWS:.+]] = llvm.alloca %{{.+}} x i64
// CHECK: %[[ID:.+]] = llvm.load %{{.+}} : !llvm.ptr -> i64
// CHECK-NEXT: %[[LOW:.+]] = llvm.intr.smax(%[[ID]], %[[FIRST]]) : (i64, i64) -> i64
// CHECK-NEXT: %[[CLAMPED:.+]] = llvm.intr.smin(%[[LOW]], %[[LAST]]) : (i64, i64) -> i64
// CHECK: llvm.store %[[CLAMPED]], %{{.+}} : i64, !llvm.ptr
// CHECK: %[[ROW:.+]] = llvm.load %{{.+}} : !llvm.ptr -> i64
// CHECK: llvm.mul %[[ROW]], %{{.+}} : i64
// CHECK: llvm.load %{{.+}} : !llvm.ptr -> f32
// CHECK: llvm.return
func.func @gather(%arg0: memref<100x16xf32>, %arg1: memref<8xi64>, %arg2: memref<8x16xf32>) {
  %0 = bufferization.to_tensor %arg0 restrict : memref<100x16xf32>
  %1 = bufferization.to_tensor %arg1 restrict : memref<8xi64>
  %2 = kiln.gather %0[%1] : (tensor<100x16xf32>, tensor<8xi64>) -> tensor<8x16xf32>
  bufferization.materialize_in_destination %2 in restrict writable %arg2 : (tensor<8x16xf32>, memref<8x16xf32>) -> ()
  return
}

// -----

// Tests that a loss accumulates straight into its scalar output and divides
// it in place.
// CHECK-LABEL: llvm.func @mean_squared_error
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) {
// CHECK-NOT: llvm.alloca
// CHECK: %[[D:.+]] = llvm.fsub
// CHECK-NEXT: %[[D2:.+]] = llvm.fmul %[[D]], %[[D]]
// CHECK-NEXT: llvm.fadd %[[D2]]
// CHECK: llvm.fdiv
// CHECK-NOT: llvm.alloca
// CHECK: llvm.return
func.func @mean_squared_error(%arg0: memref<32x1xf32>, %arg1: memref<32x1xf32>, %arg2: memref<f32>) {
  %0 = bufferization.to_tensor %arg0 restrict : memref<32x1xf32>
  %1 = bufferization.to_tensor %arg1 restrict : memref<32x1xf32>
  %2 = kiln.mean_squared_error %0, %1 : tensor<32x1xf32> -> tensor<f32>
  bufferization.materialize_in_destination %2 in restrict writable %arg2 : (tensor<f32>, memref<f32>) -> ()
  return
}

// -----

// Tests that an i32 matmul with a small transposed rhs (512 bytes) keeps
// the transpose on the stack and multiplies and adds integers.
// CHECK-LABEL: llvm.func @matmul_small
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) {
// CHECK: llvm.alloca %{{.+}} x i32
// CHECK: %[[P:.+]] = llvm.mul %{{.+}}, %{{.+}} : i32
// CHECK-NEXT: llvm.add %{{.+}}, %[[P]] : i32
// CHECK: llvm.return
func.func @matmul_small(%arg0: memref<4x8xi32>, %arg1: memref<16x8xi32>, %arg2: memref<4x16xi32>) {
  %0 = bufferization.to_tensor %arg0 restrict : memref<4x8xi32>
  %1 = bufferization.to_tensor %arg1 restrict : memref<16x8xi32>
  %2 = kiln.matmul %0, %1 {transpose_b} : (tensor<4x8xi32>, tensor<16x8xi32>) -> tensor<4x16xi32>
  bufferization.materialize_in_destination %2 in restrict writable %arg2 : (tensor<4x16xi32>, memref<4x16xi32>) -> ()
  return
}

// -----

// Tests that a temporary above the 64 KiB stack limit (the 128 KiB
// transposed rhs) is heap-allocated and freed before the kernel returns.
// CHECK: llvm.func @free(!llvm.ptr)
// CHECK: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func @matmul_large
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) {
// CHECK: %[[BUFFER:.+]] = llvm.call @malloc(%{{.+}}) : (i64) -> !llvm.ptr
// CHECK: llvm.fmul
// CHECK: llvm.call @free(%[[BUFFER]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
func.func @matmul_large(%arg0: memref<2x256xf32>, %arg1: memref<128x256xf32>, %arg2: memref<2x128xf32>) {
  %0 = bufferization.to_tensor %arg0 restrict : memref<2x256xf32>
  %1 = bufferization.to_tensor %arg1 restrict : memref<128x256xf32>
  %2 = kiln.matmul %0, %1 {transpose_b} : (tensor<2x256xf32>, tensor<128x256xf32>) -> tensor<2x128xf32>
  bufferization.materialize_in_destination %2 in restrict writable %arg2 : (tensor<2x128xf32>, memref<2x128xf32>) -> ()
  return
}
