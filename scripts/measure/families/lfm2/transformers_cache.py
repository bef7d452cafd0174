"""What transformers 5.23's cache holds for LFM2 after generate (a read of the shapes, no
memory measurement): the tiny shape of lfm2_gguf.py (8 layers, attention on 2 and 5, hidden
512, 8 heads of 64, 2 KV heads, L_cache 3) in bf16 on the CPU, random weights.

    ~/.gt-venv/bin/python transformers_cache.py
"""
import json

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

raw = json.load(open(__file__.rsplit("/", 1)[0] + "/lfm2-1.2b.json"))
raw.update(hidden_size=512, block_dim=512, conv_dim=512, conv_dim_out=512, num_attention_heads=8,
           num_heads=8, num_key_value_heads=2, head_dim=64, num_hidden_layers=8, full_attn_idxs=[2, 5],
           block_ff_dim=1536, intermediate_size=1024, vocab_size=1024)
cfg = AutoConfig.for_model(**raw)
torch.manual_seed(0)
m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16).eval()
ids = torch.randint(3, 1000, (2, 100))
out = m.generate(ids, max_new_tokens=20, min_new_tokens=20, do_sample=False, return_dict_in_generate=True)
pkv = out.past_key_values
print(json.dumps({"transformers": transformers.__version__, "cache": type(pkv).__name__}))
for i, layer in enumerate(pkv.layers):
    d = {"layer": i, "type": type(layer).__name__}
    for name in ("keys", "values"):
        t = getattr(layer, name, None)
        if isinstance(t, torch.Tensor) and t.numel():
            d[name] = [list(t.shape), str(t.dtype), t.numel() * t.element_size()]
    for k, t in (getattr(layer, "conv_states", None) or {}).items():
        if t is not None:
            d[f"conv_states[{k}]"] = [list(t.shape), str(t.dtype), t.numel() * t.element_size()]
    print(json.dumps(d))
