"""transformers 5.23 generate on a shrunk GLM-5.2-style config (index_topk_freq 4,
index_skip_topk_offset 3: indexers on layers 0,1,2,6 of 8): which layers hold indexer keys."""
import json
import sys
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModelForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from params import CONFIGS, SHRUNK  # noqa: E402

raw = json.load(open(CONFIGS / "GLM-5.2.partial.json"))
raw = {k: v for k, v in raw.items() if k != "architectures"}
raw.update({k: v for k, v in SHRUNK.items() if k != "quantization_config"})
raw.update(num_hidden_layers=8, index_topk=16)
cfg = AutoConfig.for_model(**raw)
torch.manual_seed(0)
m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16).eval()
ids = torch.tensor([[(7 * i) % 997 + 1 for i in range(40)]])
out = m.generate(ids, max_new_tokens=3, min_new_tokens=3, do_sample=False, return_dict_in_generate=True, pad_token_id=0)
rows = []
for i, l in enumerate(out.past_key_values.layers):
    ik = l.indexer_keys
    rows.append({"layer": i, "indexer_type": cfg.indexer_types[i], "has_indexer_module": m.model.layers[i].self_attn.indexer is not None,
                 "keys": list(l.keys.shape), "values": list(l.values.shape),
                 "indexer_keys": None if ik is None else [list(ik.shape), str(ik.dtype)]})
print(json.dumps({"indexer_types": cfg.indexer_types, "layers": rows}))
