"""Parameter counts of the Gemma 3n text models (transformers 5.23,
Gemma3nForCausalLM(text_config) on the meta device), grouped by module.
  ~/.gt-venv/bin/python scripts/measure/families/gemma3n/params.py > .../params.txt
"""
import collections, re, sys, pathlib
import torch
sys.path.insert(0, str(pathlib.Path(__file__).parent))
import configs
import transformers
from transformers import Gemma3nTextConfig, Gemma3nForCausalLM

print("torch", torch.__version__, "transformers", transformers.__version__)


def group(name):
    n = re.sub(r"layers\.\d+\.", "layers.N.", name)
    n = re.sub(r"\.\d+\.", ".N.", n)
    return n


for label, c in [("E2B", configs.E2B), ("E4B", configs.E4B), ("TINY", configs.TINY)]:
    cfg = Gemma3nTextConfig(**c)
    with torch.device("meta"):
        m = Gemma3nForCausalLM(cfg)
    names = dict(m.named_parameters(remove_duplicate=False))
    uniq = dict(m.named_parameters())
    total = sum(p.numel() for p in uniq.values())
    print(f"\n== {label}: {total:,} parameters (unique), {len(uniq)} tensors; "
          f"with tied lm_head counted twice: {sum(p.numel() for p in names.values()):,}")
    print("kv_sharing_modes:", cfg.kv_sharing_modes)
    print("layers without k_proj:", [i for i, l in enumerate(m.model.layers) if not hasattr(l.self_attn, "k_proj")])
    g = collections.OrderedDict()
    for n, p in uniq.items():
        k = group(n)
        cnt, shape, num = g.get(k, (0, tuple(p.shape), 0))
        g[k] = (cnt + 1, tuple(p.shape), num + p.numel())
    for k, (cnt, shape, num) in g.items():
        print(f"  {k:70s} x{cnt:3d} shape {str(shape):22s} {num:>15,}")
    emb = uniq["model.embed_tokens.weight"].numel()
    ple = uniq["model.embed_tokens_per_layer.weight"].numel()
    print(f"  embed_tokens {emb:,}; embed_tokens_per_layer {ple:,}; rest {total-emb-ple:,}")
    if label != "TINY":
        ff = sum(p.numel() for n, p in uniq.items() if ".mlp." in n)
        print(f"  MLP total {ff:,}")
