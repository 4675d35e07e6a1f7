package telemetry

// The adapter swap (docs/maintenance.md sections 5 and 9): its span, its
// attributes and its link kind. Adapter names are span attributes only,
// never metric labels (the adapter gauges of adapter_metric.go carry none).
const (
	// SpanAdapterSwap is one adapter swap at the actor barrier, the root
	// of its own trace: from the swap's queueing through the batch's
	// drain to the switch of weights.
	SpanAdapterSwap = "kiln.adapter_swap"

	AttrAdapterFrom     = "kiln.adapter.from"     // the adapter loaded before ("base": none)
	AttrAdapterTo       = "kiln.adapter.to"       // the adapter loaded after ("base": none)
	AttrAdapterRevision = "kiln.adapter.revision" // sha256 of the adapter's files, or "base"
	AttrAdapterWaitMs   = "kiln.adapter.wait_ms"  // from queueing to the switch's start (the drain)
	AttrAdapterApplyMs  = "kiln.adapter.apply_ms" // the switch itself, under exclusive ownership
)
