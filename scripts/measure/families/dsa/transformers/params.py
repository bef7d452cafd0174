"""Exact parameter counts of the DSA models in transformers 5.23 (meta device, no weights), and
what `generate`'s DynamicCache holds for them (a shrunk config on the CPU, random weights).

  ~/.gt-venv/bin/python params.py            # both real configs + the shrunk generate runs

For each real config (../configs/*.json): `AutoModelForCausalLM.from_config(config, dtype=bf16)`
under `torch.device("meta")`; totals by module kind; dtypes of every parameter/buffer kind (does
from_config honour `_keep_in_fp32_modules` = indexer.weights_proj?); whether MTP layers are built.
"""
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

HERE = Path(__file__).resolve().parent
CONFIGS = HERE.parent / "configs"

KINDS = [
    ("embed_tokens", r"^model\.embed_tokens\."),
    ("lm_head", r"^lm_head\."),
    ("indexer", r"\.self_attn\.indexer\."),
    ("mla (q_a,q_b,kv_a,kv_b,o,norms)", r"\.self_attn\."),
    ("dense mlp", r"\.mlp\.(gate|up|down)_proj\."),
    ("routed experts", r"\.mlp\.experts\."),
    ("shared experts", r"\.mlp\.shared_experts\."),
    ("router (gate.weight)", r"\.mlp\.gate\.weight$"),
    ("layer norms", r"layernorm\.weight$"),
    ("final norm", r"^model\.norm\."),
]


def kind(name):
    for k, rx in KINDS:
        if re.search(rx, name):
            return k
    return "other"


def count(path, dtype=torch.bfloat16):
    raw = json.load(open(path))
    cfg = AutoConfig.for_model(**{k: v for k, v in raw.items() if k not in ("architectures",)})
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype)
    by_kind = defaultdict(int)
    dtypes = defaultdict(lambda: defaultdict(int))
    indexer_shapes = {}
    for n, p in model.named_parameters():
        by_kind[kind(n)] += p.numel()
        dtypes[kind(n)][str(p.dtype)] += p.numel()
        if ".layers.0.self_attn.indexer." in n or (".self_attn.indexer." in n and not indexer_shapes):
            indexer_shapes[n] = [list(p.shape), str(p.dtype)]
    buffers = {}
    for n, b in model.named_buffers():
        k = re.sub(r"\.\d+\.", ".N.", n)
        e = buffers.setdefault(k, {"count": 0, "numel": 0, "dtype": str(b.dtype), "shape": list(b.shape)})
        e["count"] += 1
        e["numel"] += b.numel()
    n_indexers = sum(1 for l in model.model.layers if getattr(l.self_attn, "indexer", None) is not None)
    total = sum(p.numel() for p in model.parameters())
    out = {
        "config": path.name,
        "class": type(model).__name__,
        "transformers": transformers.__version__, "torch": torch.__version__,
        "from_config_dtype": str(dtype),
        "num_hidden_layers": cfg.num_hidden_layers,
        "layers_built": len(model.model.layers),
        "num_nextn_predict_layers_in_config": raw.get("num_nextn_predict_layers"),
        "mtp_built": len(model.model.layers) > cfg.num_hidden_layers or any("eh_proj" in n for n, _ in model.named_parameters()),
        "layers_with_indexer": n_indexers,
        "indexer_types": sorted(set(getattr(cfg, "indexer_types", None) or ["(none: deepseek_v32)"])),
        "total_params": total,
        "params_by_kind": dict(by_kind),
        "param_dtypes_by_kind": {k: dict(v) for k, v in dtypes.items()},
        "indexer_params_one_layer": indexer_shapes,
        "indexer_params_per_layer": sum(p.numel() for n, p in model.named_parameters() if ".layers.0.self_attn.indexer." in n),
        "buffers": buffers,
        "keep_in_fp32_modules": getattr(model, "_keep_in_fp32_modules", None),
        "keep_in_fp32_modules_strict": getattr(model, "_keep_in_fp32_modules_strict", None),
        "keys_to_ignore_on_load_unexpected": getattr(model, "_keys_to_ignore_on_load_unexpected", None),
        "total_params_without_indexers": total - by_kind["indexer"],
    }
    return out


SHRUNK = dict(hidden_size=256, intermediate_size=512, moe_intermediate_size=64, num_hidden_layers=3,
              first_k_dense_replace=1, num_attention_heads=4, num_key_value_heads=4, q_lora_rank=64,
              kv_lora_rank=32, qk_nope_head_dim=32, qk_rope_head_dim=16, v_head_dim=32,
              n_routed_experts=8, num_experts_per_tok=2, n_group=1, topk_group=1,
              index_n_heads=4, index_head_dim=32, vocab_size=1000, pad_token_id=None,
              quantization_config=None, eos_token_id=None, bos_token_id=None)


def cache_run(path, prompt, new, topk, dtype=torch.bfloat16):
    raw = json.load(open(path))
    raw = {k: v for k, v in raw.items() if k not in ("architectures", "quantization_config", "mlp_layer_types")}
    raw.update({k: v for k, v in SHRUNK.items() if k != "quantization_config"})
    raw["index_topk"] = topk
    if raw.get("rope_scaling"):
        raw["rope_scaling"] = dict(raw["rope_scaling"], original_max_position_embeddings=64)
    cfg = AutoConfig.for_model(**raw)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, dtype=dtype).eval()
    ids = torch.tensor([[(7 * i) % 997 + 1 for i in range(prompt)]])
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False,
                             return_dict_in_generate=True, pad_token_id=0)
    pkv = out.past_key_values
    layers = []
    for l in pkv.layers:
        e = {"type": type(l).__name__}
        for a in ("keys", "values", "indexer_keys", "indexer_position_ids"):
            t = getattr(l, a, None)
            e[a] = None if t is None else {"shape": list(t.shape), "dtype": str(t.dtype),
                                            "nbytes": t.numel() * t.element_size()}
        layers.append(e)
    wdt = defaultdict(int)
    for n, p in model.named_parameters():
        wdt[str(p.dtype)] += p.numel()
    return {"config": path.name, "shrunk": SHRUNK | {"index_topk": topk}, "prompt": prompt, "new": new,
            "cache_class": type(pkv).__name__, "seq_length": pkv.get_seq_length(), "layers": layers,
            "weights_numel_by_dtype": dict(wdt),
            "indexer_weights_proj_dtype": str(model.model.layers[0].self_attn.indexer.weights_proj.weight.dtype)}


def main():
    for name in ("DeepSeek-V3.2.json", "GLM-5.1.json"):
        print(json.dumps(count(CONFIGS / name), default=sorted))
        sys.stdout.flush()
    for name in ("DeepSeek-V3.2.json", "GLM-5.1.json"):
        for prompt, topk in ((40, 16), (40, 64)):
            print(json.dumps(cache_run(CONFIGS / name, prompt, 3, topk), default=sorted))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
