package grammar

import (
	"slices"
	"strings"
)

// Vocab is a tokenizer's vocabulary as a grammar reads it: each token's
// bytes, in a trie laid out in preorder so that a mask is one pass over
// arrays, skipping every subtree whose prefix the grammar refuses.
type Vocab struct {
	size   int
	pieces []string // by id; "" for tokens a grammar never allows
	stops  []int32  // sorted: allowed where a document is complete
	single [256]int32

	// The trie: node i holds one byte at depth (1-based) depth[i]; skip[i]
	// is the first node after its subtree; the tokens whose bytes end at
	// node i are toks[tok[i]:tok[i+1]].
	nodeByte  []byte
	nodeDepth []uint16
	nodeSkip  []int32
	nodeTok   []int32
	toks      []int32
	maxDepth  int
}

// maxPiece bounds the bytes of a token a grammar considers; longer ones
// (none in real vocabularies) are never allowed.
const maxPiece = 1024

// NewVocab builds the vocabulary of size tokens from piece, the bytes a
// token streams as ("" for control tokens, which a grammar never allows),
// and stops, the tokens that end generation.
func NewVocab(size int, piece func(id int) string, stops []int) *Vocab {
	v := &Vocab{size: size, pieces: make([]string, size)}
	for i := range v.single {
		v.single[i] = -1
	}
	for _, s := range stops {
		if s >= 0 && s < size {
			v.stops = append(v.stops, int32(s))
		}
	}
	slices.Sort(v.stops)
	v.stops = slices.Compact(v.stops)
	ids := make([]int32, 0, size)
	for id := range size {
		p := piece(id)
		if p == "" || len(p) > maxPiece {
			continue
		}
		if _, stop := slices.BinarySearch(v.stops, int32(id)); stop {
			continue
		}
		v.pieces[id] = p
		ids = append(ids, int32(id))
		if len(p) == 1 && v.single[p[0]] < 0 {
			v.single[p[0]] = int32(id)
		}
	}
	slices.SortStableFunc(ids, func(a, b int32) int { return strings.Compare(v.pieces[a], v.pieces[b]) })
	v.buildTrie(ids)
	return v
}

func (v *Vocab) buildTrie(ids []int32) {
	prev := ""
	var open []int32 // nodes whose subtree is not closed yet, by depth
	for _, id := range ids {
		p := v.pieces[id]
		if p != prev || len(v.nodeByte) == 0 {
			lcp := 0
			for lcp < len(p) && lcp < len(prev) && p[lcp] == prev[lcp] {
				lcp++
			}
			for d := lcp + 1; d <= len(p); d++ {
				i := int32(len(v.nodeByte))
				for len(open) >= d {
					v.nodeSkip[open[len(open)-1]] = i
					open = open[:len(open)-1]
				}
				v.nodeByte = append(v.nodeByte, p[d-1])
				v.nodeDepth = append(v.nodeDepth, uint16(d))
				v.nodeSkip = append(v.nodeSkip, 0)
				v.nodeTok = append(v.nodeTok, int32(len(v.toks)))
				open = append(open, i)
			}
			v.maxDepth = max(v.maxDepth, len(p))
			prev = p
		}
		v.toks = append(v.toks, id)
	}
	n := int32(len(v.nodeByte))
	for _, i := range open {
		v.nodeSkip[i] = n
	}
	v.nodeTok = append(v.nodeTok, int32(len(v.toks)))
}

// Size is the number of tokens.
func (v *Vocab) Size() int { return v.size }

// Piece is the bytes of token id as the grammar reads them.
func (v *Vocab) Piece(id int) string {
	if id < 0 || id >= v.size {
		return ""
	}
	return v.pieces[id]
}

func (v *Vocab) isStop(id int) bool {
	_, ok := slices.BinarySearch(v.stops, int32(id))
	return ok
}

func (v *Vocab) words() int { return (v.size + 63) / 64 }

// longest is the length of the longest token that s begins with; 0 if
// none does.
func (v *Vocab) longest(s string) int {
	best := 0
	n := int32(len(v.nodeByte))
	i := int32(0) // the root's first child
	for d := 0; d < len(s); d++ {
		want := uint16(d + 1)
		for i < n && v.nodeDepth[i] == want && v.nodeByte[i] < s[d] {
			i = v.nodeSkip[i]
		}
		if i >= n || v.nodeDepth[i] != want || v.nodeByte[i] != s[d] {
			break
		}
		if v.nodeTok[i] < v.nodeTok[i+1] {
			best = d + 1
		}
		i++ // its first child, if it has one
	}
	return best
}
