package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kiln-ai/kiln/engine/llama"
)

// DefaultAdapterDir is --adapter-dir's default.
const DefaultAdapterDir = "./adapters"

// adapterGGUFExt ends an adapter that is a llama.cpp LoRA GGUF file.
const adapterGGUFExt = ".gguf"

// maxAdapterName bounds an adapter name (a file name on every platform).
const maxAdapterName = 255

// adapter is an adapter whose weights are in memory: the engine.Adapter
// that requests name (compared by identity, so one per name at a time).
type adapter struct {
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
func (a *adapter) AdapterName() string { return a.name }

// adapterRegistry is the adapters of --adapter-dir (docs/maintenance.md
// section 5): a subdirectory in the PEFT layout or a .gguf LoRA file, named
// by the directory's name or the file's name without .gguf. Loaded weights
// are kept, one per name, while they fit in maxBytes (--adapter-cache-bytes):
// past it the least recently loaded adapter is forgotten (requests running
// with it keep it until they end; the next request that names it reads it
// again). The server default (def; nil: the base model) and the adapter
// just loaded are never forgotten, so one adapter larger than the bound is
// still served.
type adapterRegistry struct {
	dir      string
	model    *llama.Model
	maxBytes int64

	mu     sync.Mutex
	loaded map[string]*adapter
	bytes  int64  // the loaded adapters' MemBytes
	clock  uint64 // counts loads, for adapter.used
	def    *adapter
}

func newAdapterRegistry(dir string, m *llama.Model, maxBytes int64) *adapterRegistry {
	return &adapterRegistry{dir: dir, model: m, maxBytes: maxBytes, loaded: map[string]*adapter{}}
}

// keep records a in the cache (replacing an older version of its name) and
// forgets the least recently loaded adapters, never a nor the default,
// until the cache fits maxBytes. g.mu is held.
func (g *adapterRegistry) keep(a *adapter) {
	if old := g.loaded[a.name]; old != nil {
		g.bytes -= old.bytes
	}
	g.loaded[a.name] = a
	g.bytes += a.bytes
	g.touch(a)
	for g.bytes > g.maxBytes {
		var lru *adapter
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
func (g *adapterRegistry) touch(a *adapter) {
	g.clock++
	a.used = g.clock
}

// checkAdapterName answers 400 invalid_adapter_name unless name is a
// single path segment: not empty, not . or .., no separator, no NUL or
// other control character, valid UTF-8, at most 255 bytes.
func checkAdapterName(param, name string) error {
	bad := name == "" || name == "." || name == ".." || len(name) > maxAdapterName || !utf8.ValidString(name) ||
		strings.ContainsAny(name, `/\`) || strings.ContainsFunc(name, unicode.IsControl) || !filepath.IsLocal(name)
	if bad {
		return &Error{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: param, Code: "invalid_adapter_name",
			Message: fmt.Sprintf("adapter name %q is not a single path segment of the adapter directory", clip(name))}
	}
	return nil
}

// adapterNotFound is the 404 of an adapter the directory does not hold.
func adapterNotFound(param, name string) error {
	return &Error{Status: http.StatusNotFound, Type: typeNotFound, Param: param, Code: "adapter_not_found",
		Message: fmt.Sprintf("no adapter %q in the adapter directory (GET /v1/adapters lists them)", clip(name))}
}

// path returns where adapter name lives: its PEFT directory, else its
// .gguf file; 404 when neither exists. name must have been checked.
func (g *adapterRegistry) path(param, name string) (string, error) {
	dir := filepath.Join(g.dir, name)
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, nil
	}
	file := dir + adapterGGUFExt
	if st, err := os.Stat(file); err == nil && st.Mode().IsRegular() {
		return file, nil
	}
	return "", adapterNotFound(param, name)
}

// load returns adapter name with its weights in memory, reading them from
// disk (before any barrier) unless already loaded from the same version of
// its weights file. Errors: 400
// invalid_adapter_name, 404 adapter_not_found, 400 adapter_layout_invalid
// (the message names the file and the tensor).
func (g *adapterRegistry) load(param, name string) (*adapter, error) {
	if err := checkAdapterName(param, name); err != nil {
		return nil, err
	}
	path, err := g.path(param, name)
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
			return nil, &Error{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: param, Code: "adapter_layout_invalid",
				Message: fmt.Sprintf("adapter %q cannot be loaded: %v", clip(name), err), Err: err}
		}
		return nil, fmt.Errorf("load adapter %q: %w", name, err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if a := g.loaded[name]; a != nil && a.path == path && a.stamp == stamp {
		g.touch(a)
		return a, nil // loaded meanwhile by another request: one per name
	}
	a = &adapter{name: name, path: path, stamp: stamp, w: w, bytes: w.MemBytes()}
	g.keep(a)
	return a, nil
}

// defaultAdapter is the server default (nil: the base model).
func (g *adapterRegistry) defaultAdapter() *adapter {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.def
}

// setDefault makes a (nil: base) the server default.
func (g *adapterRegistry) setDefault(a *adapter) {
	g.mu.Lock()
	g.def = a
	g.mu.Unlock()
}

// loadedNames lists the adapters in memory, sorted.
func (g *adapterRegistry) loadedNames() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	names := make([]string, 0, len(g.loaded))
	for n := range g.loaded {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// remove deletes adapter name's files and forgets its weights (requests
// running with them keep them until they end). 409 adapter_active for the
// server default.
func (g *adapterRegistry) remove(param, name string) error {
	if err := checkAdapterName(param, name); err != nil {
		return err
	}
	path, err := g.path(param, name)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.def != nil && g.def.name == name {
		return &Error{Status: http.StatusConflict, Type: typeInvalidRequest, Param: param, Code: "adapter_active",
			Message: fmt.Sprintf("adapter %q is the server default; POST /v1/adapters/unload (or load another) first", clip(name))}
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("delete adapter %q: %w", name, err)
	}
	if a := g.loaded[name]; a != nil {
		g.bytes -= a.bytes
		delete(g.loaded, name)
	}
	return nil
}

// available lists the adapters of the directory with what their files
// say, sorted by name. Entries that are neither a directory nor a .gguf
// file, hidden ones, and ones that fail to inspect are left out; a missing
// directory lists none.
func (g *adapterRegistry) available() ([]adapterEntry, error) {
	entries, err := os.ReadDir(g.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []adapterEntry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read adapter directory: %w", err)
	}
	out := []adapterEntry{}
	seen := map[string]bool{} // a directory wins over a .gguf of the same name, as in path
	slices.SortStableFunc(entries, func(a, b fs.DirEntry) int { return boolOrder(b.IsDir(), a.IsDir()) })
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() {
			var ok bool
			if name, ok = strings.CutSuffix(name, adapterGGUFExt); !ok {
				continue
			}
		}
		if strings.HasPrefix(name, ".") || checkAdapterName("", name) != nil || seen[name] {
			continue
		}
		seen[name] = true
		info, err := llama.InspectAdapter(filepath.Join(g.dir, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, adapterEntry{Name: name, Format: info.Format, Rank: info.Rank, Alpha: info.Alpha,
			Targets: append([]string{}, info.Targets...), SizeBytes: info.Bytes, SHA256: info.SHA256})
	}
	slices.SortFunc(out, func(a, b adapterEntry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// adapterEntry is one available adapter in GET /v1/adapters.
type adapterEntry struct {
	Name      string   `json:"name"`
	Format    string   `json:"format"` // "peft" or "gguf"
	Rank      int      `json:"rank"`
	Alpha     float64  `json:"alpha"`
	Targets   []string `json:"targets"`
	SizeBytes int64    `json:"size_bytes"`
	SHA256    string   `json:"sha256"`
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
