"""Parameter count of Kimi-Linear-48B-A3B-Instruct's config.json with transformers' own
`kimi_linear` model type (transformers 5.23, torch 2.15, meta device: nothing allocated).
    ~/.gt-venv/bin/python params.py ../config.json
Prints one JSON line: total parameters, by dtype-free kind, per layer kind, and the model class.
"""
import collections
import json
import re
import sys

import torch
from transformers import AutoConfig, AutoModelForCausalLM

cfg_dict = json.load(open(sys.argv[1]))
cfg_dict.pop("auto_map", None)   # use transformers' built-in kimi_linear, not remote code
mt = cfg_dict.pop("model_type")
config = AutoConfig.for_model(mt, **cfg_dict)
with torch.device("meta"):
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
by_kind = collections.Counter()
names = {}
for n, p in model.named_parameters():
    k = re.sub(r"layers\.\d+\.", "layers.N.", n)
    k = re.sub(r"experts\.\d+\.", "experts.E.", k)
    by_kind[k] += p.numel()
    names.setdefault(k, [list(p.shape), str(p.dtype), 0])
    names[k][2] += 1
total = sum(p.numel() for p in model.parameters())
bufs = {n: [list(b.shape), str(b.dtype)] for n, b in model.named_buffers()}
row = {"transformers": __import__("transformers").__version__, "torch": torch.__version__,
       "class": type(model).__name__, "config_class": type(config).__name__, "total_params": total,
       "bf16_bytes_if_all_bf16": 2 * total,
       "by_kind": {k: {"params": v, "shape": names[k][0], "dtype": names[k][1], "tensors": names[k][2]} for k, v in by_kind.items()},
       "buffers": bufs}
print(json.dumps(row))
