// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck --enable-var-scope %s

// Tests that a grouped, strided, padded convolution is one all-parallel
// generic over the result whose element is a sum over loops of the group's
// channels (3 / 3 = 1) and the kernel (3 x 3): each term reads the input at
// o * stride - pad_low + k (clamped) and the filter at [f, c, k], and
// counts only where every coordinate is inside the input (padding reads 0).
// CHECK-LABEL: func @conv
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x3x5x5xf32>, %[[W:[^:]+]]: tensor<6x1x3x3xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<1x6x3x3xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#{{[^]]+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[INIT]] : tensor<1x6x3x3xf32>)
// CHECK: %[[N:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[F:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[OH:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[OW:.+]] = linalg.index 3 : index
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SUM:.+]] = scf.for %[[C:[a-z0-9_]+]] = %c0{{[_0-9]*}} to %c1{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%{{.+}} = %[[ZERO]]) -> (f32)
// CHECK: scf.for %[[KH:[a-z0-9_]+]] = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// CHECK: scf.for %[[KW:[a-z0-9_]+]] = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.+}}) -> (f32)
// CHECK-DAG: %[[HK:.+]] = arith.muli %[[KH]], %c1{{[_0-9]*}} : index
// CHECK-DAG: %[[HS:.+]] = arith.muli %[[OH]], %c2{{[_0-9]*}} : index
// CHECK-DAG: %[[HP:.+]] = arith.subi %[[HS]], %c1{{[_0-9]*}} : index
// CHECK-DAG: %[[H:.+]] = arith.addi %[[HP]], %[[HK]] : index
// CHECK-DAG: %[[HLT:.+]] = arith.cmpi slt, %[[H]], %c5{{[_0-9]*}} : index
// CHECK-DAG: %[[HGE:.+]] = arith.cmpi sge, %[[H]], %c0{{[_0-9]*}} : index
// CHECK: %[[HIN:.+]] = arith.andi %[[HGE]], %[[HLT]] : i1
// CHECK-NEXT: %[[VH:.+]] = arith.andi %{{.+}}, %[[HIN]] : i1
// CHECK: %[[HMAX:.+]] = arith.maxsi %[[H]], %c0{{[_0-9]*}} : index
// CHECK-NEXT: %[[HC:.+]] = arith.minsi %[[HMAX]], %c4{{[_0-9]*}} : index
// CHECK-DAG: %[[WK:.+]] = arith.muli %[[KW]], %c1{{[_0-9]*}} : index
// CHECK-DAG: %[[WS:.+]] = arith.muli %[[OW]], %c2{{[_0-9]*}} : index
// CHECK-DAG: %[[WP:.+]] = arith.subi %[[WS]], %c1{{[_0-9]*}} : index
// CHECK-DAG: %[[WC0:.+]] = arith.addi %[[WP]], %[[WK]] : index
// CHECK-DAG: %[[WLT:.+]] = arith.cmpi slt, %[[WC0]], %c5{{[_0-9]*}} : index
// CHECK-DAG: %[[WGE:.+]] = arith.cmpi sge, %[[WC0]], %c0{{[_0-9]*}} : index
// CHECK: %[[WIN:.+]] = arith.andi %[[WGE]], %[[WLT]] : i1
// CHECK-NEXT: %[[VALID:.+]] = arith.andi %[[VH]], %[[WIN]] : i1
// CHECK: %[[WMAX:.+]] = arith.maxsi %[[WC0]], %c0{{[_0-9]*}} : index
// CHECK-NEXT: %[[WC:.+]] = arith.minsi %[[WMAX]], %c4{{[_0-9]*}} : index
// CHECK: %[[XV:.+]] = tensor.extract %[[X]][%[[N]], %{{.+}}, %[[HC]], %[[WC]]] : tensor<1x3x5x5xf32>
// CHECK-NEXT: %[[WV:.+]] = tensor.extract %[[W]][%[[F]], %[[C]], %[[KH]], %[[KW]]] : tensor<6x1x3x3xf32>
// CHECK-NEXT: %[[P:.+]] = arith.mulf %[[XV]], %[[WV]] : f32
// CHECK: %[[T:.+]] = arith.select %[[VALID]], %[[P]], %{{.+}} : f32
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[ACC]], %[[T]] : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK: linalg.yield %[[SUM]] : f32
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @conv(%x: tensor<1x3x5x5xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %0 = kiln.conv %x, %w strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {groups = 3 : i64}
      : (tensor<1x3x5x5xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x3x3xf32>
  return %0 : tensor<1x6x3x3xf32>
}

// -----

// Tests that the input channel of a grouped convolution is the group of the
// output feature (f / features per group) times the channels per group, plus
// the channel loop's index.
// CHECK-LABEL: func @conv_group_channel
// CHECK: %[[F:.+]] = linalg.index 1 : index
// CHECK: scf.for %[[C:[a-z0-9_]+]] = %c0{{[_0-9]*}} to %c2{{[_0-9]*}} step
// CHECK: %[[G:.+]] = arith.divsi %[[F]], %c3{{[_0-9]*}} : index
// CHECK: %[[BASE:.+]] = arith.muli %[[G]], %c2{{[_0-9]*}} : index
// CHECK: %[[CH:.+]] = arith.addi %[[BASE]], %[[C]] : index
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %[[CH]], %{{.+}}] : tensor<1x4x6xf32>
func.func @conv_group_channel(%x: tensor<1x4x6xf32>, %w: tensor<6x2x1xf32>) -> tensor<1x6x6xf32> {
  %0 = kiln.conv %x, %w strides [1] dilations [1] pad_low [0] pad_high [0] {groups = 2 : i64}
      : (tensor<1x4x6xf32>, tensor<6x2x1xf32>) -> tensor<1x6x6xf32>
  return %0 : tensor<1x6x6xf32>
}

// -----

// Tests that an f16 convolution (1-D, dilation 2) accumulates in f32: the
// loops carry an f32 sum of widened products, rounded to f16 once.
// CHECK-LABEL: func @conv_f16
// CHECK: linalg.generic {indexing_maps = [#{{[^]]+}}], iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.+}} : tensor<2x4x4xf16>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SUM:.+]] = scf.for %{{.+}} = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%{{.+}} = %[[ZERO]]) -> (f32)
// CHECK: scf.for %[[K:[a-z0-9_]+]] = %c0{{[_0-9]*}} to %c2{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%{{.+}}) -> (f32)
// CHECK: arith.muli %[[K]], %c2{{[_0-9]*}} : index
// CHECK: %[[XV:.+]] = tensor.extract %{{.+}} : tensor<2x3x8xf16>
// CHECK-NEXT: %[[WV:.+]] = tensor.extract %{{.+}} : tensor<4x3x2xf16>
// CHECK-DAG: %[[XW:.+]] = arith.extf %[[XV]] : f16 to f32
// CHECK-DAG: %[[WW:.+]] = arith.extf %[[WV]] : f16 to f32
// CHECK: arith.mulf %[[XW]], %[[WW]] : f32
// CHECK: %[[Y:.+]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[Y]] : f16
func.func @conv_f16(%x: tensor<2x3x8xf16>, %w: tensor<4x3x2xf16>) -> tensor<2x4x4xf16> {
  %0 = kiln.conv %x, %w strides [2] dilations [2] pad_low [1] pad_high [0]
      : (tensor<2x3x8xf16>, tensor<4x3x2xf16>) -> tensor<2x4x4xf16>
  return %0 : tensor<2x4x4xf16>
}

// -----

// Tests that the data gradient is a generic over the input's shape that
// loops over the group's features (4) and the kernel (3 x 3), and reads the
// output position each window offset covers, p + pad_low - k * dilation
// divided by the stride, only where that divides exactly, is not negative
// and lies in the output; the filter is read at [feature, c mod 2, k].
// CHECK-LABEL: func @conv_backward_data
// CHECK-SAME: (%[[DY:[^:]+]]: tensor<1x4x3x3xf32>, %[[W:[^:]+]]: tensor<4x2x3x3xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<1x2x7x7xf32>
// CHECK: linalg.generic {indexing_maps = [#{{[^]]+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[INIT]] : tensor<1x2x7x7xf32>)
// CHECK: %[[N:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[CI:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[PH:.+]] = linalg.index 2 : index
// CHECK: scf.for %{{.+}} = %c0{{[_0-9]*}} to %c4{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// CHECK: scf.for %[[KH:[a-z0-9_]+]] = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// CHECK: scf.for %[[KW:[a-z0-9_]+]] = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.+}}) -> (f32)
// CHECK: %[[FEATURE:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK: %[[HK:.+]] = arith.muli %[[KH]], %c1{{[_0-9]*}} : index
// CHECK: %[[HP:.+]] = arith.addi %[[PH]], %c0{{[_0-9]*}} : index
// CHECK-NEXT: %[[HN:.+]] = arith.subi %[[HP]], %[[HK]] : index
// CHECK: %[[HREM:.+]] = arith.remsi %[[HN]], %c2{{[_0-9]*}} : index
// CHECK-NEXT: %[[HDIV:.+]] = arith.cmpi eq, %[[HREM]], %c0{{[_0-9]*}} : index
// CHECK: %[[HO:.+]] = arith.divsi %[[HN]], %c2{{[_0-9]*}} : index
// CHECK-DAG: %[[HLT:.+]] = arith.cmpi slt, %[[HO]], %c3{{[_0-9]*}} : index
// CHECK-DAG: %[[HGE:.+]] = arith.cmpi sge, %[[HO]], %c0{{[_0-9]*}} : index
// CHECK: %[[HIN:.+]] = arith.andi %[[HGE]], %[[HLT]] : i1
// CHECK: %[[HNN:.+]] = arith.cmpi sge, %[[HN]], %c0{{[_0-9]*}} : index
// CHECK-NEXT: %[[HOK0:.+]] = arith.andi %[[HNN]], %[[HDIV]] : i1
// CHECK-NEXT: %[[HOK:.+]] = arith.andi %[[HOK0]], %[[HIN]] : i1
// CHECK: %[[HMAX:.+]] = arith.maxsi %[[HO]], %c0{{[_0-9]*}} : index
// CHECK-NEXT: %[[HC:.+]] = arith.minsi %[[HMAX]], %c2{{[_0-9]*}} : index
// CHECK: %[[VH:.+]] = arith.andi %{{.+}}, %[[HOK]] : i1
// CHECK: %[[VALID:.+]] = arith.andi %[[VH]], %{{.+}} : i1
// CHECK: %[[CM:.+]] = arith.remsi %[[CI]], %c2{{[_0-9]*}} : index
// CHECK: %[[GV:.+]] = tensor.extract %[[DY]][%[[N]], %[[FEATURE]], %[[HC]], %{{.+}}] : tensor<1x4x3x3xf32>
// CHECK-NEXT: %[[WV:.+]] = tensor.extract %[[W]][%[[FEATURE]], %[[CM]], %[[KH]], %[[KW]]] : tensor<4x2x3x3xf32>
// CHECK-NEXT: %[[P:.+]] = arith.mulf %[[GV]], %[[WV]] : f32
// CHECK: %[[T:.+]] = arith.select %[[VALID]], %[[P]], %{{.+}} : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[T]] : f32
// CHECK-NOT: kiln.
func.func @conv_backward_data(%dy: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32> {
  %0 = kiln.conv_backward_data %dy, %w strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32>
  return %0 : tensor<1x2x7x7xf32>
}

// -----

// Tests that the filter gradient is a generic over the filter's shape whose
// loops are the gradient's batch (2) and output positions (3), not the
// kernel: each term is x at o * stride - pad_low + k times dy at [n, f, o];
// every window ends inside x ((3 - 1) * 2 + 2 < 7), so the reads are
// neither checked nor clamped.
// CHECK-LABEL: func @conv_backward_filter
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x2x7xf32>, %[[DY:[^:]+]]: tensor<2x4x3xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#{{[^]]+}}], iterator_types = ["parallel", "parallel", "parallel"]} outs(%[[INIT]] : tensor<4x2x3xf32>)
// CHECK: %[[F:.+]] = linalg.index 0 : index
// CHECK-NEXT: %{{.+}} = linalg.index 1 : index
// CHECK-NEXT: %[[K:.+]] = linalg.index 2 : index
// CHECK: scf.for %[[B:[a-z0-9_]+]] = %c0{{[_0-9]*}} to %c2{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// CHECK: scf.for %[[O:[a-z0-9_]+]] = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.+}}) -> (f32)
// CHECK-NOT: scf.for
// CHECK-DAG: %[[KD:.+]] = arith.muli %[[K]], %c1{{[_0-9]*}} : index
// CHECK-DAG: %[[OS:.+]] = arith.muli %[[O]], %c2{{[_0-9]*}} : index
// CHECK-DAG: %[[OP:.+]] = arith.subi %[[OS]], %c0{{[_0-9]*}} : index
// CHECK-DAG: %[[POS:.+]] = arith.addi %[[OP]], %[[KD]] : index
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.minsi
// CHECK: %[[XV:.+]] = tensor.extract %[[X]][%[[B]], %{{.+}}, %[[POS]]] : tensor<2x2x7xf32>
// CHECK-NEXT: %[[GV:.+]] = tensor.extract %[[DY]][%[[B]], %[[F]], %[[O]]] : tensor<2x4x3xf32>
// CHECK-NEXT: %[[P:.+]] = arith.mulf %[[XV]], %[[GV]] : f32
// CHECK: %[[T:.+]] = arith.select %{{.+}}, %[[P]], %{{.+}} : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[T]] : f32
// CHECK-NOT: kiln.
func.func @conv_backward_filter(%x: tensor<2x2x7xf32>, %dy: tensor<2x4x3xf32>) -> tensor<4x2x3xf32> {
  %0 = kiln.conv_backward_filter %x, %dy strides [2] dilations [1] pad_low [0] pad_high [0]
      : (tensor<2x2x7xf32>, tensor<2x4x3xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// Tests that max pooling starts each window at -inf, loops over the kernel
// (2 x 3), takes maximumf (NaN wins) of what it reads, and keeps the running
// maximum where the window is outside the input (padding never wins).
// CHECK-LABEL: func @max_pool
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x2x5x5xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<1x2x3x3xf32>
// CHECK: linalg.generic {indexing_maps = [#{{[^]]+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[INIT]] : tensor<1x2x3x3xf32>)
// CHECK: %[[N:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[C:.+]] = linalg.index 1 : index
// CHECK: %[[LOWEST:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAX:.+]] = scf.for %{{.+}} = %c0{{[_0-9]*}} to %c2{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%{{.+}} = %[[LOWEST]]) -> (f32)
// CHECK: scf.for %{{.+}} = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.+}}) -> (f32)
// CHECK: %[[HIN:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK-NEXT: %[[VH:.+]] = arith.andi %{{.+}}, %[[HIN]] : i1
// CHECK: %[[WIN:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK-NEXT: %[[VALID:.+]] = arith.andi %[[VH]], %[[WIN]] : i1
// CHECK: %[[XV:.+]] = tensor.extract %[[X]][%[[N]], %[[C]], %{{.+}}, %{{.+}}] : tensor<1x2x5x5xf32>
// CHECK-NEXT: %[[M:.+]] = arith.maximumf %[[ACC]], %[[XV]] : f32
// CHECK-NEXT: %[[NEXT:.+]] = arith.select %[[VALID]], %[[M]], %[[ACC]] : f32
// CHECK-NEXT: scf.yield %[[NEXT]] : f32
// CHECK: linalg.yield %[[MAX]] : f32
// CHECK-NOT: kiln.
func.func @max_pool(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %0 = kiln.max_pool %x kernel [2, 3] strides [2, 2] dilations [1, 1] pad_low [0, 1] pad_high [0, 1] {ceil_mode}
      : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Tests that a dilated max pool steps through the input by the dilation; its
// windows all end inside the input ((5 - 1) * 1 + 2 * 2 < 9), so no read is
// checked or clamped.
// CHECK-LABEL: func @max_pool_dilated
// CHECK: scf.for %[[K:[a-z0-9_]+]] = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}}
// CHECK: arith.muli %[[K]], %c2{{[_0-9]*}} : index
// CHECK-NOT: arith.cmpi slt, %{{.+}}, %c9{{[_0-9]*}} : index
// CHECK-NOT: arith.minsi
// CHECK: linalg.yield
func.func @max_pool_dilated(%x: tensor<1x1x9xbf16>) -> tensor<1x1x5xbf16> {
  %0 = kiln.max_pool %x kernel [3] strides [1] dilations [2] pad_low [0] pad_high [0]
      : tensor<1x1x9xbf16> -> tensor<1x1x5xbf16>
  return %0 : tensor<1x1x5xbf16>
}

// -----

// Tests that average pooling loops over the kernel, counts what it reads
// only inside the input, and divides by the window's extent clipped to the
// padded input (PyTorch's count_include_pad): min(start + 3, 5 + 1) - start.
// CHECK-LABEL: func @avg_pool
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x1x5xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{[^]]+}}], iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.+}} : tensor<1x1x3xf32>)
// CHECK: %[[O:.+]] = linalg.index 2 : index
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SUM:.+]] = scf.for %{{.+}} = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%[[ACC:[a-z0-9_]+]] = %[[ZERO]]) -> (f32)
// CHECK: %[[IN:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK-NEXT: %[[VALID:.+]] = arith.andi %{{.+}}, %[[IN]] : i1
// CHECK: %[[XV:.+]] = tensor.extract %[[X]]
// CHECK: %[[OS:.+]] = arith.muli %[[O]], %c2{{[_0-9]*}} : index
// CHECK-NEXT: %[[START:.+]] = arith.subi %[[OS]], %c1{{[_0-9]*}} : index
// CHECK: %[[REACH:.+]] = arith.addi %[[START]], %c3{{[_0-9]*}} : index
// CHECK-NEXT: %[[END:.+]] = arith.minsi %[[REACH]], %c6{{[_0-9]*}} : index
// CHECK-NEXT: %[[PADDED:.+]] = arith.subi %[[END]], %[[START]] : index
// CHECK: %[[COUNT:.+]] = arith.muli %c1{{[_0-9]*}}, %[[PADDED]] : index
// CHECK-NEXT: %[[COUNT64:.+]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK-NEXT: %[[DIVISOR:.+]] = arith.sitofp %[[COUNT64]] : i64 to f32
// CHECK: arith.divf %{{.+}}, %[[DIVISOR]] : f32
// CHECK: %[[T:.+]] = arith.select %[[VALID]], %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[T]] : f32
// CHECK-NOT: kiln.
func.func @avg_pool(%x: tensor<1x1x5xf32>) -> tensor<1x1x3xf32> {
  %0 = kiln.avg_pool %x kernel [3] strides [2] dilations [1] pad_low [1] pad_high [1]
      : tensor<1x1x5xf32> -> tensor<1x1x3xf32>
  return %0 : tensor<1x1x3xf32>
}

// -----

// Tests that with exclude_pad the divisor is the window's extent clipped to
// the input: min(end, 5) - max(start, 0).
// CHECK-LABEL: func @avg_pool_exclude_pad
// CHECK: %[[O:.+]] = linalg.index 2 : index
// CHECK: scf.for %{{.+}} = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}}
// CHECK: tensor.extract %{{.+}} : tensor<1x1x5xf32>
// CHECK: %[[OS:.+]] = arith.muli %[[O]], %c2{{[_0-9]*}} : index
// CHECK-NEXT: %[[START:.+]] = arith.subi %[[OS]], %c1{{[_0-9]*}} : index
// CHECK: %[[END:.+]] = arith.minsi %{{.+}}, %c6{{[_0-9]*}} : index
// CHECK-DAG: %[[LOW:.+]] = arith.maxsi %[[START]], %c0{{[_0-9]*}} : index
// CHECK-DAG: %[[HIGH:.+]] = arith.minsi %[[END]], %c5{{[_0-9]*}} : index
// CHECK: %[[INSIDE:.+]] = arith.subi %[[HIGH]], %[[LOW]] : index
// CHECK-NEXT: %[[COUNT:.+]] = arith.muli %c1{{[_0-9]*}}, %[[INSIDE]] : index
// CHECK-NEXT: %[[COUNT64:.+]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK-NEXT: %[[DIVISOR:.+]] = arith.sitofp %[[COUNT64]] : i64 to f32
// CHECK: arith.divf %{{.+}}, %[[DIVISOR]] : f32
func.func @avg_pool_exclude_pad(%x: tensor<1x1x5xf32>) -> tensor<1x1x3xf32> {
  %0 = kiln.avg_pool %x kernel [3] strides [2] dilations [1] pad_low [1] pad_high [1] {exclude_pad}
      : tensor<1x1x5xf32> -> tensor<1x1x3xf32>
  return %0 : tensor<1x1x3xf32>
}

// -----

// Tests that max_pool_indices carries the best value (from -inf) and its
// flat offset in the spatial plane (from -1) through the kernel loops, takes
// a position where it is greater, NaN, or the first inside the input, and
// returns the offset as i32. Its 2x2 windows of stride 2 never leave the
// 4x4 input: coordinates are neither checked nor clamped.
// CHECK-LABEL: func @max_pool_indices
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x1x4x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{[^]]+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%{{.+}} : tensor<1x1x2x2xi32>)
// CHECK: %[[LOWEST:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[NONE:.+]] = arith.constant -1 : index
// CHECK: %[[FOUND:.+]]:2 = scf.for %{{.+}} = %c0{{[_0-9]*}} to %c2{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%{{.+}} = %[[LOWEST]], %{{.+}} = %[[NONE]]) -> (f32, index)
// CHECK: scf.for %{{.+}} = %c0{{[_0-9]*}} to %c2{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%[[BEST:[a-z0-9_]+]] = %{{.+}}, %[[AT:[a-z0-9_]+]] = %{{.+}}) -> (f32, index)
// CHECK-NOT: arith.minsi
// CHECK: %[[HP:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK: %[[WP:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK: %[[ROW:.+]] = arith.addi %{{.+}}, %[[HP]] : index
// CHECK: %[[ROWS:.+]] = arith.muli %[[ROW]], %c4{{[_0-9]*}} : index
// CHECK-NEXT: %[[FLAT:.+]] = arith.addi %[[ROWS]], %[[WP]] : index
// CHECK: %[[XV:.+]] = tensor.extract %[[X]]
// CHECK-DAG: %[[NAN:.+]] = arith.cmpf uno, %[[XV]], %[[XV]] : f32
// CHECK-DAG: %[[GREATER:.+]] = arith.cmpf ogt, %[[XV]], %[[BEST]] : f32
// CHECK: %[[BETTER:.+]] = arith.ori %[[GREATER]], %[[NAN]] : i1
// CHECK: %[[FIRST:.+]] = arith.cmpi slt, %[[AT]], %c0{{[_0-9]*}} : index
// CHECK-NEXT: %[[EITHER:.+]] = arith.ori %[[BETTER]], %[[FIRST]] : i1
// CHECK-NEXT: %[[TAKE:.+]] = arith.andi %{{.+}}, %[[EITHER]] : i1
// CHECK-NEXT: %[[V:.+]] = arith.select %[[TAKE]], %[[XV]], %[[BEST]] : f32
// CHECK-NEXT: %[[I:.+]] = arith.select %[[TAKE]], %[[FLAT]], %[[AT]] : index
// CHECK-NEXT: scf.yield %[[V]], %[[I]] : f32, index
// CHECK: %[[OFFSET:.+]] = arith.index_cast %[[FOUND]]#1 : index to i32
// CHECK-NEXT: linalg.yield %[[OFFSET]] : i32
func.func @max_pool_indices(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xi32> {
  %0 = kiln.max_pool_indices %x kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xi32>
  return %0 : tensor<1x1x2x2xi32>
}

// -----

// Tests that max_pool_grad gives each input position the gradients of the
// windows covering it (loops over the kernel, 3) whose recorded maximum is
// this position's flat offset.
// CHECK-LABEL: func @max_pool_grad
// CHECK-SAME: (%[[DY:[^:]+]]: tensor<1x1x2xf32>, %[[IDX:[^:]+]]: tensor<1x1x2xi32>)
// CHECK: linalg.generic {indexing_maps = [#{{[^]]+}}], iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.+}} : tensor<1x1x5xf32>)
// CHECK: %[[N:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[C:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[P:.+]] = linalg.index 2 : index
// CHECK: scf.for %[[K:[a-z0-9_]+]] = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.+}}) -> (f32)
// CHECK: %[[PF:.+]] = arith.addi %{{.+}}, %[[P]] : index
// CHECK-NEXT: %[[SELF:.+]] = arith.index_cast %[[PF]] : index to i32
// CHECK: %[[KD:.+]] = arith.muli %[[K]], %c1{{[_0-9]*}} : index
// CHECK: %[[NUM:.+]] = arith.subi %{{.+}}, %[[KD]] : index
// CHECK: arith.remsi %[[NUM]], %c2{{[_0-9]*}} : index
// CHECK: %[[O:.+]] = arith.divsi %[[NUM]], %c2{{[_0-9]*}} : index
// CHECK: %[[OMAX:.+]] = arith.maxsi %[[O]], %c0{{[_0-9]*}} : index
// CHECK-NEXT: %[[OC:.+]] = arith.minsi %[[OMAX]], %c1{{[_0-9]*}} : index
// CHECK-NEXT: %[[VALID:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK: %[[ARGMAX:.+]] = tensor.extract %[[IDX]][%[[N]], %[[C]], %[[OC]]] : tensor<1x1x2xi32>
// CHECK-NEXT: %[[HIT:.+]] = arith.cmpi eq, %[[ARGMAX]], %[[SELF]] : i32
// CHECK-NEXT: %[[G:.+]] = tensor.extract %[[DY]][%[[N]], %[[C]], %[[OC]]] : tensor<1x1x2xf32>
// CHECK-NEXT: %[[TAKE:.+]] = arith.andi %[[VALID]], %[[HIT]] : i1
// CHECK: %[[T:.+]] = arith.select %[[TAKE]], %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[T]] : f32
// CHECK-NOT: kiln.
func.func @max_pool_grad(%dy: tensor<1x1x2xf32>, %i: tensor<1x1x2xi32>) -> tensor<1x1x5xf32> {
  %0 = kiln.max_pool_grad %dy, %i kernel [3] strides [2] dilations [1] pad_low [0] pad_high [0]
      : (tensor<1x1x2xf32>, tensor<1x1x2xi32>) -> tensor<1x1x5xf32>
  return %0 : tensor<1x1x5xf32>
}

// -----

// Tests that avg_pool_grad gives each input position the gradients of the
// windows covering it (loops over the kernel, 3), each divided by its
// window's divisor, where a window covers it.
// CHECK-LABEL: func @avg_pool_grad
// CHECK-SAME: (%[[DY:[^:]+]]: tensor<1x1x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{[^]]+}}], iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.+}} : tensor<1x1x5xf32>)
// CHECK: scf.for %{{.+}} = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args(%[[ACC:[a-z0-9_]+]] = %{{.+}}) -> (f32)
// CHECK: arith.remsi %{{.+}}, %c2{{[_0-9]*}} : index
// CHECK: %[[OMAX:.+]] = arith.maxsi %{{.+}}, %c0{{[_0-9]*}} : index
// CHECK-NEXT: %[[OC:.+]] = arith.minsi %[[OMAX]], %c2{{[_0-9]*}} : index
// CHECK-NEXT: %[[VALID:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK: %[[G:.+]] = tensor.extract %[[DY]][%{{.+}}, %{{.+}}, %[[OC]]] : tensor<1x1x3xf32>
// CHECK: %[[OS:.+]] = arith.muli %[[OC]], %c2{{[_0-9]*}} : index
// CHECK: %[[DIVISOR:.+]] = arith.sitofp %{{.+}} : i64 to f32
// CHECK-NEXT: %[[SHARE:.+]] = arith.divf %[[G]], %[[DIVISOR]] : f32
// CHECK: %[[T:.+]] = arith.select %[[VALID]], %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[T]] : f32
// CHECK-NOT: kiln.
func.func @avg_pool_grad(%dy: tensor<1x1x3xf32>) -> tensor<1x1x5xf32> {
  %0 = kiln.avg_pool_grad %dy kernel [3] strides [2] dilations [1] pad_low [1] pad_high [1]
      : tensor<1x1x3xf32> -> tensor<1x1x5xf32>
  return %0 : tensor<1x1x5xf32>
}

// -----

// Tests that a max_pool_grad of windows that do not overlap (2, stride 2)
// reads the one window covering each position, (p + pad_low) / 2, without a
// loop over the kernel: its gradient where its maximum is this position,
// else 0. Position 4 of 5 lies in no window (2 windows end at 4).
// CHECK-LABEL: func @max_pool_grad_disjoint
// CHECK-SAME: (%[[DY:[^:]+]]: tensor<1x1x2xf32>, %[[IDX:[^:]+]]: tensor<1x1x2xi32>)
// CHECK: linalg.generic {indexing_maps = [#{{[^]]+}}], iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.+}} : tensor<1x1x5xf32>)
// CHECK-NOT: scf.for
// CHECK: %[[P:.+]] = linalg.index 2 : index
// CHECK: %[[SHIFTED:.+]] = arith.addi %[[P]], %c0{{[_0-9]*}} : index
// CHECK: %[[O:.+]] = arith.divsi %[[SHIFTED]], %c2{{[_0-9]*}} : index
// CHECK-NOT: arith.remsi
// CHECK: %[[INSIDE:.+]] = arith.cmpi slt, %[[O]], %c2{{[_0-9]*}} : index
// CHECK: %[[OC:.+]] = arith.minsi %{{.+}}, %c1{{[_0-9]*}} : index
// CHECK: %[[ARGMAX:.+]] = tensor.extract %[[IDX]][%{{.+}}, %{{.+}}, %[[OC]]] : tensor<1x1x2xi32>
// CHECK-NEXT: %[[G:.+]] = tensor.extract %[[DY]][%{{.+}}, %{{.+}}, %[[OC]]] : tensor<1x1x2xf32>
// CHECK-NEXT: %[[SAME:.+]] = arith.cmpi eq, %[[ARGMAX]], %{{.+}} : i32
// CHECK-NEXT: %[[HIT:.+]] = arith.andi %{{.+}}, %[[SAME]] : i1
// CHECK: %[[R:.+]] = arith.select %[[HIT]], %[[G]], %{{.+}} : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @max_pool_grad_disjoint(%dy: tensor<1x1x2xf32>, %i: tensor<1x1x2xi32>) -> tensor<1x1x5xf32> {
  %0 = kiln.max_pool_grad %dy, %i kernel [2] strides [2] dilations [1] pad_low [0] pad_high [0]
      : (tensor<1x1x2xf32>, tensor<1x1x2xi32>) -> tensor<1x1x5xf32>
  return %0 : tensor<1x1x5xf32>
}

// -----

// Tests that a max_pool_grad whose windows tile the input exactly (2x2,
// stride 2, over 4x6) loops over window positions (o1, o2) and offsets
// (k1, k2): dy and the argmax read at [n, c, o1, o2], dx written at
// [n, c, 2 o1 + k1, 2 o2 + k2], the offsets' bounds from a splat constant of
// the window's shape; no division, and each position's flat offset
// (2 o1 + k1) * 6 + 2 o2 + k2 compared with the argmax.
// CHECK-DAG: #[[$WINDOW:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$OFFSET:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
// CHECK-LABEL: func @max_pool_grad_tiled
// CHECK-SAME: (%[[DY:[^:]+]]: tensor<1x2x2x3xf32>, %[[IDX:[^:]+]]: tensor<1x2x2x3xi32>)
// CHECK: %[[SHAPE:.+]] = arith.constant dense<0> : tensor<2x2xi8>
// CHECK: linalg.generic {indexing_maps = [#[[$WINDOW]], #[[$WINDOW]], #[[$OFFSET]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[DY]], %[[IDX]], %[[SHAPE]] : {{.+}}) outs(%{{.+}} : tensor<1x2x4x6xf32>)
// CHECK-NEXT: ^bb0(%[[G:[^:]+]]: f32, %[[ARGMAX:[^:]+]]: i32, %{{[^:]+}}: i8, %{{[^:]+}}: f32):
// CHECK-NOT: arith.divsi
// CHECK-NOT: arith.remsi
// CHECK: %[[K1:.+]] = linalg.index 4 : index
// CHECK: %[[O1:.+]] = linalg.index 2 : index
// CHECK: arith.muli %[[O1]], %c2{{[_0-9]*}} : index
// CHECK: %[[K2:.+]] = linalg.index 5 : index
// CHECK: %[[O2:.+]] = linalg.index 3 : index
// CHECK: arith.muli %{{.+}}, %c6{{[_0-9]*}} : index
// CHECK-NEXT: %[[FLAT:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK-NEXT: %[[SELF:.+]] = arith.index_cast %[[FLAT]] : index to i32
// CHECK-NEXT: %[[HIT:.+]] = arith.cmpi eq, %[[ARGMAX]], %[[SELF]] : i32
// CHECK: %[[R:.+]] = arith.select %[[HIT]], %[[G]], %{{.+}} : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NOT: kiln.
func.func @max_pool_grad_tiled(%dy: tensor<1x2x2x3xf32>, %i: tensor<1x2x2x3xi32>) -> tensor<1x2x4x6xf32> {
  %0 = kiln.max_pool_grad %dy, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xi32>) -> tensor<1x2x4x6xf32>
  return %0 : tensor<1x2x4x6xf32>
}
