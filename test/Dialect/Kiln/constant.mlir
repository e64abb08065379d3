// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that dense, splat and scalar constants of every element kind
// round-trip.
// CHECK-LABEL: func @constants
func.func @constants() {
  // CHECK-NEXT: kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  // CHECK-NEXT: kiln.constant dense<0.000000e+00> : tensor<4x8xbf16>
  // CHECK-NEXT: kiln.constant dense<1.500000e+00> : tensor<f16>
  // CHECK-NEXT: kiln.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi32>
  // CHECK-NEXT: kiln.constant dense<-1> : tensor<3xi64>
  // CHECK-NEXT: kiln.constant dense<[true, false]> : tensor<2xi1>
  %0 = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = kiln.constant dense<0.0> : tensor<4x8xbf16>
  %2 = kiln.constant dense<1.5> : tensor<f16>
  %3 = kiln.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %4 = kiln.constant dense<-1> : tensor<3xi64>
  %5 = kiln.constant dense<[true, false]> : tensor<2xi1>
  return
}

// -----

// Tests that a constant feeds other ops and that an empty tensor is fine.
// CHECK-LABEL: func @uses
func.func @uses(%x: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK-NEXT: %[[C:.+]] = kiln.constant dense<2.000000e+00> : tensor<3xf32>
  // CHECK-NEXT: %[[E:.+]] = kiln.constant dense<> : tensor<0x4xi64>
  // CHECK-NEXT: %[[M:.+]] = kiln.mul %{{.+}}, %[[C]] : tensor<3xf32>
  // CHECK-NEXT: return %[[M]]
  %c = kiln.constant dense<2.0> : tensor<3xf32>
  %e = kiln.constant dense<> : tensor<0x4xi64>
  %m = kiln.mul %x, %c : tensor<3xf32>
  return %m : tensor<3xf32>
}
