#!/usr/bin/env python
"""Raw rows of tp.py -> crates/core/tests/fixtures/tp_rows.jsonl: the latest `ok` row per tag, without
the debug allocations, with `shard` as the fixture's other files name it (`fsdp2` where FSDP2 shards the
data-parallel ranks, `none` otherwise) and the stack it ran.

    python3 assemble.py raw/tp523.jsonl ../../../crates/core/tests/fixtures/hf_configs > ../../../crates/core/tests/fixtures/tp_rows.jsonl
"""
import json, sys

rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("status") != "ok":
        continue
    r.pop("debug_allocs", None)
    r["shard"] = "fsdp2" if r["fsdp"] > 1 else "none"
    r["config"] = r["config"].rsplit("/", 1)[-1]
    r.update(family=json.load(open(sys.argv[2] + "/" + r["config"]))["model_type"], cuda_like=True, autocast=False,
             dropout0=False, keep_outputs=False, device="cpu", iters=2, fwd_only=False,
             tracker=("dispatch(storage weakref)+FakeTensorMode+FSDP2 storage resize hooks, fake process group "
                      f"(world {r['gpus']}), DTensor outputs counted by their local shard"))
    r["source"] = ("scripts/measure/parallel/tp.py (transformers 5.23 DistributedConfig(tp_size, fsdp_size), "
                   "torch 2.15 fake process group, FakeTensorMode, rank 0)")
    rows[r["tag"]] = r
for r in rows.values():
    print(json.dumps(r))
