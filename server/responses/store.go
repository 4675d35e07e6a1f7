package responses

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/kiln-ai/kiln/server/wire"
)

// The Responses store: what previous_response_id, item_reference and GET
// /v1/responses/{id} read. A response made with store true (OpenAI's
// default) keeps its conversation (the input and earlier turns without
// the instructions, then its output), its output items and its object,
// in memory only, for responseTTL, and at most --responses-store
// responses: the oldest goes first. Nothing is written to disk or to
// telemetry; store false, or --responses-store 0, keeps nothing.

const responseTTL = time.Hour

// Store is the Responses store; it is safe for concurrent use.
type Store struct {
	now func() time.Time
	cap int // responses kept at most; 0 keeps none

	mu    sync.Mutex
	order []string // ids, oldest first
	resp  map[string]*storedResponse
	items map[string]itemRef
}

type storedResponse struct {
	body    []byte // the response object, as GET /v1/responses/{id} serves it
	conv    []wire.Message
	items   []string // its output items' ids
	expires time.Time
}

// itemRef is one stored output item: its response and its messages.
type itemRef struct {
	resp string
	msgs []wire.Message
}

// NewStore is a store on the clock now that keeps at most capacity
// responses (0 keeps none).
func NewStore(now func() time.Time, capacity int) *Store {
	return &Store{now: now, cap: capacity, resp: map[string]*storedResponse{}, items: map[string]itemRef{}}
}

// put keeps the response id with its conversation and output items.
func (st *Store) put(id string, body []byte, conv []wire.Message, items map[string][]wire.Message) {
	if st.cap == 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expire()
	for len(st.order) >= st.cap {
		st.drop(st.order[0])
	}
	sr := &storedResponse{body: body, conv: conv, expires: st.now().Add(responseTTL)}
	for iid, msgs := range items {
		sr.items = append(sr.items, iid)
		st.items[iid] = itemRef{resp: id, msgs: msgs}
	}
	st.resp[id] = sr
	st.order = append(st.order, id)
}

// conversation is a stored response's conversation, or the 404 that
// says it is not kept.
func (st *Store) conversation(id string) ([]wire.Message, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expire()
	if sr, ok := st.resp[id]; ok {
		return append([]wire.Message(nil), sr.conv...), nil
	}
	return nil, st.NotFound(id, "previous_response_id", "previous_response_not_found")
}

// NotFound is the 404 of a response that is not kept: param and code
// name what asked for it.
func (st *Store) NotFound(id, param, code string) *wire.Error {
	return &wire.Error{Status: http.StatusNotFound, Type: wire.TypeInvalidRequest, Param: param, Code: code,
		Message: fmt.Sprintf("the response '%s' was not found: it was never stored (store: false), it has expired (responses are kept for %s, at most %d of them: --responses-store), or the server restarted",
			wire.Clip(id), responseTTL, st.cap)}
}

// Body is a stored response's object.
func (st *Store) Body(id string) ([]byte, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expire()
	sr, ok := st.resp[id]
	if !ok {
		return nil, false
	}
	return sr.body, true
}

// item is a stored output item's messages.
func (st *Store) item(id string) ([]wire.Message, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expire()
	ref, ok := st.items[id]
	return ref.msgs, ok
}

// expire drops the responses past their time (the order is by expiry).
func (st *Store) expire() {
	now := st.now()
	for len(st.order) > 0 && !now.Before(st.resp[st.order[0]].expires) {
		st.drop(st.order[0])
	}
}

func (st *Store) drop(id string) {
	if sr, ok := st.resp[id]; ok {
		for _, iid := range sr.items {
			delete(st.items, iid)
		}
		delete(st.resp, id)
	}
	for i, o := range st.order {
		if o == id {
			st.order = append(st.order[:i], st.order[i+1:]...)
			break
		}
	}
}
