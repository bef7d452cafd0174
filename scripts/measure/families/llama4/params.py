"""Parameter count and tensors of a Llama 4 text config (transformers 5.23, meta device).
   ~/.gt-venv/bin/python params.py scout-text.json"""
import json, sys, torch, transformers
from transformers import AutoConfig, AutoModelForCausalLM
cfg = AutoConfig.for_model(**json.load(open(sys.argv[1])))
with torch.device("meta"):
    m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
n = sum(p.numel() for p in m.parameters())
print(json.dumps({"transformers": transformers.__version__, "class": type(m).__name__,
                  "params": n, "tensors": len(list(m.parameters())),
                  "buffers": {k: list(b.shape) for k, b in m.named_buffers()}}))
for k, p in list(m.named_parameters())[:16]:
    print(k, list(p.shape))
