//go:build !linux

package kernels

// allocPacked returns n zeroed bytes for a packed copy, 64-byte aligned,
// from the Go heap (huge pages are advised on Linux only).
func allocPacked(owner *packed, n int) []byte { return heapAligned(n) }
