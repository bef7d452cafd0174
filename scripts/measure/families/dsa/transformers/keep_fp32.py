"""Does from_pretrained(dtype=bfloat16) keep indexer.weights_proj (and e_score_correction_bias)
in float32 (`_keep_in_fp32_modules`, `_keep_in_fp32_modules_strict`)? A shrunk model of each
family saved with save_pretrained and loaded back."""
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
from params import CONFIGS, SHRUNK  # noqa: E402
from transformers import AutoConfig  # noqa: E402

for name in ("DeepSeek-V3.2.json", "GLM-5.1.json"):
    raw = json.load(open(CONFIGS / name))
    raw = {k: v for k, v in raw.items() if k not in ("architectures", "quantization_config")}
    raw.update({k: v for k, v in SHRUNK.items() if k != "quantization_config"})
    cfg = AutoConfig.for_model(**raw)
    m = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    with tempfile.TemporaryDirectory() as d:
        m.save_pretrained(d)
        for dt in (torch.bfloat16, torch.float16):
            l = AutoModelForCausalLM.from_pretrained(d, dtype=dt)
            by = defaultdict(lambda: defaultdict(int))
            for n, p in list(l.named_parameters()) + list(l.named_buffers()):
                key = n.split(".")[-2] + "." + n.split(".")[-1] if "layers" in n else n
                by[key][str(p.dtype)] += p.numel()
            fp32 = {k: dict(v) for k, v in by.items() if "torch.float32" in v}
            print(json.dumps({"config": name, "load_dtype": str(dt), "fp32_tensors": fp32}))
