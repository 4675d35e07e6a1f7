package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTransition(t *testing.T) {
	// The whole table, written out: a move not listed here must fail.
	allowed := map[[2]state]bool{
		{stateQueued, stateAdmitting}:     true,
		{stateQueued, stateEnded}:         true,
		{stateAdmitting, statePrefilling}: true,
		{stateAdmitting, stateEnded}:      true,
		{statePrefilling, stateDecoding}:  true,
		{statePrefilling, stateEnded}:     true,
		{stateDecoding, stateFinishing}:   true,
		{stateDecoding, stateEnded}:       true,
		{stateFinishing, stateEnded}:      true,
	}
	for from := range numStates + 1 {
		for to := range numStates + 1 {
			t.Run(from.String()+"->"+to.String(), func(t *testing.T) {
				got, err := transition(from, to)
				want := allowed[[2]state{from, to}]
				if (err == nil) != want {
					t.Fatalf("transition error %v, want legal=%v", err, want)
				}
				wantState := from
				if want {
					wantState = to
				}
				if got != wantState {
					t.Errorf("state %v, want %v", got, wantState)
				}
			})
		}
	}
}

func TestMoveToPanicsOnIllegal(t *testing.T) {
	r := &request{state: stateEnded}
	defer func() {
		if recover() == nil {
			t.Error("ended -> decoding did not panic")
		}
	}()
	r.moveTo(stateDecoding)
}

func TestLifecycle(t *testing.T) {
	// The path of a request that generates and drains its last token,
	// with the slot ownership each state implies.
	r := &request{}
	var got []string
	for _, s := range []state{stateAdmitting, statePrefilling, stateDecoding, stateFinishing, stateEnded} {
		r.moveTo(s)
		got = append(got, r.state.String()+map[bool]string{true: "+slot", false: ""}[r.state.holdsSlot()])
	}
	want := []string{"admitting+slot", "prefilling+slot", "decoding+slot", "finishing", "ended"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lifecycle (-want +got):\n%s", diff)
	}
}
