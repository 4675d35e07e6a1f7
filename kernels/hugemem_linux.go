//go:build linux

package kernels

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on the platforms this
// file builds for.
const hugePage = 2 << 20

// allocPacked returns n zeroed bytes for a packed copy, 64-byte aligned.
// A copy of at least a huge page is mapped outside the Go heap, aligned
// to 2 MiB and advised as huge pages (madvise MADV_HUGEPAGE): a decode
// step streams every packed byte once, and in 4 KiB pages that is a TLB
// miss every 4 KiB (a memory-mapped GGUF, which the row-major kernels
// read, is often backed by large page-cache folios instead). The mapping
// is released when owner, the packed copy, is no longer reachable. A
// smaller copy, or a failed mapping, comes from the Go heap.
func allocPacked(owner *packed, n int) []byte {
	if n < hugePage {
		return heapAligned(n)
	}
	m, err := unix.Mmap(-1, 0, n+hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return heapAligned(n)
	}
	off := int(-uintptrOf(m) & (hugePage - 1))
	b := m[off : off+n : off+n]
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice: without it the pages are 4 KiB
	runtime.AddCleanup(owner, func(m []byte) { _ = unix.Munmap(m) }, m)
	return b
}
