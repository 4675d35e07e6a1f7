package telemetry

// The three gauges of the Gateway API Inference Extension's model-server
// protocol, which its Endpoint Picker scrapes from every replica to pick
// one (examples/gateway). Each is unlabelled, a Prometheus gauge, and has
// exactly the protocol's semantics.
//
// The protocol's LoRA-affinity metric is left out: it carries the names
// of the adapters running and waiting as label values, and an adapter
// name is never a metric label here (docs/latency-guide.md#prometheus),
// since names are unbounded and chosen by whoever writes the adapter
// directory.
const (
	// MetricQueuedRequests is TotalQueuedRequests: the requests waiting
	// for admission into the engine's batch now.
	MetricQueuedRequests = "kiln_batching_engine_queue_depth"
	// MetricRunningRequests is TotalRunningRequests: the requests
	// admitted and generating now (prefilling or decoding).
	MetricRunningRequests = "kiln_batching_engine_active_requests"
	// MetricKVUtilization is KVCacheUtilization: the KV positions active
	// requests have reserved over the positions admission may reserve, a
	// fraction from 0 to 1. Idle prefix-cache blocks do not count: the
	// cache gives them up for an admission that needs the room.
	MetricKVUtilization = "kiln_batching_engine_kv_utilization_ratio"
)
