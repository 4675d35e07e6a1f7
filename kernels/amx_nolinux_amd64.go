//go:build !linux && amd64 && !purego

package kernels

import "unsafe"

// haveAMX is false: the tile data needs the kernel's leave, asked for on
// Linux only.
const haveAMX = false

func q8_0amx16(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, tab unsafe.Pointer, nb int, out *float32, ostride uintptr, mask int, scratch *[2048]byte) {
	panic("kernels: no AMX on this platform")
}
