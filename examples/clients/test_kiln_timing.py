"""Tests of kiln_timing on a stream captured from kiln serve.

    python3 -m unittest discover -s examples/clients

testdata/stream-with-timing.sse is the raw body of a streamed chat request
with include_performance true and max_tokens 4 (curl -N). The Go end-to-end
test cmd/kiln/e2e_openai_test.go also pipes a live stream through the
module's script form.
"""

import os
import unittest

import kiln_timing

HERE = os.path.dirname(os.path.abspath(__file__))


def transcript():
    with open(os.path.join(HERE, "testdata", "stream-with-timing.sse"), encoding="utf-8") as f:
        return list(kiln_timing.iter_sse(f))


class FakeSDKObject:
    """Stands in for the SDK's ChatCompletionChunk: attribute access for
    declared fields, model_dump for everything (extras included). A timing
    event has no `choices` attribute at all, as with the real SDK."""

    def __init__(self, d):
        self._d = d
        for k, v in d.items():
            setattr(self, k, v)

    def model_dump(self):
        return dict(self._d)


class KilnTimingTest(unittest.TestCase):
    def test_iter_sse_stops_at_done(self):
        items = transcript()
        self.assertEqual(len(items), 9)  # 4 content chunks, 4 timing events, the finish chunk; nothing after [DONE]
        self.assertEqual(items[-1]["choices"][0]["finish_reason"], "length")

    def test_collect_dicts(self):
        got = kiln_timing.collect(transcript())
        self.assertEqual(got.content, " have as their as")
        self.assertEqual([e["token_index"] for e in got.events], [0, 1, 2, 3])
        self.assertIsNone(got.events[0]["blocking_phase"])
        self.assertEqual(got.events[1]["blocking_phase"], "actor_decode")
        self.assertEqual(got.finish_reason, "length")
        self.assertEqual(got.latency["emitted_tokens"], 4)

    def test_collect_sdk_objects(self):
        got = kiln_timing.collect(FakeSDKObject(d) for d in transcript())
        self.assertEqual(got.content, " have as their as")
        self.assertEqual(len(got.events), 4)
        self.assertEqual(got.latency["gap_samples"], 3)

    def test_split_order(self):
        kinds = [p.kind for p in kiln_timing.split_stream(transcript())]
        self.assertEqual(kinds, ["content", "timing"] * 4 + ["finish"])

    def test_without_opt_in(self):
        items = [i for i in transcript() if not kiln_timing.is_token_timing(i)]
        items[-1] = {k: v for k, v in items[-1].items() if k != "metadata"}
        got = kiln_timing.collect(items)
        self.assertEqual(got.events, [])
        self.assertIsNone(got.latency)
        self.assertEqual(kiln_timing.format_summary(got.latency), "")

    def test_table(self):
        got = kiln_timing.collect(transcript())
        lines = kiln_timing.format_timing_table(got.events).splitlines()
        self.assertEqual(len(lines), 5)
        self.assertEqual(lines[0].split(), ["idx", "token", "ready_ms", "enqueued_ms", "queue_ms",
                                            "blocking_phase", "blocking_ms"])
        self.assertEqual(lines[1].split()[-2:], ["null", "null"])
        self.assertEqual(lines[2].split()[5], "actor_decode")


if __name__ == "__main__":
    unittest.main()
