#!/usr/bin/env python3
"""Generator of dequant_sha256.json: the independent reference that
TestDequantMatchesReference checks kernels.DequantRow against.

This is Kiln's own script. It reads every non-F32 tensor of every GGUF in
../shared/models/ref/ with llama.cpp's gguf-py package (GGUFReader and its
numpy dequantizers in gguf/quants.py, which the reference README says are
bit-identical to ggml's dequantize_row_*), and records the sha256 of each
tensor's dequantized values as float32 little-endian bytes, in row-major
order (ggml ne[0] fastest).

Usage (gguf-py from llama.cpp commit c392e5094deaf2d1a7c18683214f007fad3fe42b,
the commit that made the reference files; needs python3-numpy):

    python3 gen_dequant_sha256.py /path/to/llama.cpp/gguf-py \
        ../../../../shared/models/ref > dequant_sha256.json
"""
import hashlib
import json
import os
import sys
import types

import numpy as np


def load_gguf_py(path):
    # gguf/__init__ imports vocab.py, which wants sentencepiece; the
    # dequantizers do not use it, so a stand-in module is enough.
    if "sentencepiece" not in sys.modules:
        sp = types.ModuleType("sentencepiece")
        sp.SentencePieceProcessor = object
        sys.modules["sentencepiece"] = sp
    sys.path.insert(0, path)
    import gguf  # noqa: E402
    return gguf


def main():
    gguf = load_gguf_py(sys.argv[1])
    ref = sys.argv[2]
    out = {"generator": "gen_dequant_sha256.py", "gguf_py_numpy": np.__version__, "files": {}}
    for name in sorted(os.listdir(ref)):
        if not name.endswith(".gguf"):
            continue
        reader = gguf.GGUFReader(os.path.join(ref, name))
        tensors = {}
        for t in reader.tensors:
            qtype = gguf.GGMLQuantizationType(t.tensor_type)
            if qtype == gguf.GGMLQuantizationType.F32:
                continue
            vals = gguf.quants.dequantize(t.data, qtype)
            vals = np.ascontiguousarray(vals, dtype="<f4")
            if vals.size != int(np.prod(t.shape)):
                raise SystemExit(f"{name} {t.name}: {vals.size} values for shape {t.shape}")
            tensors[t.name] = {
                "type": qtype.name,
                "elements": int(vals.size),
                "sha256": hashlib.sha256(vals.tobytes()).hexdigest(),
            }
        if tensors:
            out["files"][name] = tensors
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
