package kernels

import (
	"fmt"
	"strings"

	"golang.org/x/sys/cpu"
)

// kpath is one set of product kernels. Higher values are faster; every
// path above avx2 also runs the avx2 kernels where it has none of its own,
// but a CPU may have avx512 without avxvnni (runs says which it has).
type kpath uint8

const (
	pathGeneric kpath = iota // pure Go: every CPU, and the reference
	pathAVX2                 // AVX2, FMA and F16C: float and integer-dot assembly
	pathAVXVNNI              // AVX-VNNI (VEX VPDPBUSD on 256 bits): packed Q8_0 products
	pathAVX512               // AVX-512 F, BW, VL and VNNI: 16-row packed integer products
	pathAMX                  // AMX-INT8 beside avx512: Q8_0 products of 16 activation rows at once
)

var pathNames = [...]string{pathGeneric: "generic", pathAVX2: "avx2", pathAVXVNNI: "avxvnni", pathAVX512: "avx512", pathAMX: "amx"}

func (p kpath) String() string { return pathNames[p] }

// runs reports whether this CPU (and build) has the kernels of path p.
func (p kpath) runs() bool {
	switch p {
	case pathGeneric:
		return true
	case pathAVX2:
		return haveAVX2
	case pathAVXVNNI:
		return haveAVXVNNI
	case pathAVX512:
		return haveAVX512
	case pathAMX:
		return haveAMX
	}
	return false
}

// rowAlign is the row count a worker's share of a product is a multiple
// of: the rows of one kernel call (a packed group on avxvnni and avx512).
func (p kpath) rowAlign() int {
	if p >= pathAVXVNNI {
		return packRows
	}
	return 4
}

// best is the fastest path this CPU runs, detected once at start-up and
// never changed: the only package-level dispatch state.
var best = detectPath()

func detectPath() kpath {
	for p := kpath(len(pathNames) - 1); p > pathGeneric; p-- {
		if p.runs() {
			return p
		}
	}
	return pathGeneric
}

// Path is the name of the kernel path the products use by default on this
// CPU: "amx" (the avx512 kernels, and AMX tiles for the Q8_0 products of
// sixteen activation rows and more: prompts, batched decode), "avx512"
// (AVX-512 F/BW/VL/VNNI assembly over weights packed by
// Prepare, on top of the avx2 kernels), "avxvnni" (AVX-VNNI assembly over
// packed Q8_0 weights, on top of the avx2 kernels: Intel cores with
// AVX-VNNI and no AVX-512), "avx2" (AVX2, FMA and F16C assembly) or
// "generic" (pure Go). It is fixed at start-up.
func Path() string { return best.String() }

// Paths lists the kernel paths this CPU can run, fastest first; the last is
// always "generic". NewPoolOpts accepts any of them, so tests and
// operators can force a lower one.
func Paths() []string {
	var out []string
	for p := best; ; p-- {
		if p.runs() {
			out = append(out, p.String())
		}
		if p == pathGeneric {
			return out
		}
	}
}

// parsePath maps a name of Paths (or "" for Path) to its kpath.
func parsePath(name string) (kpath, error) {
	if name == "" {
		return best, nil
	}
	for p := pathGeneric; p <= best; p++ {
		if p.String() == name && p.runs() {
			return p, nil
		}
	}
	for _, n := range pathNames {
		if n == name {
			return 0, fmt.Errorf("kernels: path %q needs CPU features this machine lacks (has %s)", name, strings.Join(Paths(), ", "))
		}
	}
	return 0, fmt.Errorf("kernels: unknown kernel path %q (want one of %s)", name, strings.Join(Paths(), ", "))
}

// CPUFeatures describes the vector features the dispatch looked at, for
// the start-up log and the debug state: e.g. "avx2 fma f16c avx512f
// avx512bw avx512vl avx512vnni amxtile amxint8". The avx512 path needs
// the four AVX-512 ones, the avxvnni path avxvnni (VEX-encoded VPDPBUSD on
// 256-bit registers), the amx path the AMX ones on top of avx512 and the
// kernel's leave to use the tiles (Linux 5.16 and later).
func CPUFeatures() string {
	x := cpu.X86
	var out []string
	for _, f := range []struct {
		name string
		has  bool
	}{
		{"avx2", x.HasAVX2}, {"fma", x.HasFMA}, {"f16c", x.HasF16C},
		{"avxvnni", x.HasAVXVNNI}, {"avx512f", x.HasAVX512F},
		{"avx512bw", x.HasAVX512BW}, {"avx512vl", x.HasAVX512VL}, {"avx512vnni", x.HasAVX512VNNI},
		{"amxtile", x.HasAMXTile}, {"amxint8", x.HasAMXInt8},
	} {
		if f.has {
			out = append(out, f.name)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, " ")
}
