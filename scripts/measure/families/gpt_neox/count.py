# Pythia's parameter counts: GPTNeoXForCausalLM built on the meta device
# from pythia-1b.json with each size's widths (the model card's table),
# against the card's "Non-Embedding Params". Output: count.txt.
#   ~/.gt-venv/bin/python scripts/measure/families/gpt_neox/count.py
import json, os, torch, transformers
from transformers import AutoModelForCausalLM
here = os.path.dirname(os.path.abspath(__file__))
base = json.load(open(os.path.join(here, "pythia-1b.json")))
rows = [("pythia-410m", 1024, 24, 16, 50304, 302311424), ("pythia-1b", 2048, 16, 8, 50304, 805736448),
        ("pythia-1.4b", 2048, 24, 16, 50304, 1208602624), ("pythia-2.8b", 2560, 32, 32, 50304, 2517652480),
        ("pythia-6.9b", 4096, 32, 32, 50432, 6444163072), ("pythia-12b", 5120, 36, 40, 50688, 11327027200)]
for name, h, l, nh, v, card in rows:
    c = {k: x for k, x in base.items() if k not in ("architectures", "model_type")}
    c.update(hidden_size=h, num_hidden_layers=l, num_attention_heads=nh, intermediate_size=4 * h, vocab_size=v)
    with torch.device("meta"):
        m = AutoModelForCausalLM.from_config(transformers.GPTNeoXConfig(**c))
    n = sum(p.numel() for p in m.parameters())
    emb = m.gpt_neox.embed_in.weight.numel() + m.lm_head.weight.numel()
    print(name, "total", n, "non-embedding", n - emb, "card", card, "equal" if n - emb == card else "DIFFERENT")
print("transformers", transformers.__version__, "torch", torch.__version__)
