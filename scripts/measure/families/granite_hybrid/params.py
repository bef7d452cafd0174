"""Parameter counts of Granite 4.0-H configs (transformers 5.23, `GraniteMoeHybridForCausalLM` on
the meta device, tied embeddings counted once) with a per-module-type breakdown.

    ~/.gt-venv/bin/python params.py granite-4.0-h-*.json > params.txt

transformers 5.23 (models/granitemoehybrid): `GraniteMoeHybridConfig.__post_init__` maps
`layer_types` "mamba" -> "linear_attention" and "attention" -> "full_attention"
(configuration_utils.py); `GraniteMoeHybridDecoderLayer` builds `mamba`
(`GraniteMoeHybridMambaLayer`) on linear_attention layers, `self_attn` elsewhere, a
`block_sparse_moe` only when num_local_experts > 0, and a `shared_mlp` on every layer
(`input_linear` hidden -> 2 * shared_intermediate_size, `output_linear` back).
The Mamba mixer: in_proj hidden -> (d_inner + conv_dim + n_heads), conv_dim = d_inner +
2 n_groups d_state, depthwise conv1d (conv_dim, 1, d_conv) + bias, dt_bias/A_log/D (n_heads),
gated RMSNorm (d_inner), out_proj d_inner -> hidden; d_inner = mamba_expand * hidden.
"""
import collections
import json
import re
import sys

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM


def expected(c):
    """The count from the formulas above, to check the module walk."""
    h, v, L = c["hidden_size"], c["vocab_size"], c["num_hidden_layers"]
    attn = [i for i, t in enumerate(c["layer_types"]) if t == "attention"]
    n_attn, n_mamba = len(attn), L - len(attn)
    hd = h // c["num_attention_heads"]
    q = h * c["num_attention_heads"] * hd
    kv = 2 * h * c["num_key_value_heads"] * hd
    o = c["num_attention_heads"] * hd * h
    di = c["mamba_expand"] * h
    nh, ds, ng, dc = c["mamba_n_heads"], c["mamba_d_state"], c["mamba_n_groups"], c["mamba_d_conv"]
    conv_dim = di + 2 * ng * ds
    mamba = h * (di + conv_dim + nh) + conv_dim * dc + conv_dim + 3 * nh + di + di * h
    shared = 3 * h * c["shared_intermediate_size"]
    e = c["num_local_experts"]
    moe = (e * h + e * 3 * h * c["intermediate_size"]) if e > 0 else 0
    per_layer_common = 2 * h + shared + moe
    total = v * h + h + n_attn * (q + kv + o) + n_mamba * mamba + L * per_layer_common
    if not c.get("tie_word_embeddings", False):
        total += v * h
    active = None
    if e > 0:
        active = total - L * (e - c["num_experts_per_tok"]) * 3 * h * c["intermediate_size"]
    return total, active


def main(path):
    raw = json.load(open(path))
    cfg = AutoConfig.for_model(**raw)
    with torch.device("meta"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    params = dict(m.named_parameters())  # tied tensors appear once
    total = sum(p.numel() for p in params.values())
    tied = m.lm_head.weight is m.model.embed_tokens.weight
    want, active = expected(raw)
    print(f"== {path}")
    print(json.dumps({
        "transformers": transformers.__version__, "torch": torch.__version__,
        "class": type(m).__name__, "params": total, "formula": want, "formula_matches": want == total,
        "active_params_top_k (formula)": active, "tensors": len(params),
        "tie_word_embeddings": cfg.tie_word_embeddings, "lm_head_is_embed_tokens": tied,
        "attention_layers": [i for i, t in enumerate(cfg.layer_types) if t == "full_attention"],
        "position_embedding_type": cfg.position_embedding_type,
        "rotary_emb": m.model.rotary_emb is not None,
        "buffers": {k: list(b.shape) for k, b in m.named_buffers()},
    }))
    kinds = collections.OrderedDict()
    for name, p in params.items():
        mm = re.match(r"model\.layers\.(\d+)\.(.*)", name)
        if mm:
            i = int(mm.group(1))
            kind = f"{cfg.layer_types[i]}: {mm.group(2)}"
        else:
            kind = name
        k = kinds.setdefault(kind, {"shape": list(p.shape), "n": 0, "each": p.numel(), "total": 0})
        assert k["shape"] == list(p.shape), (kind, k["shape"], p.shape)
        k["n"] += 1
        k["total"] += p.numel()
    if tied:
        kinds["lm_head.weight (tied to model.embed_tokens.weight, not counted again)"] = {
            "shape": list(m.lm_head.weight.shape), "n": 0, "each": m.lm_head.weight.numel(), "total": 0}
    w = max(len(k) for k in kinds)
    print(f"{'tensor':<{w}}  {'shape':<18} {'n':>3} {'each':>13} {'total':>15}")
    for k, v in kinds.items():
        print(f"{k:<{w}}  {str(v['shape']):<18} {v['n']:>3} {v['each']:>13,} {v['total']:>15,}")
    mamba = sum(v["total"] for k, v in kinds.items() if ": mamba." in k)
    attn = sum(v["total"] for k, v in kinds.items() if ": self_attn." in k)
    shared = sum(v["total"] for k, v in kinds.items() if ": shared_mlp." in k)
    moe = sum(v["total"] for k, v in kinds.items() if ": block_sparse_moe." in k)
    emb = params["model.embed_tokens.weight"].numel()
    print(f"sums: embedding {emb:,}; mamba mixers {mamba:,}; attention {attn:,}; shared_mlp {shared:,}; "
          f"routed experts + routers {moe:,}; total {total:,}; total without embedding {total - emb:,}")
    print()


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
