#!/usr/bin/env python3
"""Writes pretokenize.golden.json: the words the GPT-2, Llama 3, Qwen2 and
Qwen3.5 pre-tokenizer regular expressions (and SmolLM's isolated digits + GPT-2) cut
test strings into, computed with the Python `regex` module, which implements
the lookahead and Unicode classes the patterns use. The Go splitters in
pretokenize.go must reproduce every split.

    python3 gen_pretokenize.py > pretokenize.golden.json
"""
import json
import random

import regex

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
QWEN2 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
# Qwen3.5's tokenizer.json pattern (llama.cpp LLAMA_VOCAB_PRE_TYPE_QWEN35).
QWEN35 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""


def split(pattern, s):
    return [m.group(0) for m in regex.finditer(pattern, s)]


def digits_gpt2(s):
    out = []
    for piece in regex.split(r"(\p{N})", s):
        if piece == "":
            continue
        if regex.fullmatch(r"\p{N}", piece):
            out.append(piece)
        else:
            out.extend(split(GPT2, piece))
    return out


FIXED = [
    "", " ", "  ", "\n", "\n\n\n", "\t\n", " \n ", "a  \n  b", "  \n\n  x", "x  ", "x \n",
    "Hello world", " Hello  World!", "I'm sure you're right, they'll see.",
    "'S 'LL 'Re 'vE 'd", "x'sy 'sup", "''''s", "123456789 12 1",
    "\u0661\u0662\u0663\u0664 \u216b \u00bd",  # Arabic-Indic digits, Roman numeral, vulgar fraction
    "\r\n\r\nfoo", "foo\r\n\r\n", " !!!\n\n", "\t\tx", "\u00a0x \u3000y",
    "\u4e2d\u6587abc def", "caf\u00e9 na\u00efve", "emoji \U0001F600\U0001F389 ok",
    "def f(x):\n    return x**2\n", "price: $19.99 (\u20ac17.50)", "a.b,c;d", " .\n.",
    "ALL CAPS", "snake_case_name CamelCase", "\u0041\u030a ring", "\ud7a3\u3131",
    # Combining marks, where Qwen3.5 differs from Qwen2.
    "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e",  # Hindi
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e04\u0e23\u0e31\u0e1a",  # Thai
    "e\u0301t\u0301e\u0301 cafe\u0301!", "\u0301\u0301x", " \u0301.", "\u0301\n", "x\u20dd\u0488 ",
    "1\u0301 2\u20e3", "'s\u0301 \u0301's", "\u064a\u064e\u0627 \u05e9\u05b8\u05c1", "\u0915\u093f 1\u0966",
]

# Marks of each kind (Mn, Mc, Me) among letters, digits, spaces and symbols.
MARKS = list("aZ 09'sS.!\t\n") + [
    "\u0301", "\u0308", "\u093e", "\u0947", "\u094d", "\u0e31", "\u0e35", "\u20dd", "\u0488",
    "\u0928", "\u0e2a", "\u0966", "\u00a0", "  ", "\r\n",
]

ALPHABET = list("aZ 0129'sStTrReEvVmMlLdD.,!?-_()\t\n\r") + [
    "\u00e9", "\u00bd", "\u0661", "\u00a0", "\u3000", "\u2028", "\u4e2d", "\U0001F600",
    "\u0301", "\u05d0", "\u216b", "  ", "\r\n", "'",
]


def main():
    rng = random.Random(1)
    texts = list(FIXED)
    for _ in range(400):
        texts.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 16))))
    for _ in range(200):
        texts.append("".join(rng.choice(MARKS) for _ in range(rng.randint(1, 16))))
    cases = []
    for t in texts:
        cases.append({
            "text": t,
            "gpt2": split(GPT2, t),
            "llama3": split(LLAMA3, t),
            "qwen2": split(QWEN2, t),
            "qwen35": split(QWEN35, t),
            "digits_gpt2": digits_gpt2(t),
        })
    json.dump({"source": "gen_pretokenize.py (Python regex " + regex.__version__ + ")", "cases": cases},
              __import__("sys").stdout, ensure_ascii=True, indent=1)


main()
