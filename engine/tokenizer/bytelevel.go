package tokenizer

import "unicode/utf8"

// Byte-level BPE (GPT-2 and its descendants) works on a string in which every
// byte of the UTF-8 input is replaced by one printable code point: printable
// Latin-1 bytes stand for themselves and the others are shifted to U+0100 and
// up, in byte order. The vocabulary and merges are written in that alphabet.

// byteRune is the code point standing for each byte.
var byteRune = func() (m [256]rune) {
	n := 0
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			m[b] = rune(b)
			continue
		}
		m[b] = rune(256 + n)
		n++
	}
	return m
}()

// runeByte inverts byteRune: runeByte[r] is the byte plus one for the code
// points byteRune produces, zero for the others.
var runeByte = func() (m [512]uint16) {
	for b, r := range byteRune {
		m[r] = uint16(b) + 1
	}
	return m
}()

// appendByteLevel appends the byte-level spelling of s.
func appendByteLevel(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		dst = utf8.AppendRune(dst, byteRune[s[i]])
	}
	return dst
}

// byteLevelDecode turns a vocabulary piece back into the bytes it stands
// for. A piece holding any code point outside the byte alphabet is returned
// as it is, which is what Hugging Face's ByteLevel decoder does.
func byteLevelDecode(piece string) string {
	out := make([]byte, 0, len(piece))
	for _, r := range piece {
		if r < 0 || int(r) >= len(runeByte) || runeByte[r] == 0 {
			return piece
		}
		out = append(out, byte(runeByte[r]-1))
	}
	return string(out)
}
