"""Gemma 4 text models as transformers 5.23 builds them: parameter count,
tensor count and the tensors of layers that differ, on the meta device.

Run: ~/.gt-venv/bin/python params.py > params.txt
Reads the fixtures crates/core/tests/fixtures/hf_configs/gemma4-*.json
(the published configs' text_config, see README.md).
"""
import json, pathlib, sys
import torch, transformers
from transformers import Gemma4ForCausalLM, Gemma4TextConfig

root = pathlib.Path(__file__).resolve().parents[3]
print(f"torch {torch.__version__} transformers {transformers.__version__}")
for name in ["gemma4-e2b", "gemma4-e4b", "gemma4-26b-a4b", "gemma4-31b"]:
    cfg = json.loads((root / f"crates/core/tests/fixtures/hf_configs/{name}.json").read_text())
    text = dict(cfg["text_config"])
    text.pop("model_type", None)
    c = Gemma4TextConfig(**text)
    with torch.device("meta"):
        m = Gemma4ForCausalLM(c)
    params = list(m.named_parameters())
    n = sum(p.numel() for _, p in params)
    bufs = [(k, tuple(b.shape), str(b.dtype)) for k, b in m.named_buffers()]
    print(f"{name}: params {n} tensors {len(params)} buffers {len(bufs)}")
    if "-v" in sys.argv:
        for k, p in params:
            if ".layers." in k and not any(f".layers.{i}." in k for i in (0, c.num_hidden_layers - 1, c.layer_types.index('full_attention'))):
                continue
            print(f"  {k} {tuple(p.shape)}")
        for b in bufs[:12]:
            print("  buffer", *b)

# The 12B is `gemma4_unified` (its text model `gemma4_unified_text`).
from transformers.models.gemma4_unified import Gemma4UnifiedForCausalLM, Gemma4UnifiedTextConfig
cfg = json.loads((root / "crates/core/tests/fixtures/hf_configs/gemma4-12b.json").read_text())
text = dict(cfg["text_config"])
text.pop("model_type", None)
with torch.device("meta"):
    m = Gemma4UnifiedForCausalLM(Gemma4UnifiedTextConfig(**text))
params = list(m.named_parameters())
print(f"gemma4-12b: params {sum(p.numel() for _, p in params)} tensors {len(params)} buffers {len(list(m.named_buffers()))}")
