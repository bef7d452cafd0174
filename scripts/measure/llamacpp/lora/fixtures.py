#!/usr/bin/env python3
"""Header-only fixtures of two gen.py adapters, for the GGUF reader's tests:

    ~/.gguf-venv/bin/python scripts/measure/llamacpp/lora/fixtures.py crates/core/tests/fixtures/gguf

writes tiny-lora-attn-r8-f16.header.gguf and tiny-lora-allo-r64-q8_0.header.gguf: gen.py's
adapter() (convert_lora_to_gguf.py's layout) cut at the data section (gguf 0.19.0).
"""
import os
import sys
import tempfile

import gguf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

out = sys.argv[1]
for targets, rank, dt in (("attn", 8, "f16"), ("allo", 64, "q8_0")):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "a.gguf")
        gen.adapter(p, targets, rank, dt)
        r = gguf.GGUFReader(p)
        start = min(t.data_offset for t in r.tensors)
        with open(p, "rb") as f:
            head = f.read(start)
    name = os.path.join(out, f"tiny-lora-{targets}-r{rank}-{dt}.header.gguf")
    with open(name, "wb") as f:
        f.write(head)
    print(name, len(head))
