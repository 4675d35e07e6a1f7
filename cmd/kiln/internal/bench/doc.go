// Package bench is the workload runner behind `kiln bench`: it drives any
// OpenAI-compatible /v1/chat/completions endpoint with a source-bound
// workload (the same prompts, seed and order every run), measures what the
// client sees per request (TTFT, every inter-chunk gap, end-to-end time,
// output tokens), optionally collects Kiln's own kiln.token_timing events and
// terminal summaries beside them, and keeps everything, failed requests
// included, as evidence.
//
// Goroutines: Run starts Concurrency workers and returns when they are all
// done (request count reached, duration over, or ctx cancelled); it leaves
// nothing running. Arm (arms.go) starts one `kiln serve` child process per
// comparison arm and stops it before the next.
package bench
