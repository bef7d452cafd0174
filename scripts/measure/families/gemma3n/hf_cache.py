"""What transformers 5.23's generate() keeps in its cache for Gemma 3n, on
configs.TINY (10 layers, full at 4 and 9, last 4 sharing KV, window 8,
1 KV head x 32), random weights, bf16 and fp32, prompts shorter and longer
than the window.
  ~/.gt-venv/bin/python scripts/measure/families/gemma3n/hf_cache.py > .../hf_cache.txt
"""
import sys, pathlib
import torch
sys.path.insert(0, str(pathlib.Path(__file__).parent))
import configs
from transformers import Gemma3nTextConfig, Gemma3nForCausalLM

torch.manual_seed(0)
cfg = Gemma3nTextConfig(**configs.TINY)
print("layer_types", cfg.layer_types)
print("kv_sharing_modes", cfg.kv_sharing_modes)
for dtype in (torch.float32, torch.bfloat16):
    m = Gemma3nForCausalLM(cfg).to(dtype).eval()
    for prompt, new in ((5, 2), (20, 6)):
        ids = torch.randint(3, 60, (1, prompt))
        out = m.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False,
                         return_dict_in_generate=True, use_cache=True)
        c = out.past_key_values
        print(f"\n== {dtype} prompt {prompt} + {new} new -> cache {type(c).__name__}, "
              f"{len(c.layers)} layers")
        total = 0
        for i, layer in enumerate(c.layers):
            k = getattr(layer, "keys", None)
            v = getattr(layer, "values", None)
            if k is None or (hasattr(k, "numel") and k.numel() == 0):
                print(f"  layer {i}: {type(layer).__name__} empty")
                continue
            b = k.numel() * k.element_size() + v.numel() * v.element_size()
            total += b
            print(f"  layer {i}: {type(layer).__name__} k {tuple(k.shape)} {k.dtype} v {tuple(v.shape)} bytes {b}")
        print(f"  total K+V bytes {total}")
    # batch 2
    ids = torch.randint(3, 60, (2, 12))
    out = m.generate(ids, max_new_tokens=3, min_new_tokens=3, do_sample=False,
                     return_dict_in_generate=True, use_cache=True)
    c = out.past_key_values
    print(f"\n== {dtype} batch 2 prompt 12 + 3: " + "; ".join(
        f"{i}:{tuple(l.keys.shape)}" for i, l in enumerate(c.layers) if getattr(l, 'keys', None) is not None and l.keys.numel()))
