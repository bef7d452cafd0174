#!/usr/bin/env python3
"""Which config.json fixtures does transformers refuse when it loads them (AutoConfig on a
directory holding each, as from_pretrained reads it)? Needs only transformers, no torch.

    python scripts/measure/families/strict/check_all.py < /dev/null

Output of 2026-12-03 with transformers 5.23.0 (~/.gguf-venv): raw/check_all.txt (stdin closed,
so the remote-code prompt answers itself).
"""
import json, os, sys, tempfile, glob, warnings, logging
logging.disable(logging.WARNING)
import transformers
from transformers import AutoConfig
print("transformers", transformers.__version__)
for path in sorted(glob.glob("crates/core/tests/fixtures/hf_configs/*.json")):
    try:
        cfg = {k: v for k, v in json.load(open(path)).items() if not k.startswith("_")}
    except Exception as e:
        print(os.path.basename(path), "unreadable", e); continue
    d = tempfile.mkdtemp()
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    try:
        AutoConfig.from_pretrained(d)
        r = "ok"
    except Exception as e:
        r = type(e).__name__ + ": " + " ".join(str(e).split())[:300]
    print(os.path.basename(path), r)
