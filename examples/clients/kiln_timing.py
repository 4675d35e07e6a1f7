"""Read content and Kiln's per-token timing from one chat stream.

With ``include_performance`` true, Kiln interleaves two kinds of objects on
a chat stream: ordinary ``chat.completion.chunk`` objects (they have
``choices``) and, after each token's chunk, a ``kiln.token_timing`` event
(no ``choices``; its fields are the token's timing). The official ``openai``
Python package yields both as ``ChatCompletionChunk`` objects, so a loop
that reads ``chunk.choices[0].delta.content`` on every item fails on the
first timing event. Branch on ``object`` first::

    from openai import OpenAI
    import kiln_timing

    client = OpenAI(base_url="http://127.0.0.1:8420/v1", api_key="unused")
    stream = client.chat.completions.create(
        model="kiln-tiny", stream=True, max_tokens=32,
        messages=[{"role": "user", "content": "Explain the pause."}],
        extra_body={"include_performance": True},
    )
    timings = []
    for part in kiln_timing.split_stream(stream):
        if part.kind == "content":
            print(part.text, end="", flush=True)
        elif part.kind == "timing":
            timings.append(part.event)
    print()
    print(kiln_timing.format_timing_table(timings))

The helpers take either SDK objects or plain dicts, and need nothing
outside the standard library. Run as a script, the module reads a raw SSE
stream (what ``curl -N`` prints) on standard input and prints the content,
then the timing table and the summary::

    curl -sN 127.0.0.1:8420/v1/chat/completions -d '{...,"stream":true,"include_performance":true}' \\
        | python3 examples/clients/kiln_timing.py
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

TOKEN_TIMING = "kiln.token_timing"


def as_dict(item: Any) -> dict:
    """Returns a stream item as a plain dict.

    SDK objects (pydantic models) keep fields they do not declare, such as
    the timing event's, as extras; ``model_dump`` returns them too.
    """
    if isinstance(item, dict):
        return item
    for name in ("to_dict", "model_dump"):
        dump = getattr(item, name, None)
        if callable(dump):
            return dump()
    return dict(vars(item))


def is_token_timing(item: Any) -> bool:
    """True when a stream item is a kiln.token_timing event, not a chat chunk."""
    if isinstance(item, dict):
        return item.get("object") == TOKEN_TIMING
    return getattr(item, "object", None) == TOKEN_TIMING


@dataclass
class Part:
    """One piece of a split stream.

    kind is "content" (text holds it), "timing" (event holds the timing
    event as a dict) or "finish" (reason is the finish_reason; latency is
    metadata.performance.latency, or None when the request did not opt in).
    """

    kind: str
    text: str = ""
    event: dict = field(default_factory=dict)
    reason: str | None = None
    latency: dict | None = None


def split_stream(stream: Iterable[Any]) -> Iterator[Part]:
    """Splits a chat stream into content, timing and finish parts, in order.

    Chunks with neither content nor a finish reason (the role chunk) are
    skipped.
    """
    for item in stream:
        if is_token_timing(item):
            yield Part("timing", event=as_dict(item))
            continue
        chunk = as_dict(item)
        choices = chunk.get("choices") or []
        if not choices:
            continue
        choice = choices[0] or {}
        text = (choice.get("delta") or {}).get("content")
        if text:
            yield Part("content", text=text)
        if choice.get("finish_reason"):
            perf = (chunk.get("metadata") or {}).get("performance") or {}
            yield Part("finish", reason=choice["finish_reason"], latency=perf.get("latency"))


@dataclass
class Collected:
    """A whole stream: the content, the timing events, the end."""

    content: str = ""
    events: list = field(default_factory=list)
    finish_reason: str | None = None
    latency: dict | None = None


def collect(stream: Iterable[Any]) -> Collected:
    """Reads a whole stream into a Collected."""
    out = Collected()
    for part in split_stream(stream):
        if part.kind == "content":
            out.content += part.text
        elif part.kind == "timing":
            out.events.append(part.event)
        else:
            out.finish_reason, out.latency = part.reason, part.latency
    return out


def iter_sse(lines: Iterable[str]) -> Iterator[dict]:
    """Parses raw server-sent events into objects; stops at [DONE].

    A Kiln stream has one ``data:`` line per event, but the parser joins
    multi-line data as the SSE format allows.
    """
    data: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
            continue
        if line == "" and data:
            payload = "\n".join(data)
            data = []
            if payload == "[DONE]":
                return
            yield json.loads(payload)
    if data and "\n".join(data) != "[DONE]":
        yield json.loads("\n".join(data))


_COLUMNS = [
    ("idx", 4, "token_index"),
    ("token", 6, "token_id"),
    ("ready_ms", 10, "ready_ms"),
    ("enqueued_ms", 12, "body_enqueued_ms"),
    ("queue_ms", 9, "queue_delay_ms"),
    ("blocking_phase", 18, "blocking_phase"),
    ("blocking_ms", 12, "blocking_phase_ms"),
]


def _cell(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def format_timing_table(events: Iterable[dict]) -> str:
    """Formats timing events as a fixed-width table, one line per token."""
    lines = [" ".join(h.rjust(w) for h, w, _ in _COLUMNS)]
    for e in events:
        lines.append(" ".join(_cell(e.get(k)).rjust(w) for _, w, k in _COLUMNS))
    return "\n".join(lines)


def format_summary(latency: dict | None) -> str:
    """Formats the terminal latency summary as one line ("" when None)."""
    if not latency:
        return ""

    def f(v: Any) -> str:
        return f"{v:.2f} ms" if isinstance(v, (int, float)) else "n/a"

    return (f"TTFT {f(latency.get('ttft_ms'))}, ITL p50 {f(latency.get('itl_ms_p50'))}, "
            f"p99 {f(latency.get('itl_ms_p99'))}, stalls {latency.get('stall_count')}")


def main() -> int:
    got = collect(iter_sse(sys.stdin))
    print(got.content)
    print()
    print(format_timing_table(got.events))
    summary = format_summary(got.latency)
    if summary:
        print()
        print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
