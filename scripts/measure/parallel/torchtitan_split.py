#!/usr/bin/env python3
"""How torchtitan cuts a model's decoder layers into pipeline stages, from its own function.

  python3 torchtitan_split.py PIPELINE_PARALLEL_PY > raw/torchtitan_split.jsonl

PIPELINE_PARALLEL_PY: torchtitan's `torchtitan/distributed/pipeline_parallel.py` (v0.2.2, commit
73a0e6979dd10b6b1904098eb3c8f62c18ab87ce: `git show 73a0e69:torchtitan/distributed/pipeline_parallel.py`).
Its `generate_llm_fqn_per_model_part` runs as written, with `input_weight` and `output_weight`
(`pipeline_parallel_first_stage_less_layers` and `..._last_stage_less_layers`) at torchtitan's
defaults, 1 each, and then over 0 to 3 each. One JSON line per (stages, layers, weights): each
stage's decoder layers as [start, end), or the error torchtitan raises; the weights are written
only where they are not the defaults.
"""
import ast
import json
import sys

src = open(sys.argv[1]).read()
tree = ast.parse(src)
fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "generate_llm_fqn_per_model_part")
ns = {}
exec(compile(ast.Module(body=[fn], type_ignores=[]), "pipeline_parallel.py", "exec"), ns)
split = ns["generate_llm_fqn_per_model_part"]

def row(stages, layers, w_in, w_out):
    key = dict(stages=stages, layers=layers)
    if (w_in, w_out) != (1, 1):
        key.update(first_less=w_in, last_less=w_out)
    try:
        parts = split(stages, layers, w_in, w_out)
    except ValueError as e:
        return dict(key, error=str(e))
    ranges = []
    for p in parts:
        idx = [int(m.split(".")[1]) for m in p if m.startswith("layers.")]
        ranges.append([idx[0], idx[-1] + 1] if idx else None)
    return dict(key, ranges=ranges)


for stages in (2, 3, 4, 6, 8):
    for layers in (2, 4, 6, 16, 22, 28, 32, 36, 40, 80, 126):
        print(json.dumps(row(stages, layers, 1, 1)))
for w_in in range(4):
    for w_out in range(4):
        if (w_in, w_out) == (1, 1):
            continue
        for stages in (2, 3, 4, 8):
            for layers in (3, 6, 16, 22, 32, 61):
                print(json.dumps(row(stages, layers, w_in, w_out)))
