package latency

// Reason is a stall reason: the phase chosen to explain an inter-token gap
// (docs/latency-guide.md#stall-reasons). The values are the closed set in its fixed order; the
// order is part of the contract (ties go to the later reason, and traces
// carry reasons as these indexes).
type Reason uint8

// The closed reason set, in the documented order.
const (
	ReasonActorQueue Reason = iota
	ReasonActorAdmission
	ReasonActorPrefill
	ReasonActorDecode
	ReasonActorCycleIdle
	ReasonResponseDelivery
	ReasonHandlerQueue   // never chosen: happens after the token is ready
	ReasonClientDelivery // never chosen: happens after the token is ready
	ReasonSampling
	ReasonReadback
	ReasonGPULockWait
	ReasonGraphCapture
	ReasonGraphReplay
	ReasonSynchronization
	ReasonResize
	ReasonTrim
	ReasonAdapter
	ReasonTraining
	ReasonUnexplained
	NumReasons
)

var reasonNames = [NumReasons]string{
	"actor_queue", "actor_admission", "actor_prefill", "actor_decode",
	"actor_cycle_idle", "response_delivery", "handler_queue", "client_delivery",
	"sampling", "readback", "gpu_lock_wait", "graph_capture", "graph_replay",
	"synchronization", "resize", "trim", "adapter", "training", "unexplained",
}

// String returns the snake_case name used in JSON, metric labels and span
// attributes, or "unknown" for a value outside the closed set.
func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// ParseReason returns the reason with the given snake_case name.
func ParseReason(name string) (Reason, bool) {
	for i, n := range reasonNames {
		if n == name {
			return Reason(i), true
		}
	}
	return 0, false
}

// BackendReason is the gap reason a backend phase is charged as; the
// stall span's phase attributes name a backend phase by it too.
func BackendReason(s BackendPhase) Reason { return ReasonSampling + Reason(s) }

// ReasonCounts holds one count per reason, indexed by Reason. It marshals
// as a JSON object with all 19 keys, in the documented order.
type ReasonCounts [NumReasons]int

// Total is the sum of the counts.
func (c *ReasonCounts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// MarshalJSON implements json.Marshaler.
func (c ReasonCounts) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil), nil }

// AppendJSON appends the JSON object to b.
func (c *ReasonCounts) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, v := range c {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKey(b, reasonNames[i])
		b = appendInt(b, v)
	}
	return append(b, '}')
}
