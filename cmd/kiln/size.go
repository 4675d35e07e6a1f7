package main

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// byteSize is a flag value in bytes: a whole number of bytes, or a
// number with a unit, decimal (kB, MB, GB, TB: powers of 1000) or binary
// (KiB, MiB, GiB, TiB: powers of 1024), any case, with or without a space:
// 512MiB, 1.5GB, 2 GiB, 4096. A bare k, M or G is refused: tools disagree
// on whether it means 1000 or 1024.
type byteSize int64

func (s *byteSize) String() string { return strconv.FormatInt(int64(*s), 10) }

func (s *byteSize) Set(v string) error {
	n, err := parseByteSize(v)
	if err != nil {
		return err
	}
	*s = byteSize(n)
	return nil
}

// sizeUnits are the units parseByteSize takes, lower case.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

var errSize = errors.New("not a size: write bytes (4096) or a number with a unit, B, kB, MB, GB, TB, KiB, MiB, GiB or TiB (512MiB, 1.5GB)")

// parseByteSize reads a size as byteSize documents it. The value is exact:
// a fraction must come to whole bytes (1.5KiB is 1536; 0.5B is refused).
func parseByteSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	mult, ok := sizeUnits[unit]
	whole, frac, _ := strings.Cut(num, ".")
	if !ok || whole == "" || strings.Contains(frac, ".") || (strings.Contains(num, ".") && frac == "") {
		return 0, fmt.Errorf("%q is %w", v, errSize)
	}
	// (whole*10^len(frac) + frac) * mult / 10^len(frac), exactly.
	n, ok := new(big.Int).SetString(whole+frac, 10)
	if !ok {
		return 0, fmt.Errorf("%q is %w", v, errSize)
	}
	n.Mul(n, big.NewInt(mult))
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	q, r := new(big.Int).QuoRem(n, scale, new(big.Int))
	if r.Sign() != 0 {
		return 0, fmt.Errorf("%q is not a whole number of bytes", v)
	}
	if !q.IsInt64() {
		return 0, fmt.Errorf("%q is more bytes than fit in 64 bits", v)
	}
	return q.Int64(), nil
}
