"""Each row of hybrid_rows.jsonl against vramfit's CLI: the weights and the cache
(key/value arrays + the ArraysCache states), to the byte.

  python3 scripts/measure/mlx/check.py [path/to/vramfit]
"""
import json
import subprocess
import sys
from pathlib import Path

here = Path(__file__).parent
cli = sys.argv[1] if len(sys.argv) > 1 else "target/release/vramfit"
presets = {"qwen3.6-27b.json": "qwen3.6-27b", "qwen3.6-35b-a3b.json": "qwen3.6-35b-a3b",
           "qwen3-next-80b-a3b.json": "qwen3-next-80b-a3b"}
bad = 0
for line in open(here / "hybrid_rows.jsonl"):
    r = json.loads(line)
    o = r["override"].get("text_config", r["override"])
    q = {
        "task": "infer", "engine": "mlx", "model": presets[r["config"].split("/")[-1]],
        "hidden": o["hidden_size"], "layers": o["num_hidden_layers"],
        "heads": o["num_attention_heads"], "kv_heads": o["num_key_value_heads"],
        "head_dim": o["head_dim"], "rope_dim": o["head_dim"] // 4,
        "linear_layers": r["layers"].count("linear"),
        "linear_k_heads": o["linear_num_key_heads"], "linear_v_heads": o["linear_num_value_heads"],
        "linear_k_dim": o["linear_key_head_dim"], "linear_v_dim": o["linear_value_head_dim"],
        "linear_conv": o.get("linear_conv_kernel_dim", 4), "vocab": o["vocab_size"],
        "prompt": r["prompt"], "new": r["new"],
        "weights": f"{r['bits']}bit" if r["bits"] else "bf16", "q_group_size": 64,
    }
    if r["kv_bits"]:
        q["kv_bits"] = r["kv_bits"]
    if "num_experts" in o:
        q.update(experts=o["num_experts"], experts_per_token=o["num_experts_per_tok"],
                 moe_ffn=o["moe_intermediate_size"], shared_experts=1)
    else:
        q["ffn"] = o["intermediate_size"]
    query = "&".join(f"{k}={v}" for k, v in q.items())
    out = subprocess.run([cli, query], capture_output=True, text=True)
    if out.returncode != 0:
        print("ERR", query, out.stderr.strip()); bad += 1; continue
    s = json.loads(out.stdout)
    want = (r["weights_bytes"], r["kv_bytes"] + r["conv_state_bytes"] + r["recurrent_state_bytes"])
    got = (s["weights_bytes"], s["kv_cache_bytes"])
    ok = want == got
    bad += not ok
    print("ok " if ok else "BAD", r["config"].split("/")[-1], r["prompt"], r["new"], r["bits"], "measured", want, "vramfit", got)
sys.exit(1 if bad else 0)
