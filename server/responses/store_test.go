package responses

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/server/wire"
)

// TestResponseStoreBounds: the store keeps at most its capacity, the
// oldest going first with its items, and a capacity of 0
// (--responses-store 0) keeps nothing.
func TestResponseStoreBounds(t *testing.T) {
	st := NewStore(time.Now, 2)
	msg := []wire.Message{{Role: "user", Content: "x"}}
	for _, id := range []string{"resp_1", "resp_2", "resp_3"} {
		st.put(id, []byte("{}"), msg, map[string][]wire.Message{"msg_" + id: msg})
	}
	if _, err := st.conversation("resp_1"); err == nil {
		t.Error("the oldest response is kept beyond the capacity")
	}
	if _, ok := st.item("msg_resp_1"); ok {
		t.Error("the evicted response's item is kept")
	}
	for _, id := range []string{"resp_2", "resp_3"} {
		if _, err := st.conversation(id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	none := NewStore(time.Now, 0)
	none.put("resp_1", []byte("{}"), msg, nil)
	if _, ok := none.Body("resp_1"); ok {
		t.Error("a store of capacity 0 kept a response")
	}
}

// TestStoreExpires: a response past responseTTL is gone, its
// conversation a 404 naming previous_response_id, its object and items
// no longer served.
func TestStoreExpires(t *testing.T) {
	now := time.Now()
	st := NewStore(func() time.Time { return now }, 4)
	msg := []wire.Message{{Role: "user", Content: "x"}}
	st.put("resp_1", []byte("{}"), msg, map[string][]wire.Message{"msg_1": msg})
	if _, ok := st.Body("resp_1"); !ok {
		t.Fatal("a fresh response is not kept")
	}
	now = now.Add(responseTTL + time.Minute)
	_, err := st.conversation("resp_1")
	var e *wire.Error
	if !errors.As(err, &e) || e.Status != http.StatusNotFound || e.Param != "previous_response_id" || e.Code != "previous_response_not_found" {
		t.Errorf("an expired conversation: %v", err)
	}
	if _, ok := st.Body("resp_1"); ok {
		t.Error("an expired response is served")
	}
	if _, ok := st.item("msg_1"); ok {
		t.Error("an expired response's item is served")
	}
}
