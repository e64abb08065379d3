// RUN: kiln-opt %s --kiln-split-wide-concats | FileCheck %s

// Tests that a concat of 70 inputs becomes concats of 32, 32 and 6 inputs
// concatenated (rows 0-31, 32-63, 64-69), and that one of 3 stays as it is.
// CHECK-LABEL: func @wide
// CHECK: %[[A:.+]] = kiln.concat %arg0, {{.+}}, %arg31 axis = 0 : ({{.+}}) -> tensor<32x2xf32>
// CHECK: %[[B:.+]] = kiln.concat %arg32, {{.+}}, %arg63 axis = 0 : ({{.+}}) -> tensor<32x2xf32>
// CHECK: %[[C:.+]] = kiln.concat %arg64, {{.+}}, %arg69 axis = 0 : ({{.+}}) -> tensor<6x2xf32>
// CHECK: %[[Y:.+]] = kiln.concat %[[A]], %[[B]], %[[C]] axis = 0 : (tensor<32x2xf32>, tensor<32x2xf32>, tensor<6x2xf32>) -> tensor<70x2xf32>
// CHECK: return %[[Y]]
func.func @wide(%a0: tensor<1x2xf32>, %a1: tensor<1x2xf32>, %a2: tensor<1x2xf32>, %a3: tensor<1x2xf32>, %a4: tensor<1x2xf32>, %a5: tensor<1x2xf32>, %a6: tensor<1x2xf32>, %a7: tensor<1x2xf32>, %a8: tensor<1x2xf32>, %a9: tensor<1x2xf32>, %a10: tensor<1x2xf32>, %a11: tensor<1x2xf32>, %a12: tensor<1x2xf32>, %a13: tensor<1x2xf32>, %a14: tensor<1x2xf32>, %a15: tensor<1x2xf32>, %a16: tensor<1x2xf32>, %a17: tensor<1x2xf32>, %a18: tensor<1x2xf32>, %a19: tensor<1x2xf32>, %a20: tensor<1x2xf32>, %a21: tensor<1x2xf32>, %a22: tensor<1x2xf32>, %a23: tensor<1x2xf32>, %a24: tensor<1x2xf32>, %a25: tensor<1x2xf32>, %a26: tensor<1x2xf32>, %a27: tensor<1x2xf32>, %a28: tensor<1x2xf32>, %a29: tensor<1x2xf32>, %a30: tensor<1x2xf32>, %a31: tensor<1x2xf32>, %a32: tensor<1x2xf32>, %a33: tensor<1x2xf32>, %a34: tensor<1x2xf32>, %a35: tensor<1x2xf32>, %a36: tensor<1x2xf32>, %a37: tensor<1x2xf32>, %a38: tensor<1x2xf32>, %a39: tensor<1x2xf32>, %a40: tensor<1x2xf32>, %a41: tensor<1x2xf32>, %a42: tensor<1x2xf32>, %a43: tensor<1x2xf32>, %a44: tensor<1x2xf32>, %a45: tensor<1x2xf32>, %a46: tensor<1x2xf32>, %a47: tensor<1x2xf32>, %a48: tensor<1x2xf32>, %a49: tensor<1x2xf32>, %a50: tensor<1x2xf32>, %a51: tensor<1x2xf32>, %a52: tensor<1x2xf32>, %a53: tensor<1x2xf32>, %a54: tensor<1x2xf32>, %a55: tensor<1x2xf32>, %a56: tensor<1x2xf32>, %a57: tensor<1x2xf32>, %a58: tensor<1x2xf32>, %a59: tensor<1x2xf32>, %a60: tensor<1x2xf32>, %a61: tensor<1x2xf32>, %a62: tensor<1x2xf32>, %a63: tensor<1x2xf32>, %a64: tensor<1x2xf32>, %a65: tensor<1x2xf32>, %a66: tensor<1x2xf32>, %a67: tensor<1x2xf32>, %a68: tensor<1x2xf32>, %a69: tensor<1x2xf32>) -> tensor<70x2xf32> {
  %y = kiln.concat %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7, %a8, %a9, %a10, %a11, %a12, %a13, %a14, %a15, %a16, %a17, %a18, %a19, %a20, %a21, %a22, %a23, %a24, %a25, %a26, %a27, %a28, %a29, %a30, %a31, %a32, %a33, %a34, %a35, %a36, %a37, %a38, %a39, %a40, %a41, %a42, %a43, %a44, %a45, %a46, %a47, %a48, %a49, %a50, %a51, %a52, %a53, %a54, %a55, %a56, %a57, %a58, %a59, %a60, %a61, %a62, %a63, %a64, %a65, %a66, %a67, %a68, %a69 axis = 0 : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<70x2xf32>
  return %y : tensor<70x2xf32>
}

// CHECK-LABEL: func @narrow
// CHECK-NEXT: kiln.concat %arg0, %arg1, %arg2 axis = 1
// CHECK-NEXT: return
func.func @narrow(%a0: tensor<1x2xf32>, %a1: tensor<1x2xf32>, %a2: tensor<1x2xf32>) -> tensor<1x6xf32> {
  %y = kiln.concat %a0, %a1, %a2 axis = 1 : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x6xf32>
  return %y : tensor<1x6xf32>
}
