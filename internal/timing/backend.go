package timing

// BackendPhase names a backend phase that sits inside the actor's decode phase, in
// the closed order of docs/latency-guide.md#stall-reasons (the latency core maps backend phase s to
// the reason and phase of the same name, and tests that the orders agree).
type BackendPhase uint8

// Backend phases.
const (
	BackendSampling    BackendPhase = iota
	BackendReadback                 // copying results back from the device
	BackendGPULockWait              // gpu_lock_wait: waiting for device ownership
	BackendGraphCapture
	BackendGraphReplay
	BackendSynchronization
	BackendResize
	BackendTrim
	BackendAdapter
	BackendTraining
	NumBackendPhases
)

var backendPhaseNames = [NumBackendPhases]string{
	"sampling", "readback", "gpu_lock_wait", "graph_capture", "graph_replay",
	"synchronization", "resize", "trim", "adapter", "training",
}

// String returns the phase's snake_case contract name.
func (s BackendPhase) String() string {
	if s < NumBackendPhases {
		return backendPhaseNames[s]
	}
	return "unknown"
}
