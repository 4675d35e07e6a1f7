#!/usr/bin/env python3
"""Renders the tool-calling conversations of cases.json with Python's jinja2
as transformers' apply_chat_template sets it up (a sandboxed environment,
trim_blocks, lstrip_blocks, loopcontrols, a tojson that neither sorts keys
nor escapes non-ASCII or HTML characters, raise_exception, strftime_now),
the messages prepared as vLLM prepares them (tool-call arguments parsed
from their JSON text into dicts), and writes each case's prompt to
<case>.txt: the expectations of TestRenderTools (tools_test.go). Where
github.com/ardanlabs/jinja is known to render otherwise (engine_tojson), it
also writes what the engine renders to <case>.engine.txt, which the test
expects instead.

Run from this directory:  python3 render.py
(jinja2 3.1.6 wrote the committed files.) The templates are the testdata's,
Qwen3's from ../../../../../shared/tokenizers/qwen3/tokenizer_config.json,
and the default ChatML source, read out of ../../chatml.go.
"""
import datetime
import json
import os
import re

import jinja2
import jinja2.ext
import jinja2.sandbox

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "..", "..", "..", "shared")
NOW = datetime.datetime(2025, 2, 20, 23, 59)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def engine_tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    """tojson as github.com/ardanlabs/jinja v1.8.0 writes it: with an
    indent it goes through Go's json.MarshalIndent, which sorts the keys
    and escapes <, > and & (and U+2028, U+2029)."""
    if indent is None:
        return tojson(x, ensure_ascii, indent, separators, sort_keys)
    out = json.dumps(x, ensure_ascii=False, indent=indent, sort_keys=True)
    for c, e in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        out = out.replace(c, e)
    return out


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def environment(tojson=tojson):
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)
    return env


def source(name):
    if name == "chatml":
        go = open(os.path.join(HERE, "..", "..", "chatml.go")).read()
        return re.search(r"const chatMLSource = `(.*?)`", go, re.S).group(1)
    if name == "qwen3":
        path = os.path.join(SHARED, "tokenizers", "qwen3", "tokenizer_config.json")
        return json.load(open(path))["chat_template"]
    return open(os.path.join(HERE, "..", name)).read()


def prepare(messages, null_as_empty):
    out = []
    for m in messages:
        m = dict(m)
        if null_as_empty and m.get("content", "") is None:
            m["content"] = ""  # Qwen3's template cannot take none
        if "tool_calls" in m:
            calls = []
            for c in m["tool_calls"]:
                c = json.loads(json.dumps(c))
                args = c["function"].get("arguments")
                c["function"]["arguments"] = json.loads(args) if args else {}
                calls.append(c)
            m["tool_calls"] = calls
        out.append(m)
    return out


def render(env, cases, case):
    conv = cases["conversations"][case["conversation"]]
    tmpl = env.from_string(source(case["template"]))
    tools = cases["tools"] if conv.get("tools") else None
    return tmpl.render(
        messages=prepare(conv["messages"], case.get("null_as_empty", False)), tools=tools, documents=None,
        add_generation_prompt=True, bos_token=case.get("bos", ""), eos_token=case.get("eos", ""),
        **case.get("kwargs", {}))


def main():
    cases = json.load(open(os.path.join(HERE, "cases.json")))
    env, engine_env = environment(), environment(engine_tojson)
    for case in cases["cases"]:
        with open(os.path.join(HERE, case["name"] + ".txt"), "w") as f:
            f.write(render(env, cases, case))
        # Where the Go engine is known to write otherwise (its tojson with
        # an indent), <case>.engine.txt is what it writes: the test
        # expects that, until the engine is fixed.
        engine = render(engine_env, cases, case)
        path = os.path.join(HERE, case["name"] + ".engine.txt")
        if engine != render(env, cases, case):
            with open(path, "w") as f:
                f.write(engine)
        elif os.path.exists(path):
            os.remove(path)


if __name__ == "__main__":
    main()
