#!/usr/bin/env bash
# Streams one chat completion from kiln serve with curl and prints a
# per-token timing table from the kiln.token_timing events (needs jq).
#
#   examples/clients/stream-timing.sh "Explain the pause." [--url http://127.0.0.1:8420]
#       [--model kiln-tiny] [--token TOKEN] [--max-tokens 32]
#
# --token defaults to KILN_ACCESS_TOKEN, --url to KILN_BASE_URL. A refused
# connection or a 401 prints one line saying what to do.
set -euo pipefail
base=${KILN_BASE_URL:-http://127.0.0.1:8420}
model=kiln-tiny
token=${KILN_ACCESS_TOKEN:-}
max_tokens=32
words=()
while [ $# -gt 0 ]; do
	case "$1" in
	--url | --base-url) base=$2; shift 2 ;;
	--model) model=$2; shift 2 ;;
	--token) token=$2; shift 2 ;;
	--max-tokens) max_tokens=$2; shift 2 ;;
	-h | --help) sed -n '2,9p' "$0"; exit 0 ;;
	*) words+=("$1"); shift ;;
	esac
done
prompt=${words[*]:-Explain the pause.}
base=${base%/}
base=${base%/v1}
auth=()
[ -n "$token" ] && auth=(-H "Authorization: Bearer $token")

# One cheap request first, so a server that is down or wants a token gets
# a one-line cause rather than a jq error from the stream.
status=$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "$base/v1/models") || {
	echo "stream-timing: cannot reach $base: connection refused or no route (is kiln serve running there? see --url)" >&2
	exit 1
}
case "$status" in
200) ;;
401) echo "stream-timing: 401 from $base: the server wants its access token (--token or KILN_ACCESS_TOKEN)" >&2; exit 1 ;;
*) echo "stream-timing: HTTP $status from $base/v1/models" >&2; exit 1 ;;
esac

body=$(jq -n --arg p "$prompt" --arg m "$model" --argjson n "$max_tokens" '{model: $m, stream: true, include_performance: true,
  max_tokens: $n, temperature: 0, messages: [{role: "user", content: $p}]}')

# A request the server refuses (a wrong --model, a bad --max-tokens) is
# answered with one JSON error object instead of a stream: print its
# message on one line and exit 1 rather than an empty table.
printf '%4s %6s %10s %12s %9s %-18s %10s\n' idx token ready_ms enqueued_ms queue_ms blocking_phase blocking_ms
curl -sN "${auth[@]}" -H 'Content-Type: application/json' -d "$body" -w '\n' "$base/v1/chat/completions" |
  sed -n -e 's/^data: //' -e '/^{/p' | grep -v '^\[DONE\]$' |
  jq -r --arg base "$base" 'def r: if . == null then "null" else (. * 100 | round / 100) end;
    if .error != null then
      ("stream-timing: \($base) refused the request: \(.error.message)\n" | halt_error(1))
    elif .object == "kiln.token_timing" then
      [.token_index, .token_id, (.ready_ms|r), (.body_enqueued_ms|r),
       (.queue_delay_ms|r), (.blocking_phase // "null"), (.blocking_phase_ms|r)] | @tsv
    elif (.choices[0].finish_reason // null) != null and .metadata.performance.latency != null then
      .metadata.performance.latency | "\nTTFT \(.ttft_ms|r) ms  ITL p50 \(.itl_ms_p50|r) ms  p99 \(.itl_ms_p99|r) ms  stalls \(.stall_count)"
    else empty end' |
  awk -F'\t' 'NF>1 {printf "%4s %6s %10s %12s %9s %-18s %10s\n", $1,$2,$3,$4,$5,$6,$7; next} {print}'
