"""Parameter counts of Nemotron-H configs (transformers 5.23, `NemotronHForCausalLM` on the meta device,
tied tensors counted once; no Nemotron-H config ties) with a per-module-type breakdown, a closed-form
check, and what llama.cpp b10488 would allocate per sequence / per token for each.

    ~/.gt-venv/bin/python params.py NVIDIA-Nemotron-Nano-9B-v2.json ... > params.txt

transformers 5.23 (models/nemotron_h): `NemotronHConfig.__post_init__` turns `hybrid_override_pattern`
into `layers_block_type` (M -> "linear_attention", * -> "full_attention", - -> "mlp", E -> "moe");
`num_hidden_layers` is then only the length of that list. Every `NemotronHBlock` has ONE
`norm` (NemotronHRMSNorm, hidden) and ONE mixer: `NemotronHMamba2Mixer` (in_proj hidden ->
d_inner + conv_dim + n_heads, d_inner = mamba_num_heads * mamba_head_dim (NOT expand * hidden),
conv_dim = d_inner + 2 n_groups ssm_state_size, depthwise conv1d (conv_dim, 1, conv_kernel) + bias
(use_conv_bias), dt_bias / A_log / D (n_heads), gated RMSNorm weight (d_inner), out_proj d_inner ->
hidden), `NemotronHAttention` (q/k/v/o, head_dim, no bias, no RoPE), `NemotronHMLP` (up_proj,
down_proj: no gate, relu2) or `NemotronHMoE` (router `gate.weight` (n_routed_experts, hidden) plus
the BUFFER `gate.e_score_correction_bias` (not a parameter), `experts.up_proj` (E, ff, in) and
`experts.down_proj` (E, in, ff) with in = moe_latent_size or hidden, optional fc1/fc2_latent_proj,
`shared_experts` NemotronHMLP(moe_shared_expert_intermediate_size)). MTP weights (`mtp.*`) are
ignored by transformers 5.23 (`_keys_to_ignore_on_load_unexpected`).
"""
import collections
import json
import re
import sys

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

KIND = {"M": "linear_attention", "*": "full_attention", "-": "mlp", "E": "moe"}


def geometry(c):
    pat = c["hybrid_override_pattern"]
    h = c["hidden_size"]
    hd = c.get("head_dim", c.get("attention_head_dim", 128))
    nh, ds, ng, dc = c["mamba_num_heads"], c["ssm_state_size"], c["n_groups"], c["conv_kernel"]
    di = nh * c["mamba_head_dim"]
    return pat, h, hd, nh, ds, ng, dc, di, di + 2 * ng * ds


def expected(c):
    """The count from the formulas in the docstring, to check the module walk."""
    pat, h, hd, nh, ds, ng, dc, di, conv_dim = geometry(c)
    v = c["vocab_size"]
    mamba = h * (di + conv_dim + nh) + conv_dim * dc + (conv_dim if c.get("use_conv_bias", True) else 0) \
        + 3 * nh + di + di * h
    attn = h * c["num_attention_heads"] * hd + 2 * h * c["num_key_value_heads"] * hd + c["num_attention_heads"] * hd * h
    mlp = 2 * h * c.get("intermediate_size", 21504)
    e = c.get("n_routed_experts", 0)
    lat = c.get("moe_latent_size")
    ind = lat if lat else h
    moe = (e * h + 2 * e * c.get("moe_intermediate_size", 0) * ind
           + 2 * h * c.get("moe_shared_expert_intermediate_size", 0) + (2 * h * lat if lat else 0))
    per = {"M": mamba, "*": attn, "-": mlp, "E": moe}
    total = v * h * (1 if c.get("tie_word_embeddings", False) else 2) + h + sum(h + per[k] for k in pat)
    active = None
    if "E" in pat:
        k = c["num_experts_per_tok"]
        active = total - pat.count("E") * (e - k) * 2 * c["moe_intermediate_size"] * ind
    return total, active


def llamacpp(c):
    """llama.cpp b10488: n_embd_r / n_embd_s (llama-hparams.cpp l.183-229), RS bytes per sequence (f32,
    Mamba layers only, n_rs_seq 0), KV bytes per token (f16 K+V, attention layers only)."""
    pat, h, hd, nh, ds, ng, dc, di, conv_dim = geometry(c)
    n_embd_r = (dc - 1) * conv_dim
    n_embd_s = ds * di
    n_m, n_a = pat.count("M"), pat.count("*")
    rs = n_m * (n_embd_r + n_embd_s) * 4
    kv = n_a * 2 * c["num_key_value_heads"] * hd * 2
    e_bias = pat.count("E") * c.get("n_routed_experts", 0)
    return {"n_embd_r": n_embd_r, "n_embd_s": n_embd_s, "mamba_layers": n_m, "attention_layers": n_a,
            "mlp_layers": pat.count("-"), "moe_layers": pat.count("E"),
            "rs_bytes_per_seq": rs, "rs_MiB_per_seq": round(rs / 2**20, 4),
            "kv_bytes_per_token_f16": kv, "gguf_extra_elements_exp_probs_b": e_bias}


def main(path):
    raw = json.load(open(path))
    cfg = AutoConfig.for_model(**raw)
    with torch.device("meta"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    params = dict(m.named_parameters())  # tied tensors appear once
    total = sum(p.numel() for p in params.values())
    want, active = expected(raw)
    lc = llamacpp(raw)
    print(f"== {path}")
    print(json.dumps({
        "transformers": transformers.__version__, "torch": torch.__version__,
        "class": type(m).__name__, "config_class": type(cfg).__name__, "model_type": cfg.model_type,
        "params": total, "formula": want, "formula_matches": want == total,
        "active_params_top_k (formula)": active, "tensors": len(params),
        "tie_word_embeddings": cfg.tie_word_embeddings,
        "lm_head_is_embeddings": m.lm_head.weight is m.model.embeddings.weight,
        "num_hidden_layers": cfg.num_hidden_layers,
        "layers_block_type_counts": dict(collections.Counter(cfg.layers_block_type)),
        "attention_layers": [i for i, t in enumerate(cfg.layers_block_type) if t == "full_attention"],
        "head_dim": cfg.head_dim, "mamba_d_inner": cfg.mamba_num_heads * cfg.mamba_head_dim,
        "buffers": {k: list(b.shape) for k, b in list(m.named_buffers())[:2]},
        "n_buffers": len(list(m.named_buffers())),
        "llama.cpp b10488": lc,
        "gguf_elements (params + exp_probs_b)": total + lc["gguf_extra_elements_exp_probs_b"],
    }))
    kinds = collections.OrderedDict()
    for name, p in params.items():
        mm = re.match(r"model\.layers\.(\d+)\.(.*)", name)
        if mm:
            i = int(mm.group(1))
            kind = f"{cfg.layers_block_type[i]}: {mm.group(2)}"
        else:
            kind = name
        k = kinds.setdefault(kind, {"shape": list(p.shape), "n": 0, "each": p.numel(), "total": 0})
        assert k["shape"] == list(p.shape), (kind, k["shape"], p.shape)
        k["n"] += 1
        k["total"] += p.numel()
    w = max(len(k) for k in kinds)
    print(f"{'tensor':<{w}}  {'shape':<20} {'n':>3} {'each':>13} {'total':>15}")
    for k, v in kinds.items():
        print(f"{k:<{w}}  {str(v['shape']):<20} {v['n']:>3} {v['each']:>13,} {v['total']:>15,}")
    sums = collections.Counter()
    for k, v in kinds.items():
        sums[k.split(":")[0] if ":" in k else k] += v["total"]
    emb = params["model.embeddings.weight"].numel()
    print("sums: " + "; ".join(f"{k} {v:,}" for k, v in sums.items())
          + f"; total {total:,}; total without embeddings and lm_head {total - emb - m.lm_head.weight.numel():,}")
    print()


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
