//go:build linux && amd64 && !purego

package kernels

import (
	"unsafe"

	"golang.org/x/sys/cpu"
	"golang.org/x/sys/unix"
)

// haveAMX reports whether the amx kernels may run: AMX-TILE and AMX-INT8
// on top of the avx512 kernels, and the kernel's leave to use the tile
// data (arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA, Linux 5.16 and
// later), asked for once at start-up.
var haveAMX = haveAVX512 && cpu.X86.HasAMXTile && cpu.X86.HasAMXInt8 && requestAMX()

func requestAMX() bool {
	const (
		archReqXcompPerm  = 0x1023
		xfeatureXtiledata = 18
	)
	_, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0)
	return e == 0
}

// Implemented in intpack_amx_amd64.s: one packed Q8_0 group of sixteen
// weight rows (w, its quants quant bytes on) against sixteen activation
// rows of nb q8Act blocks from xa, xs bytes apart, with their scales and
// sums per block in tab (amxRows); activation row j's sixteen sums go to
// out + j*ostride bytes, the lanes set in mask only.
//
//go:noescape
func q8_0amx16(w unsafe.Pointer, quant uintptr, xa unsafe.Pointer, xs uintptr, tab unsafe.Pointer, nb int, out *float32, ostride uintptr, mask int, scratch *[2048]byte)
