"""Markdown table of raw/rows.jsonl (kimi.py rows): one line per row."""
import json
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "raw/rows.jsonl"
print("| config | override | dtype | bits | prompt | new | step | kv_bits | weights bytes | MLA cache bytes (held) | KDA cache bytes (held) | MLA layer0 keys / values | KDA layer arrays | error |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for l in open(path):
    r = json.loads(l)
    c = r.get("cache") or []
    mla = next((e for e in c if e["type"] != "ArraysCache"), None)
    kda = next((e for e in c if e["type"] == "ArraysCache"), None)
    if mla and mla["type"] == "KVCache":
        m = f"{mla['keys']['shape']} {mla['keys']['dtype']} / {mla['values']['shape']} (offset {mla['offset']})"
    elif mla:
        m = f"Quantized {mla['bits']}b: keys {[a['shape'] for a in mla['keys']]} (offset {mla['offset']})"
    else:
        m = ""
    k = "; ".join(f"{a['shape']} {a['dtype']}" for a in kda["arrays"] if a) if kda else ""
    ov = json.dumps(r["override"]) if r["override"] else ""
    print(f"| {r['config']} | {ov} | {r['dtype']} | {r['bits'] or ''} | {r['prompt']} | {r['new']} | {r['prefill_step_size']} | {r['kv_bits'] or ''} | {r['weights_bytes']:,} | "
          f"{r.get('mla_nbytes', '') if r.get('mla_nbytes') is None else format(r['mla_nbytes'], ',')} ({'' if r.get('mla_held_bytes') is None else format(r['mla_held_bytes'], ',')}) | "
          f"{'' if r.get('kda_nbytes') is None else format(r['kda_nbytes'], ',')} ({'' if r.get('kda_held_bytes') is None else format(r['kda_held_bytes'], ',')}) | {m} | {k} | {r.get('error', '')} |")
