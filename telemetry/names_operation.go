package telemetry

// Attributes every maintenance span carries.
const (
	// AttrOperationID is the engine's identity of the operation: a stall
	// span's link to it and a diagnosis record's blocker carry the same.
	AttrOperationID = "kiln.operation.id"
	// AttrOperationHoldMs is how long it held device ownership
	// exclusively (the sum of a sliced training step's slices).
	AttrOperationHoldMs = "kiln.operation.hold_ms"
	// AttrTrainingSlices is how many exclusive holds a training step took.
	AttrTrainingSlices = "kiln.training.slices"
)
