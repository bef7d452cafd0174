"""Parameter counts of LFM2 configs (transformers 5.23, `Lfm2ForCausalLM` on the meta device),
the MLP's effective width and a per-module-type breakdown.

    ~/.gt-venv/bin/python params.py lfm2-1.2b.json lfm2-350m.json > params.txt

`Lfm2Config.__post_init__` (configuration_lfm2.py) replaces `intermediate_size` by
`block_ff_dim` when the config has it; `Lfm2MLP.__init__` (modeling_lfm2.py) then, with
`block_auto_adjust_ff_dim`, takes int(2 * ff / 3), times `block_ffn_dim_multiplier` (int()),
rounded up to a multiple of `block_multiple_of`.
"""
import collections
import json
import re
import sys

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM


def effective_ff(cfg):
    ff = cfg.intermediate_size
    if cfg.block_auto_adjust_ff_dim:
        ff = int(2 * ff / 3)
        if cfg.block_ffn_dim_multiplier is not None:
            ff = int(cfg.block_ffn_dim_multiplier * ff)
            m = cfg.block_multiple_of
            ff = m * ((ff + m - 1) // m)
    return ff


def main(path):
    raw = json.load(open(path))
    cfg = AutoConfig.for_model(**raw)
    with torch.device("meta"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    params = dict(m.named_parameters())  # tied tensors appear once
    total = sum(p.numel() for p in params.values())
    tied = m.lm_head.weight is m.model.embed_tokens.weight
    w1 = m.model.layers[0].feed_forward.w1.weight
    print(f"== {path}")
    print(json.dumps({
        "transformers": transformers.__version__, "torch": torch.__version__,
        "class": type(m).__name__, "params": total, "tensors": len(params),
        "tie_word_embeddings": cfg.tie_word_embeddings, "lm_head_is_embed_tokens": tied,
        "config.intermediate_size_after_post_init": cfg.intermediate_size,
        "json.intermediate_size": raw.get("intermediate_size"), "json.block_ff_dim": raw.get("block_ff_dim"),
        "effective_ff (Lfm2MLP.w1 rows)": w1.shape[0], "effective_ff (recomputed)": effective_ff(cfg),
        "layer_types": cfg.layer_types,
        "buffers": {k: list(b.shape) for k, b in m.named_buffers()},
    }))
    # Per module type: the shape of one instance, the count of instances, the total.
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
    print(f"{'tensor':<{w}}  {'shape':<14} {'n':>3} {'each':>12} {'total':>14}")
    for k, v in kinds.items():
        print(f"{k:<{w}}  {str(v['shape']):<14} {v['n']:>3} {v['each']:>12,} {v['total']:>14,}")
    conv = sum(v["total"] for k, v in kinds.items() if k.startswith("conv: conv."))
    attn = sum(v["total"] for k, v in kinds.items() if k.startswith("full_attention: self_attn."))
    ffn = sum(v["total"] for k, v in kinds.items() if ": feed_forward." in k)
    norms = sum(v["total"] for k, v in kinds.items() if k.endswith("_norm.weight") and ": " in k)
    emb = params["model.embed_tokens.weight"].numel()
    print(f"sums: embedding {emb:,}; conv operators {conv:,}; attention operators {attn:,}; "
          f"feed_forward {ffn:,}; operator_norm+ffn_norm {norms:,}; "
          f"embedding_norm {params['model.embedding_norm.weight'].numel():,}; total {total:,}; "
          f"total without embedding {total - emb:,}; with an untied lm_head {total + (0 if not tied else emb):,}")
    print()


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
