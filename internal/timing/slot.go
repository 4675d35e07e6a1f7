package timing

// Slot names a backend phase that sits inside the actor's decode phase, in
// the closed order of docs/latency-guide.md#stall-reasons (the latency core maps slot s to
// the reason and phase of the same name, and tests that the orders agree).
type Slot uint8

// Backend slots.
const (
	SlotSampling    Slot = iota
	SlotReadback         // copying results back from the device
	SlotGPULockWait      // gpu_lock_wait: waiting for device ownership
	SlotGraphCapture
	SlotGraphReplay
	SlotSynchronization
	SlotResize
	SlotTrim
	SlotAdapter
	SlotTraining
	NumSlots
)

var slotNames = [NumSlots]string{
	"sampling", "readback", "gpu_lock_wait", "graph_capture", "graph_replay",
	"synchronization", "resize", "trim", "adapter", "training",
}

// String returns the slot's snake_case contract name.
func (s Slot) String() string {
	if s < NumSlots {
		return slotNames[s]
	}
	return "unknown"
}
