#!/usr/bin/env python3
"""Generator of random_blocks.json: blocks of random bytes of every
quantized type kernels supports, with the sha256 of their values as
dequantized by llama.cpp's gguf-py (numpy), for TestDequantRandomBlocks.

This is Kiln's own script. Every byte of every block is random except the
half-precision scales and mins, which are random finite halves, so that all
bit patterns of the quants and packed sub-block scales occur. Unlike the
reference models in ../shared, the data is stored here, so the test runs
without ../shared.

Usage (gguf-py from llama.cpp commit c392e5094deaf2d1a7c18683214f007fad3fe42b;
needs python3-numpy):

    python3 gen_random_blocks.py /path/to/llama.cpp/gguf-py > random_blocks.json
"""
import base64
import hashlib
import json
import sys
import types

import numpy as np

# type name -> (ggml type, block bytes, byte offsets of the half fields)
TYPES = {
    "Q4_0": (2, 18, [0]),
    "Q4_1": (3, 20, [0, 2]),
    "Q5_0": (6, 22, [0]),
    "Q5_1": (7, 24, [0, 2]),
    "Q8_0": (8, 34, [0]),
    "Q2_K": (10, 84, [80, 82]),
    "Q3_K": (11, 110, [108]),
    "Q4_K": (12, 144, [0, 2]),
    "Q5_K": (13, 176, [0, 2]),
    "Q6_K": (14, 210, [208]),
    "BF16": (30, 2, []),
}
BLOCKS = 48


def main():
    sp = types.ModuleType("sentencepiece")
    sp.SentencePieceProcessor = object
    sys.modules["sentencepiece"] = sp
    sys.path.insert(0, sys.argv[1])
    import gguf  # noqa: E402

    rng = np.random.default_rng(9009)
    out = {"generator": "gen_random_blocks.py", "types": {}}
    for name, (code, size, halves) in TYPES.items():
        n = BLOCKS * (size if code != 30 else 256)
        raw = rng.integers(0, 256, size=n, dtype=np.uint8)
        if code == 30:
            # bfloat16 from random float32 values of varied magnitude
            vals = (rng.standard_normal(n // 2) * np.exp2(rng.integers(-20, 20, n // 2))).astype(np.float32)
            raw = (vals.view(np.uint32) >> 16).astype(np.uint16).view(np.uint8)
        blocks = raw.reshape(-1, size)
        for off in halves:
            h = (rng.standard_normal(blocks.shape[0]) * np.exp2(rng.integers(-14, 4, blocks.shape[0]))).astype(np.float16)
            blocks[:, off:off + 2] = h.view(np.uint8).reshape(-1, 2)
        raw = blocks.reshape(-1)
        qtype = gguf.GGMLQuantizationType(code)
        vals = np.ascontiguousarray(gguf.quants.dequantize(raw, qtype), dtype="<f4")
        out["types"][name] = {
            "type": code,
            "elements": int(vals.size),
            "data": base64.b64encode(raw.tobytes()).decode(),
            "sha256": hashlib.sha256(vals.tobytes()).hexdigest(),
        }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
