package grammar

import (
	"container/list"
	"sync"
)

// Cache keeps compiled grammars by key (what the grammar was compiled
// from and for which vocabulary), so a request repeating a schema or a
// tool list pays nothing to compile it. Concurrent requests for one key
// compile it once. It holds at most max grammars, least recently used
// evicted first; failed compiles are not kept.
type Cache struct {
	mu      sync.Mutex
	max     int
	entries map[string]*list.Element
	order   *list.List // front: most recently used
}

type cacheEntry struct {
	key   string
	ready chan struct{}
	g     *Grammar
	err   error
}

// NewCache makes a cache of at most max grammars.
func NewCache(max int) *Cache {
	return &Cache{max: max, entries: map[string]*list.Element{}, order: list.New()}
}

// Get is the grammar of key, compiling it with compile when not kept;
// hit reports whether it was kept (or being compiled by another caller).
func (c *Cache) Get(key string, compile func() (*Grammar, error)) (g *Grammar, hit bool, err error) {
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.order.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		c.mu.Unlock()
		<-e.ready
		return e.g, true, e.err
	}
	e := &cacheEntry{key: key, ready: make(chan struct{})}
	c.entries[key] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.entries, old.Value.(*cacheEntry).key)
	}
	c.mu.Unlock()

	e.g, e.err = compile()
	close(e.ready)
	if e.err != nil {
		c.mu.Lock()
		if el, ok := c.entries[key]; ok && el.Value == e {
			c.order.Remove(el)
			delete(c.entries, key)
		}
		c.mu.Unlock()
	}
	return e.g, false, e.err
}

// Len is the number of grammars kept.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
