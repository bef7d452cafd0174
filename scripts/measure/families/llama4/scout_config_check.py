#!/usr/bin/env python3
"""Does transformers load the published Llama 4 Scout config.json? (issue 30)

    python scout_config_check.py [CONFIG=crates/core/tests/fixtures/hf_configs/llama4-scout.json]

Needs only transformers (no torch: the config classes). Loads the config as from_pretrained
does (AutoConfig on a directory holding it) and through Llama4Config.from_dict, and prints
what each gives. Output of 2026-12-03 with transformers 5.23.0: raw/scout_config_check.txt.
"""
import json
import os
import sys
import tempfile

import transformers
from transformers import AutoConfig, Llama4Config

path = sys.argv[1] if len(sys.argv) > 1 else "crates/core/tests/fixtures/hf_configs/llama4-scout.json"
cfg = {k: v for k, v in json.load(open(path)).items() if not k.startswith("_")}
text = cfg.get("text_config", cfg)
print("transformers", transformers.__version__)
print("attn_temperature_tuning =", repr(text.get("attn_temperature_tuning")))
d = tempfile.mkdtemp()
json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
for name, load in (("AutoConfig.from_pretrained", lambda: AutoConfig.from_pretrained(d)),
                   ("Llama4Config.from_dict", lambda: Llama4Config.from_dict(cfg))):
    try:
        c = load()
        print(name, "ok:", c.text_config.attn_temperature_tuning)
    except Exception as e:  # the validation error is the finding
        print(name, "raises", type(e).__name__ + ":", " ".join(str(e).split()))
