"""transformers 5.23 `kimi_linear` on CPU with the shrunk config (../mlx/shrunk.json, random
weights): one forward over a prompt with a DynamicCache, then every cache layer's tensors
(shape, dtype, bytes). Then 3 greedy decode steps (seq_len 1) and the cache again.
    ~/.gt-venv/bin/python cache.py ../mlx/shrunk.json PROMPT DTYPE(bf16|float32)
"""
import json
import sys

import torch
from transformers import AutoConfig, AutoModelForCausalLM, DynamicCache

cfg = json.load(open(sys.argv[1]))
prompt = int(sys.argv[2])
dtype = {"bf16": torch.bfloat16, "float32": torch.float32}[sys.argv[3]]
cfg.pop("auto_map", None)
mt = cfg.pop("model_type")
cfg.update(pad_token_id=0, bos_token_id=1, eos_token_id=2)  # default pad id 163839 > shrunk vocab
config = AutoConfig.for_model(mt, **cfg)
torch.manual_seed(0)
model = AutoModelForCausalLM.from_config(config, dtype=dtype).eval()


def tensors(obj):
    out = {}
    for k, v in vars(obj).items():
        if isinstance(v, torch.Tensor) and v.numel() > 0:
            out[k] = [list(v.shape), str(v.dtype), v.numel() * v.element_size()]
        elif isinstance(v, dict):
            for i, t in v.items():
                if isinstance(t, torch.Tensor):
                    out[f"{k}[{i}]"] = [list(t.shape), str(t.dtype), t.numel() * t.element_size()]
    return out


def report(cache):
    layers = []
    for i, l in enumerate(cache.layers):
        t = tensors(l)
        layers.append({"layer": i, "type": type(l).__name__, "tensors": t, "nbytes": sum(x[2] for x in t.values())})
    return layers


ids = torch.tensor([[(7 * i) % 97 + 1 for i in range(prompt)]])
cache = DynamicCache(config=config)
with torch.no_grad():
    out = model(ids, past_key_values=cache, use_cache=True)
    row = {"prompt": prompt, "dtype": sys.argv[3], "after_prefill": report(cache)}
    nxt = out.logits[:, -1:].argmax(-1)
    for _ in range(3):
        out = model(nxt, past_key_values=cache, use_cache=True)
        nxt = out.logits[:, -1:].argmax(-1)
    row["after_3_decode"] = report(cache)
print(json.dumps(row))
