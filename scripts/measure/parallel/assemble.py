#!/usr/bin/env python
"""Raw rows of tp.py -> crates/core/tests/fixtures/tp_rows.jsonl: the latest `ok` row per tag, without
the debug allocations, with `shard` as the fixture's other files name it (`fsdp2` where FSDP2 shards the
data-parallel ranks, `none` otherwise) and the stack it ran.

    python3 assemble.py ../../../crates/core/tests/fixtures/hf_configs raw/tp523.jsonl raw/tp523_hybrid.jsonl > ../../../crates/core/tests/fixtures/tp_rows.jsonl

A config that is not one of the fixtures' (the shrunk hybrids of ../hybrid/configs/, Qwen3.6-27B's text
model) is carried in the row itself, as the other hybrid rows carry theirs.
"""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
rows = {}
for line in (l for path in sys.argv[2:] for l in open(path)):
    r = json.loads(line)
    if r.get("status") != "ok":
        continue
    r.pop("debug_allocs", None)
    r["shard"] = "fsdp2" if r["fsdp"] > 1 else "none"
    name = r["config"].rsplit("/", 1)[-1]
    fixture = os.path.join(sys.argv[1], name)
    if os.path.exists(fixture):
        r["config"] = name
        family = json.load(open(fixture))["model_type"]
    else:
        r["config"] = json.load(open(os.path.join(HERE, r["config"])))
        family = r["config"]["model_type"]
    r.update(family=family, cuda_like=True, autocast=False,
             dropout0=False, keep_outputs=False, device="cpu", iters=2, fwd_only=False,
             tracker=("dispatch(storage weakref)+FakeTensorMode+FSDP2 storage resize hooks, fake process group "
                      f"(world {r['gpus']}), DTensor outputs counted by their local shard"))
    r["source"] = ("scripts/measure/parallel/tp.py (transformers 5.23 DistributedConfig(tp_size, fsdp_size), "
                   "torch 2.15 fake process group, FakeTensorMode, rank 0)")
    rows[r["tag"]] = r
for r in rows.values():
    print(json.dumps(r))
