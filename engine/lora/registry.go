// Package lora keeps the LoRA adapters a server may run: the adapter
// directory (PEFT directories and llama.cpp LoRA GGUF files, named by the
// directory's name or the file's name without .gguf), the weights loaded
// from it (one version per name, invalidated when the weights file
// changes, bounded by a byte budget, least recently loaded forgotten
// first), deletion, the default adapter, and activation: a load followed
// by the engine's barrier swap. The formats themselves are read by
// engine/llama (LoadAdapter, InspectAdapter), which applies them.
package lora

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/llama"
)

// DefaultDir is --adapter-dir's default.
const DefaultDir = "./adapters"

// ggufExt ends an adapter that is a llama.cpp LoRA GGUF file.
const ggufExt = ".gguf"

// maxName bounds an adapter name (a file name on every platform).
const maxName = 255

// The registry's errors: a client's mistakes, which the server maps to
// 4xx replies (their messages name the adapter and what to do).
var (
	ErrInvalidName = errors.New("invalid adapter name")
	ErrNotFound    = errors.New("adapter not found")
	ErrLayout      = llama.ErrAdapterLayout
	ErrActive      = errors.New("adapter active")
)

// Adapter is an adapter whose weights are in memory: the engine.Adapter
// that requests name (compared by identity, so one per name at a time).
// The zero *Adapter is never handed out; nil is the base model.
type Adapter struct {
	name  string
	path  string
	stamp fileStamp // of the weights file when loaded
	w     *llama.Adapter
	bytes int64  // w.MemBytes()
	used  uint64 // the registry's clock at its latest load: the LRU order
}

// fileStamp identifies a version of an adapter's weights file: a file
// rewritten in place (a training job's output under the same name) has
// another stamp, and its adapter is read again.
type fileStamp struct {
	size int64
	mod  int64 // modification time, ns
}

// weightsStamp stats the weights file of the adapter at path (a PEFT
// directory's adapter_model.safetensors, or the .gguf file); zero when it
// cannot be read (the load then reports why).
func weightsStamp(path string) fileStamp {
	st, err := os.Stat(path)
	if err == nil && st.IsDir() {
		st, err = os.Stat(filepath.Join(path, "adapter_model.safetensors"))
	}
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{size: st.Size(), mod: st.ModTime().UnixNano()}
}

// AdapterName implements engine.Adapter.
func (a *Adapter) AdapterName() string { return a.name }

// AdapterWeights implements engine.WeightedAdapter: the engine's own swap
// gives the backend these weights.
func (a *Adapter) AdapterWeights() *llama.Adapter { return a.w }

// Name is a's name, or engine.BaseAdapter for nil (the base model).
func Name(a *Adapter) string {
	if a == nil {
		return engine.BaseAdapter
	}
	return a.name
}

// Revision is the sha256 of a's weights, or engine.BaseAdapter
// (engine.AdapterRevision; a nil *Adapter is the base model, not an
// adapter without weights).
func Revision(a *Adapter) string {
	if a == nil {
		return engine.BaseAdapter
	}
	return engine.AdapterRevision(a)
}

// Registry is the adapters of --adapter-dir (docs/maintenance.md
// section 5): a subdirectory in the PEFT layout or a .gguf LoRA file, named
// by the directory's name or the file's name without .gguf. Loaded weights
// are kept, one per name, while they fit in maxBytes (--adapter-cache-bytes):
// past it the least recently loaded adapter is forgotten (requests running
// with it keep it until they end; the next request that names it reads it
// again). The server default (def; nil: the base model) and the adapter
// just loaded are never forgotten, so one adapter larger than the bound is
// still served.
type Registry struct {
	dir      string
	model    *llama.Model
	maxBytes int64

	mu     sync.Mutex
	loaded map[string]*Adapter
	bytes  int64  // the loaded adapters' MemBytes
	clock  uint64 // counts loads, for adapter.used
	def    *Adapter
	fits   map[string]fitVerdict // by path: CheckAdapter's verdict on a version of the weights
}

// fitVerdict is whether one version of an adapter's files fits the model.
type fitVerdict struct {
	stamp fileStamp
	err   error
}

// NewRegistry keeps the adapters of dir for model m within maxBytes of
// loaded weights.
func NewRegistry(dir string, m *llama.Model, maxBytes int64) *Registry {
	return &Registry{dir: dir, model: m, maxBytes: maxBytes, loaded: map[string]*Adapter{}, fits: map[string]fitVerdict{}}
}

// Dir is the adapter directory.
func (g *Registry) Dir() string { return g.dir }

// keep records a in the cache (replacing an older version of its name) and
// forgets the least recently loaded adapters, never a nor the default,
// until the cache fits maxBytes. g.mu is held.
func (g *Registry) keep(a *Adapter) {
	if old := g.loaded[a.name]; old != nil {
		g.bytes -= old.bytes
	}
	g.loaded[a.name] = a
	g.bytes += a.bytes
	g.touch(a)
	for g.bytes > g.maxBytes {
		var lru *Adapter
		for _, c := range g.loaded {
			if c != a && c != g.def && (lru == nil || c.used < lru.used) {
				lru = c
			}
		}
		if lru == nil {
			return
		}
		delete(g.loaded, lru.name)
		g.bytes -= lru.bytes
	}
}

// touch makes a the most recently loaded. g.mu is held.
func (g *Registry) touch(a *Adapter) {
	g.clock++
	a.used = g.clock
}

// CheckName fails with ErrInvalidName unless name is a single path
// segment: not empty, not . or .., no separator, no NUL or other control
// character, valid UTF-8, at most 255 bytes.
func CheckName(name string) error {
	bad := name == "" || name == "." || name == ".." || len(name) > maxName || !utf8.ValidString(name) ||
		strings.ContainsAny(name, `/\`) || strings.ContainsFunc(name, unicode.IsControl) || !filepath.IsLocal(name)
	if bad {
		return fmt.Errorf("%w: adapter name %q is not a single path segment of the adapter directory", ErrInvalidName, clip(name))
	}
	return nil
}

// notFound is the error of an adapter the directory does not hold.
func notFound(name string) error {
	return fmt.Errorf("%w: no adapter %q in the adapter directory (GET /v1/adapters lists them)", ErrNotFound, clip(name))
}

// clip bounds a name echoed in an error message.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// path returns where adapter name lives: its PEFT directory, else its
// .gguf file; 404 when neither exists. name must have been checked.
func (g *Registry) path(name string) (string, error) {
	dir := filepath.Join(g.dir, name)
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, nil
	}
	file := dir + ggufExt
	if st, err := os.Stat(file); err == nil && st.Mode().IsRegular() {
		return file, nil
	}
	return "", notFound(name)
}

// Load returns adapter name with its weights in memory, reading them from
// disk (before any barrier) unless already loaded from the same version of
// its weights file. Errors: ErrInvalidName, ErrNotFound, ErrLayout (the
// message names the file and the tensor).
func (g *Registry) Load(name string) (*Adapter, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	path, err := g.path(name)
	if err != nil {
		return nil, err
	}
	stamp := weightsStamp(path)
	g.mu.Lock()
	a := g.loaded[name]
	fresh := a != nil && a.path == path && a.stamp == stamp
	if fresh {
		g.touch(a)
	}
	g.mu.Unlock()
	if fresh {
		return a, nil
	}
	w, err := llama.LoadAdapter(path, g.model)
	if err != nil {
		if errors.Is(err, llama.ErrAdapterLayout) {
			return nil, fmt.Errorf("adapter %q cannot be loaded: %w", clip(name), err)
		}
		return nil, fmt.Errorf("load adapter %q: %w", name, err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if a := g.loaded[name]; a != nil && a.path == path && a.stamp == stamp {
		g.touch(a)
		return a, nil // loaded meanwhile by another request: one per name
	}
	a = &Adapter{name: name, path: path, stamp: stamp, w: w, bytes: w.MemBytes()}
	g.keep(a)
	return a, nil
}

// Default is the server default (nil: the base model).
func (g *Registry) Default() *Adapter {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.def
}

// SetDefault makes a (nil: base) the server default.
func (g *Registry) SetDefault(a *Adapter) {
	g.mu.Lock()
	g.def = a
	g.mu.Unlock()
}

// LoadedNames lists the adapters in memory, sorted.
func (g *Registry) LoadedNames() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	names := make([]string, 0, len(g.loaded))
	for n := range g.loaded {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Remove deletes adapter name's files and forgets its weights (requests
// running with them keep them until they end). ErrActive for the server
// default.
func (g *Registry) Remove(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	path, err := g.path(name)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.def != nil && g.def.name == name {
		return fmt.Errorf("%w: adapter %q is the server default; POST /v1/adapters/unload (or load another) first", ErrActive, clip(name))
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("delete adapter %q: %w", name, err)
	}
	if a := g.loaded[name]; a != nil {
		g.bytes -= a.bytes
		delete(g.loaded, name)
	}
	delete(g.fits, path)
	return nil
}

// Available lists the adapters of the directory with what their files
// say, sorted by name, each marked loadable or not with the reason a load
// would give (files that cannot be read, shapes that do not fit the
// model), so that a misfit shows in the list, not only at load. Entries
// that are neither a directory nor a .gguf file, hidden ones and invalid
// names are left out; a missing directory lists none.
func (g *Registry) Available() ([]Entry, error) {
	entries, err := os.ReadDir(g.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []Entry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read adapter directory: %w", err)
	}
	out := []Entry{}
	seen := map[string]bool{} // a directory wins over a .gguf of the same name, as in path
	slices.SortStableFunc(entries, func(a, b fs.DirEntry) int { return boolOrder(b.IsDir(), a.IsDir()) })
	for _, e := range entries {
		name := e.Name()
		format := "peft"
		if !e.IsDir() {
			var ok bool
			if name, ok = strings.CutSuffix(name, ggufExt); !ok {
				continue
			}
			format = "gguf"
		}
		if strings.HasPrefix(name, ".") || CheckName(name) != nil || seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, g.entry(name, format, filepath.Join(g.dir, e.Name())))
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// entry describes the adapter at path.
func (g *Registry) entry(name, format, path string) Entry {
	e := Entry{Name: name, Format: format, Loadable: true}
	info, err := llama.InspectAdapter(path)
	if err == nil {
		e.Rank, e.Alpha, e.SizeBytes, e.SHA256 = &info.Rank, &info.Alpha, &info.Bytes, &info.SHA256
		e.Targets = append([]string{}, info.Targets...)
		err = g.fit(path)
	}
	e.Err, e.Loadable = err, err == nil
	return e
}

// fit is CheckAdapter's verdict on the adapter at path for the model,
// kept per version of its weights file.
func (g *Registry) fit(path string) error {
	if g.model == nil {
		return nil
	}
	stamp := weightsStamp(path)
	g.mu.Lock()
	v, ok := g.fits[path]
	g.mu.Unlock()
	if ok && v.stamp == stamp {
		return v.err
	}
	err := llama.CheckAdapter(path, g.model)
	g.mu.Lock()
	g.fits[path] = fitVerdict{stamp: stamp, err: err}
	g.mu.Unlock()
	return err
}

// Entry is one adapter of the directory, as its files describe it (GET
// /v1/adapters). The fields its files could not tell are nil.
type Entry struct {
	Name      string   `json:"name"`
	Format    string   `json:"format"` // "peft" or "gguf"
	Rank      *int     `json:"rank"`
	Alpha     *float64 `json:"alpha"`
	Targets   []string `json:"targets"`
	SizeBytes *int64   `json:"size_bytes"`
	SHA256    *string  `json:"sha256"`
	// Loadable is false when a load would fail; Err is then why, which
	// the server writes as Problem in the words of a load's error reply
	// (nil otherwise).
	Loadable bool    `json:"loadable"`
	Problem  *string `json:"problem"`
	Err      error   `json:"-"`
}

// boolOrder orders false before true.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// Swapper is the engine's barrier swap (*engine.Engine).
type Swapper interface {
	SwapAdapter(ctx context.Context, to engine.Adapter, reason string) error
}

// Activate loads adapter name (from disk, before the barrier), swaps it in
// through e's barrier for reason, and makes it the default; "" activates
// the base model.
func (g *Registry) Activate(ctx context.Context, e Swapper, name, reason string) error {
	var a *Adapter
	var to engine.Adapter
	if name != "" {
		var err error
		if a, err = g.Load(name); err != nil {
			return err
		}
		to = a
	}
	if err := e.SwapAdapter(ctx, to, reason); err != nil {
		return err
	}
	g.SetDefault(a)
	return nil
}
