package grammar

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestCache(t *testing.T) {
	c := NewCache(2)
	var compiles atomic.Int32
	compile := func() (*Grammar, error) {
		compiles.Add(1)
		return Compile(nil, Lit("x"), DefaultLimits())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := c.Get("a", compile); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := compiles.Load(); n != 1 {
		t.Fatalf("%d compiles of one key", n)
	}
	if _, hit, _ := c.Get("a", compile); !hit {
		t.Fatal("no hit")
	}
	_, _, _ = c.Get("b", compile)
	_, _, _ = c.Get("c", compile) // evicts a, the least recently used
	if c.Len() != 2 {
		t.Fatalf("%d kept", c.Len())
	}
	if _, hit, _ := c.Get("a", compile); hit {
		t.Fatal("a was not evicted")
	}
	boom := errors.New("boom")
	if _, _, err := c.Get("bad", func() (*Grammar, error) { return nil, boom }); err != boom {
		t.Fatal(err)
	}
	if _, hit, _ := c.Get("bad", compile); hit {
		t.Fatal("a failed compile was kept")
	}
}

// BenchmarkCacheHit is a request repeating a compiled schema: one lookup.
func BenchmarkCacheHit(b *testing.B) {
	c := NewCache(32)
	g, err := Compile(nil, Lit("x"), DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	compile := func() (*Grammar, error) { return g, nil }
	key := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	_, _, _ = c.Get(key, compile)
	b.ReportAllocs()
	for b.Loop() {
		if _, hit, _ := c.Get(key, compile); !hit {
			b.Fatal("miss")
		}
	}
}
