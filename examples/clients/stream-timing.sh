#!/usr/bin/env bash
# Streams one chat completion from kiln serve with curl and prints a
# per-token timing table from the kiln.token_timing events (needs jq).
#
#   examples/clients/stream-timing.sh "Explain the pause." [base-url]
set -euo pipefail
prompt=${1:-Explain the pause.}
base=${2:-${KILN_BASE_URL:-http://127.0.0.1:8420}}
auth=()
[ -n "${KILN_ACCESS_TOKEN:-}" ] && auth=(-H "Authorization: Bearer $KILN_ACCESS_TOKEN")

body=$(jq -n --arg p "$prompt" '{model: "kiln-tiny", stream: true, include_performance: true,
  max_tokens: 32, temperature: 0, messages: [{role: "user", content: $p}]}')

printf '%4s %6s %10s %12s %9s %-18s %10s\n' idx token ready_ms enqueued_ms queue_ms blocking_phase blocking_ms
curl -sN "${auth[@]}" -H 'Content-Type: application/json' -d "$body" "$base/v1/chat/completions" |
  sed -n 's/^data: //p' | grep -v '^\[DONE\]$' |
  jq -r 'if .object == "kiln.token_timing" then
      [.token_index, .token_id, (.ready_ms*100|round/100), (.body_enqueued_ms*100|round/100),
       (.queue_delay_ms*100|round/100), (.blocking_phase // "null"), (if .blocking_phase_ms == null then "null" else (.blocking_phase_ms*100|round/100) end)] | @tsv
    elif (.choices[0].finish_reason // null) != null and .metadata.performance.latency != null then
      .metadata.performance.latency | "\nTTFT \(.ttft_ms) ms  ITL p50 \(.itl_ms_p50) ms  p99 \(.itl_ms_p99) ms  stalls \(.stall_count)"
    else empty end' |
  awk -F'\t' 'NF>1 {printf "%4s %6s %10s %12s %9s %-18s %10s\n", $1,$2,$3,$4,$5,$6,$7; next} {print}'
