package llama

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kiln-ai/kiln/internal/testshared"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/kernels"
)

// prefixTestConfig is a small shape with a context of several blocks.
func prefixTestConfig() Config {
	return Config{Arch: "llama", Dim: 64, HiddenDim: 96, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 40, SeqLen: 400}
}

// prefixHybridConfig is a Qwen3.5 hybrid of prefixTestConfig's size: a
// Gated DeltaNet layer, then a gated attention layer, twice.
func prefixHybridConfig() Config {
	c := prefixTestConfig()
	c.Arch, c.Rope, c.QKNorm, c.HeadSize, c.RotaryDim, c.AttnGate = "qwen35", RopeNeoX, true, 16, 8, true
	c.FullAttnInterval, c.Layers = 2, 4
	c.Linear = LinearShape{KeyHeads: 2, ValueHeads: 4, KeyDim: 16, ValueDim: 16, ConvKernel: 4, Tiled: true}
	return c
}

var baseKey = PrefixKey{Adapter: "base", Revision: "base"}

// feed prefills tokens into slot from position pos in chunks of the given
// sizes (cycled), then decodes gen greedy tokens, and returns the logits
// after the prompt and after each decoded token, and the decoded tokens.
func feed(s *State, slot, pos int, tokens []int, chunks []int, gen int) ([][]float32, []int) {
	return feedForced(s, slot, pos, tokens, chunks, gen, nil)
}

// feedForced is feed decoding the tokens forced instead of greedy ones
// when forced is not nil.
func feedForced(s *State, slot, pos int, tokens []int, chunks []int, gen int, forced []int) ([][]float32, []int) {
	var out [][]float32
	logits := make([]float32, s.VocabSize())
	for i, c := 0, 0; i < len(tokens); c++ {
		n := min(chunks[c%len(chunks)], len(tokens)-i)
		rows := make([]Row, 0, n)
		for j := i; j < i+n; j++ {
			rows = append(rows, Row{Slot: slot, Pos: pos + j, Token: tokens[j], Logits: j == len(tokens)-1})
		}
		s.Forward(rows, [][]float32{logits})
		i += n
	}
	out = append(out, slices.Clone(logits))
	var toks []int
	p := pos + len(tokens)
	for g := range gen {
		t := argmax(logits)
		if forced != nil {
			t = forced[g]
		}
		toks = append(toks, t)
		s.Forward([]Row{{Slot: slot, Pos: p, Token: t, Logits: true}}, [][]float32{logits})
		out = append(out, slices.Clone(logits))
		p++
	}
	return out, toks
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestPrefixCacheSameAnswers is the property of the prefix cache: over
// random conversations that share, diverge from and extend each other
// (follow-up turns that resend the history with the previous answer, new
// users behind a shared system prompt, prompts cut inside a block), run
// concurrently in several slots, with an adapter swapped in and out
// between them, every prompt's logits and every greedy token equal those
// of a State without the cache that prefills the whole prompt.
//
// Bit for bit needs batch-invariant products, and ours are not: a row's
// product moves in its last bits with the number of rows beside it (the
// Q4_K_M integer path for 1 row against many, the float32 path always;
// measured on tiny-llama.Q4_K_M, a 212-token prompt prefilled in chunks of
// 2 rather than 64 changed some logit bits in 3 prompts of 20, with or
// without a cache). So the exact arm feeds every position as a row of its
// own, in both States: then the reused KV is the KV a fresh prefill
// computes, and the logits must be equal bit for bit, which no block
// shared wrongly or copied short survives. The chunked arm feeds random
// chunks that cross block boundaries, against 64-row chunks without the
// cache: logits within 1e-5, greedy tokens equal.
func TestPrefixCacheSameAnswers(t *testing.T) {
	var q4 *Model
	var q4ad *Adapter
	quant := func(t *testing.T) (*Model, *Adapter) {
		if q4 == nil {
			dir := refDir(t)
			l, err := Open(filepath.Join(dir, "tiny-llama.Q4_K_M.gguf"))
			if err != nil {
				t.Fatal(err)
			}
			if q4ad, err = LoadAdapter(filepath.Join(dir, "tiny-llama.lora-r8.F32.gguf"), l.Model); err != nil {
				t.Fatal(err)
			}
			q4 = l.Model
		}
		return q4, q4ad
	}
	float := func(t *testing.T, c Config) (*Model, *Adapter) {
		m, err := NewRandom(c, 11, true)
		if err != nil {
			t.Fatal(err)
		}
		lora := newTestLoRA(m, 4, 8, 3, allLoraKinds...)
		path := filepath.Join(t.TempDir(), "a.gguf")
		lora.writeGGUF(t, path, c.Arch, m, nil)
		ad, err := LoadAdapter(path, m)
		if err != nil {
			t.Fatal(err)
		}
		return m, ad
	}
	t.Run("q4_k_m/exact", func(t *testing.T) {
		m, ad := quant(t)
		checkSameAnswers(t, m, ad, false)
	})
	t.Run("f32/exact", func(t *testing.T) {
		m, ad := float(t, prefixTestConfig())
		checkSameAnswers(t, m, ad, false)
	})
	// A hybrid resumes from a recurrent-state checkpoint where a sequence
	// ended: token by token, the same bits as a fresh sequence.
	t.Run("qwen35/exact", func(t *testing.T) {
		m, ad := float(t, prefixHybridConfig())
		checkSameAnswers(t, m, ad, false)
	})
	// The chunked arm on float products only: a quantized model's logits
	// move by up to 0.04 with the row grouping alone (tiny-llama.Q4_K_M,
	// 47 rows then chunks of 6 and 2 against one row at a time; the same
	// on the contiguous cache before this one), so no tolerance tells a
	// cache bug from them there; the exact arm covers that model.
	t.Run("f32/chunked", func(t *testing.T) {
		m, ad := float(t, prefixTestConfig())
		checkSameAnswers(t, m, ad, true)
	})
	t.Run("qwen35/chunked", func(t *testing.T) {
		m, ad := float(t, prefixHybridConfig())
		checkSameAnswers(t, m, ad, true)
	})
}

// checkSameAnswers runs the property on m with adapter ad swapped in for
// a third of the requests (see TestPrefixCacheSameAnswers for chunked).
func checkSameAnswers(t *testing.T, m *Model, ad *Adapter, chunked bool) {
	adKey := PrefixKey{Adapter: "a", Revision: ad.Info.SHA256}
	pool := kernels.NewPool(2)
	defer pool.Close()
	const slots = 3
	cached := m.NewState(slots, pool)
	cached.SetPrefixCache(true)
	fresh := m.NewState(1, pool)
	rng := rand.New(rand.NewPCG(5, 6))
	draw := func(n int) []int {
		t := make([]int, n)
		for i := range t {
			t[i] = rng.IntN(40)
		}
		return t
	}
	system := draw(150)
	if m.Config.Hybrid() {
		system = draw(30) // shorter conversations: follow-ups stay under the 300-token cut, which ends before a checkpoint
	}
	var history [][]int // prompts and their answers, to extend and cut
	hits, partial := 0, 0
	rounds := 60
	if m.Config.Hybrid() {
		rounds = 240
		if testshared.Race {
			rounds = 80 // and the race detector's pace
		}
		// Only follow-up turns of ended sequences hit: a checkpoint is where a sequence ended
	}
	var histAdapter []bool // whether each history entry ran with the adapter
	for round := range rounds {
		follow := -1
		var prompt []int
		switch k := rng.IntN(4); {
		case k == 0 || len(history) == 0: // a new user behind the system prompt
			prompt = append(slices.Clone(system), draw(1+rng.IntN(40))...)
		case k == 1: // a follow-up turn: the whole history and a new message
			follow = rng.IntN(len(history))
			prompt = append(slices.Clone(history[follow]), draw(1+rng.IntN(30))...)
		case k == 2: // diverges inside an earlier conversation
			h := history[rng.IntN(len(history))]
			prompt = append(slices.Clone(h[:rng.IntN(len(h))]), draw(1+rng.IntN(20))...)
		default:
			prompt = draw(1 + rng.IntN(90))
		}
		prompt = prompt[:min(len(prompt), 300)]
		withAdapter := rng.IntN(3) == 0
		if m.Config.Hybrid() && follow >= 0 {
			withAdapter = histAdapter[follow] // the turn's own namespace: a hybrid reuses only where a sequence ended
		}
		key := baseKey
		if withAdapter {
			key = adKey
			cached.SetAdapter(ad)
			fresh.SetAdapter(ad)
		}
		slot := round % slots
		chunks, freshChunks := []int{1}, []int{1}
		if chunked {
			chunks, freshChunks = []int{1 + rng.IntN(70), 1 + rng.IntN(9)}, []int{64}
		}
		use := cached.Reuse(slot, key, prompt)
		if use.Cached+use.Prefilled != len(prompt) || use.Cached >= len(prompt) {
			t.Fatalf("round %d: reuse %+v of a %d-token prompt", round, use, len(prompt))
		}
		if use.Cached > 0 {
			hits++
			if use.Cached%kvBlockLen != 0 {
				partial++
			}
		}
		gen := 1 + rng.IntN(12)
		checkBooks(t, cached)
		got, gotToks := feed(cached, slot, use.Cached, prompt[use.Cached:], chunks, gen)
		checkBooks(t, cached)
		fresh.Release(0)
		var force []int
		if chunked {
			// Logits 1e-5 apart may rank a near tie the other way: the
			// fresh State decodes the cached one's tokens, so that every
			// step's logits compare under the same inputs.
			force = gotToks
		}
		want, wantToks := feedForced(fresh, 0, 0, prompt, freshChunks, gen, force)
		for i := range want {
			if d := maxDiff(got[i], want[i]); (!chunked && !sameBits(got[i], want[i])) || d > 1e-5 {
				t.Fatalf("round %d (%+v, adapter %v): logits %d differ from a fresh prefill by %g", round, use, withAdapter, i, d)
			}
		}
		if !slices.Equal(gotToks, wantToks) {
			t.Fatalf("round %d: tokens %v, fresh %v", round, gotToks, wantToks)
		}
		// Half the sequences end at once (their tail cached), the others
		// run on beside the next rounds' and end when their slot is taken.
		if rng.IntN(2) == 0 {
			cached.Release(slot)
		}
		checkBooks(t, cached)
		every := 10
		if m.Config.Hybrid() {
			every = 40 // a checkpoint evicted is a follow-up turn's whole reuse gone
		}
		if round%every == every-1 { // bound the idle entries now and then, as admissions do
			cached.SetPrefixLimit(int64(rng.IntN(8))*cached.blockBytes(), timing.PrefixEvictCapacity)
			checkBooks(t, cached)
			cached.SetPrefixLimit(-1, timing.PrefixEvictCapacity)
		}
		fed := gotToks[:len(gotToks)-1] // a turn's last token cut: the next turn copies a block to the token
		if m.Config.Hybrid() {
			fed = gotToks // everything fed: the sequence's end, where its checkpoint is
		}
		history = append(history, append(prompt, fed...))
		histAdapter = append(histAdapter, withAdapter)
		cached.SetAdapter(nil)
		fresh.SetAdapter(nil)
	}
	minHits := 20
	if m.Config.Hybrid() {
		minHits = rounds / 20 // follow-up turns of ended sequences only, one round in four picks one
	}
	if hits < minHits || partial < minHits/2 {
		t.Errorf("%d of %d prompts reused a prefix, %d up to a token inside a block: the property was hardly exercised", hits, rounds, partial)
	}
}

// TestPrefixSharedHeldOnce: sixteen sequences behind one system prompt
// hold its whole blocks once, and each reuses it up to its last token.
func TestPrefixSharedHeldOnce(t *testing.T) {
	m, err := NewRandom(prefixTestConfig(), 12, false)
	if err != nil {
		t.Fatal(err)
	}
	const users = 16
	s := m.NewState(users, nil)
	s.SetPrefixCache(true)
	system := make([]int, 200) // 3 whole blocks and 8 tokens
	for i := range system {
		system[i] = (i * 7) % 40
	}
	for u := range users {
		prompt := append(slices.Clone(system), u%40, (u+1)%40)
		use := s.Reuse(u, baseKey, prompt)
		if u == 0 && use.Cached != 0 {
			t.Fatalf("first user reused %d tokens of an empty cache", use.Cached)
		}
		if u > 0 && (use.Cached != len(system) || use.Source != timing.PrefixSourceShared) {
			t.Fatalf("user %d reused %+v, want the %d system tokens, shared", u, use, len(system))
		}
		feed(s, u, use.Cached, prompt[use.Cached:], []int{64}, 3)
	}
	// Every user holds the 3 shared blocks by reference and one own block.
	if got, want := s.KVBytes(), int64(3+users)*s.blockBytes(); got != want {
		t.Errorf("KV held %d bytes, want %d: the system prompt's blocks once and one block per user", got, want)
	}
	st := s.PrefixStats()
	if st.HitTokens != uint64((users-1)*len(system)) || st.Lookups != users || st.Hits != users-1 {
		t.Errorf("stats %+v", st)
	}
}

// TestPrefixFollowUpTurn: a follow-up turn that resends the history
// reuses everything the previous turn wrote, to the exact token, from the
// same slot.
func TestPrefixFollowUpTurn(t *testing.T) {
	m, err := NewRandom(prefixTestConfig(), 13, false)
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewState(2, nil)
	s.SetPrefixCache(true)
	turn1 := make([]int, 100)
	for i := range turn1 {
		turn1[i] = (i * 3) % 40
	}
	use := s.Reuse(0, baseKey, turn1)
	if use.Cached != 0 || use.Stop != timing.PrefixStopUncached {
		t.Fatalf("cold prompt: %+v, want nothing reused, uncached", use)
	}
	_, answer := feed(s, 0, 0, turn1, []int{32}, 10)
	s.Release(0)
	// feed fed every answer token: 110 positions hold KV.
	turn2 := append(append(slices.Clone(turn1), answer...), 5, 6, 7)
	use = s.Reuse(0, baseKey, turn2)
	if want := len(turn1) + len(answer); use.Cached != want || use.Source != timing.PrefixSourceSlot || use.Stop != timing.PrefixStopUncached {
		t.Fatalf("follow-up turn: %+v, want %d reused from the same slot, stopped uncached", use, want)
	}
}

// TestPrefixStopReasons covers every stop reason of a lookup.
func TestPrefixStopReasons(t *testing.T) {
	m, err := NewRandom(prefixTestConfig(), 14, false)
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewState(2, nil)
	seq := func(n, seed int) []int {
		t := make([]int, n)
		for i := range t {
			t[i] = (i*seed + seed) % 40
		}
		return t
	}
	a := seq(150, 3)
	run := func(key PrefixKey, prompt []int) timing.PrefixUse {
		use := s.Reuse(0, key, prompt)
		feed(s, 0, use.Cached, prompt[use.Cached:], []int{50}, 1)
		s.Release(0)
		return use
	}
	if use := run(baseKey, a); use.Stop != timing.PrefixStopOff || use.Cached != 0 {
		t.Errorf("cache off: %+v", use)
	}
	s.SetPrefixCache(true)
	run(baseKey, a)
	if use := run(baseKey, a); use.Stop != timing.PrefixStopPromptEnd || use.Cached != len(a)-1 {
		t.Errorf("the same prompt again: %+v, want all but the last token, prompt_end", use)
	}
	b := append(slices.Clone(a[:100]), seq(20, 7)...)
	if use := run(baseKey, b); use.Stop != timing.PrefixStopDiverged || use.Cached != 100 {
		t.Errorf("diverging at 100: %+v", use)
	}
	other := PrefixKey{Adapter: "x", Revision: "1"}
	if use := run(other, a); use.Stop != timing.PrefixStopOtherAdapter || use.Cached != 0 {
		t.Errorf("another adapter: %+v, want other_adapter", use)
	}
	s.SetPrefixLimit(0, timing.PrefixEvictCapacity)
	if use := run(baseKey, a); use.Stop != timing.PrefixStopEvicted || use.Cached != 0 {
		t.Errorf("after eviction: %+v, want evicted", use)
	}
	if use := run(baseKey, seq(30, 11)); use.Stop != timing.PrefixStopUncached {
		t.Errorf("a prompt never seen: %+v, want uncached", use)
	}
	// Sharing only an opening (BOS, a template's first tokens) with a
	// cached prompt is no hit: nothing reused, uncached.
	opening := append([]int{1, 2, 3}, seq(40, 13)...)
	run(baseKey, opening)
	if use := run(baseKey, append([]int{1, 2, 3}, seq(40, 17)...)); use.Cached != 0 || use.Stop != timing.PrefixStopUncached {
		t.Errorf("a prompt sharing 3 opening tokens: %+v, want nothing reused, uncached", use)
	}
}

// TestPrefixEvictions covers every eviction reason and that entries a
// running sequence uses are never evicted.
func TestPrefixEvictions(t *testing.T) {
	m, err := NewRandom(prefixTestConfig(), 15, false)
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewState(2, nil)
	s.SetPrefixCache(true)
	bb := s.blockBytes()
	prompt := func(seed int) []int { // 200 tokens, the first one seed
		t := make([]int, 200)
		for i := range t {
			t[i] = (i*seed + seed) % 40
		}
		return t
	}
	var want [timing.NumPrefixEvicts]uint64
	check := func(what string) {
		t.Helper()
		if got := s.PrefixStats().Evictions; got != want {
			t.Fatalf("%s: evictions %v, want %v", what, got, want)
		}
	}
	// Slot 1 keeps running on prompt 1; prompts 2 and 3 end. Each sequence
	// is 201 positions: 3 whole blocks and a tail.
	s.Reuse(1, baseKey, prompt(1))
	feed(s, 1, 0, prompt(1), []int{64}, 1)
	for _, p := range []int{2, 3} {
		s.Reuse(0, baseKey, prompt(p))
		feed(s, 0, 0, prompt(p), []int{64}, 1)
		s.Release(0)
	}
	st := s.PrefixStats()
	if st.IdleBytes != 8*bb || st.Bytes != 12*bb {
		t.Fatalf("idle %d, held %d bytes; want 8 and 12 blocks of %d", st.IdleBytes, st.Bytes, bb)
	}
	// capacity: the least recently used (prompt 2) goes first, leaves first.
	if got := s.SetPrefixLimit(4*bb, timing.PrefixEvictCapacity); got != 4*bb {
		t.Errorf("capacity eviction freed %d bytes, want 4 blocks", got)
	}
	want[timing.PrefixEvictCapacity] = 4
	check("capacity")
	s.SetPrefixLimit(-1, timing.PrefixEvictCapacity)
	if use := s.Reuse(0, baseKey, prompt(3)); use.Cached != 199 {
		t.Errorf("prompt 3 (recent) reuses %d, want 199", use.Cached)
	}
	s.Release(0) // its copy of prompt 3's tail holds nothing more: dropped
	want[timing.PrefixEvictSubsumed]++
	check("a copied tail released")
	if use := s.Reuse(0, baseKey, prompt(2)); use.Cached != 0 || use.Stop != timing.PrefixStopEvicted {
		t.Errorf("prompt 2 (evicted) reuses %+v, want 0, evicted", use)
	}
	s.Release(0)
	// resize: what fits stays.
	if got := s.SetPrefixLimit(2*bb, timing.PrefixEvictResize); got != 2*bb {
		t.Errorf("resize eviction freed %d bytes, want 2 blocks", got)
	}
	want[timing.PrefixEvictResize] = 2
	check("resize")
	s.SetPrefixLimit(-1, timing.PrefixEvictCapacity) // unbounded again: the rest counts other reasons
	// trim: every idle entry, none of slot 1's.
	s.Reclaim()
	want[timing.PrefixEvictTrim] = 2
	check("trim")
	if st := s.PrefixStats(); st.IdleBytes != 0 || st.Bytes != 4*bb {
		t.Errorf("after trim: idle %d, held %d, want 0 and slot 1's 4 blocks", st.IdleBytes, st.Bytes)
	}
	if use := s.Reuse(0, baseKey, prompt(1)); use.Cached != 199 {
		t.Errorf("slot 1's running prompt reuses %d after the trim, want 199", use.Cached)
	}
	s.Release(0)
	want[timing.PrefixEvictSubsumed]++
	check("a copy of a live tail released")
	// superseded: a new revision of the adapter drops the old one's.
	old := PrefixKey{Adapter: "a", Revision: "1"}
	s.Reuse(0, old, prompt(4))
	feed(s, 0, 0, prompt(4), []int{64}, 1)
	s.Release(0)
	if got := s.SupersedePrefixes("a", "2"); got != 4*bb {
		t.Errorf("superseding freed %d, want 4 blocks", got)
	}
	want[timing.PrefixEvictSuperseded] = 4
	check("superseded")
	// subsumed: a tail that a longer sequence extends is dropped once that
	// sequence's entry holds its tokens.
	short := prompt(5)[:70]
	s.Reuse(0, baseKey, short)
	_, ans := feed(s, 0, 0, short, []int{64}, 1)
	s.Release(0)
	long := append(append(slices.Clone(short), ans...), prompt(6)[:40]...)
	use := s.Reuse(0, baseKey, long)
	if use.Cached != 71 || use.Stop != timing.PrefixStopUncached {
		t.Errorf("extending a tail: %+v, want 71 reused, uncached", use)
	}
	feed(s, 0, use.Cached, long[use.Cached:], []int{64}, 1)
	s.Release(0)
	want[timing.PrefixEvictSubsumed]++
	check("subsumed")
	// Slot 1 never lost a block: its prompt still gives its logits.
	if got := s.PrefixStats().Bytes; got < 4*bb {
		t.Errorf("held %d bytes, below slot 1's 4 blocks", got)
	}
}

// TestForwardGap: a row past the sequence's end (a gap of unknown
// tokens, as a benchmark's warm-up writes) attends over zeroed blocks
// without a fault, and the sequence is not cached.
func TestForwardGap(t *testing.T) {
	m, err := NewRandom(prefixTestConfig(), 16, false)
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewState(1, nil)
	s.SetPrefixCache(true)
	s.Reuse(0, baseKey, []int{1, 2, 3})
	logits := [][]float32{make([]float32, s.VocabSize())}
	s.Forward([]Row{{Slot: 0, Pos: 0, Token: 1}, {Slot: 0, Pos: 300, Token: 2, Logits: true}}, logits)
	if st := s.PrefixStats(); st.Blocks != 0 {
		t.Errorf("%d blocks cached, want none: a sequence with unknown tokens is not cached", st.Blocks)
	}
	s.Forward([]Row{{Slot: 0, Pos: 0, Token: 1, Logits: true}}, logits) // a rewrite from 0
	s.Release(0)
}

// checkBooks checks the cache's accounting against its structures: every
// allocated block is a slot's, the tree's or free, exactly once; the
// tree's and the idle counts are what a walk finds; a block's references
// are the slots listing it; idle entries fit the bound.
func checkBooks(t *testing.T, s *State) {
	t.Helper()
	refs := map[*kvBlock]int{}
	for i := range s.slots {
		for _, b := range s.slots[i].blocks {
			refs[b]++
		}
	}
	inTree := map[*kvBlock]bool{}
	idle := 0
	var walk func(n *prefixNode)
	walk = func(n *prefixNode) {
		for _, ch := range n.children {
			if ch.parent != n || ch.blk.node != ch {
				t.Fatalf("a node's parent or block does not point back")
			}
			if inTree[ch.blk] {
				t.Fatalf("a block is in the tree twice")
			}
			inTree[ch.blk] = true
			if ch.blk.refs == 0 {
				idle++
			}
			walk(ch)
		}
	}
	for _, sp := range s.cache.spaces {
		walk(&sp.root)
	}
	for b, n := range refs {
		if b.refs != n {
			t.Fatalf("a block has %d references, %d slots list it", b.refs, n)
		}
	}
	freed := map[*kvBlock]bool{}
	for _, b := range s.free {
		if refs[b] > 0 || inTree[b] || b.node != nil || freed[b] {
			t.Fatalf("a free block is in use, or free twice")
		}
		freed[b] = true
	}
	all := len(s.free) + len(inTree)
	for b := range refs {
		if !inTree[b] {
			all++
		}
	}
	if all != s.allocated || len(inTree) != s.cache.cached || idle != s.cache.idle {
		t.Fatalf("books: %d blocks found, %d allocated; %d in the tree, %d counted; %d idle, %d counted", all, s.allocated, len(inTree), s.cache.cached, idle, s.cache.idle)
	}
	if s.cache.limit >= 0 && s.idleBytes() > s.cache.limit {
		t.Fatalf("%d idle blocks and %d checkpoints above the bound of %d bytes", idle, s.cache.ckpts, s.cache.limit)
	}
	checkRecBooks(t, s)
}

// checkRecBooks checks a hybrid's recurrent states: every buffer is a
// slot's, a checkpoint's or free, once, and the checkpoints are counted.
func checkRecBooks(t *testing.T, s *State) {
	t.Helper()
	if s.rec == nil {
		return
	}
	seen := map[*float32]bool{}
	add := func(b []float32) {
		if seen[&b[0]] {
			t.Fatalf("a recurrent-state buffer is held twice")
		}
		seen[&b[0]] = true
	}
	for _, r := range s.rec {
		if r.data != nil {
			add(r.data)
		}
	}
	ckpts := 0
	var walk func(n *prefixNode)
	walk = func(n *prefixNode) {
		for _, ch := range n.children {
			if ch.ckpt != nil {
				add(ch.ckpt)
				ckpts++
			}
			walk(ch)
		}
	}
	for _, sp := range s.cache.spaces {
		walk(&sp.root)
	}
	for _, b := range s.recFree {
		add(b)
	}
	if ckpts != s.cache.ckpts || len(seen) != s.recAllocated {
		t.Fatalf("recurrent books: %d checkpoints found, %d counted; %d buffers found, %d allocated", ckpts, s.cache.ckpts, len(seen), s.recAllocated)
	}
}
