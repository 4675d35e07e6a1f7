// Package bench is the workload runner behind `kiln bench`: it drives any
// OpenAI-compatible /v1/chat/completions endpoint with a source-bound
// workload (the same prompts, seed and order every run), measures what the
// client sees per request (TTFT, every inter-chunk gap, end-to-end time,
// output tokens, the prompt and cached tokens the server reports),
// optionally collects Kiln's own kiln.token_timing events and terminal
// summaries beside them, and keeps everything, failed requests included,
// as evidence.
//
// A workload is independent requests or conversations (Workload.Turns):
// each turn of a conversation resends its history with the server's own
// earlier replies, so a multi-turn chat measures what a prefix cache
// saves. Workload.SystemPromptTokens puts one shared system prompt before
// every prompt (many users behind one system prompt).
//
// Goroutines: Run starts Concurrency workers and returns when they are all
// done (request count reached, duration over, or ctx cancelled); it leaves
// nothing running. WatchPrefixCache starts one goroutine that polls the
// server's prefix cache figures until Watcher.Stop, which waits for it.
// Arm (arms.go) starts one `kiln serve` child process per comparison arm
// and stops it before the next.
package bench
