#!/usr/bin/env python3
"""How torchtitan cuts a model's decoder layers into pipeline stages, from its own function.

  python3 torchtitan_split.py PIPELINE_PARALLEL_PY > raw/torchtitan_split.jsonl

PIPELINE_PARALLEL_PY: torchtitan's `torchtitan/distributed/pipeline_parallel.py` (v0.2.2, commit
73a0e6979dd10b6b1904098eb3c8f62c18ab87ce: `git show 73a0e69:torchtitan/distributed/pipeline_parallel.py`).
Its `generate_llm_fqn_per_model_part` runs as written, with `input_weight` and `output_weight` at
torchtitan's defaults (`pipeline_parallel_first_stage_less_layers` and `..._last_stage_less_layers`,
1 each). One JSON line per (stages, layers): each stage's decoder layers as [start, end), or the
error torchtitan raises.
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

for stages in (2, 3, 4, 6, 8):
    for layers in (2, 4, 6, 16, 22, 28, 32, 36, 40, 80, 126):
        try:
            parts = split(stages, layers, 1, 1)
        except ValueError as e:
            print(json.dumps(dict(stages=stages, layers=layers, error=str(e))))
            continue
        ranges = []
        for p in parts:
            idx = [int(m.split(".")[1]) for m in p if m.startswith("layers.")]
            ranges.append([idx[0], idx[-1] + 1] if idx else None)
        print(json.dumps(dict(stages=stages, layers=layers, ranges=ranges)))
