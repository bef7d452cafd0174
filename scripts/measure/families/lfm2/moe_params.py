"""Parameter counts of LFM2-MoE configs (transformers 5.23, `Lfm2MoeForCausalLM` on the meta
device) with a per-tensor breakdown by layer kind: operator (conv / full_attention) x feed-forward
(dense for layer_idx < num_dense_layers, else moe).

    ~/.gt-venv/bin/python moe_params.py moe_lfm2-8b-a1b.json > moe_params.txt

modeling_lfm2_moe.py: `Lfm2MoeDecoderLayer.__init__` builds `Lfm2MoeMLP(config,
intermediate_size=config.intermediate_size)` (w1/w3/w2, no auto-adjust of the width, unlike
dense LFM2's block_ff_dim) on layers < num_dense_layers and `Lfm2MoeSparseMoeBlock` on the rest:
`experts` (`Lfm2MoeExperts`: `gate_up_proj` [E, 2 * moe_intermediate_size, hidden] and
`down_proj` [E, hidden, moe_intermediate_size], fused 3-D parameters; the checkpoint's
per-expert w1/w3/w2 are merged on load by conversion_mapping.py "lfm2_moe"), `gate`
(`Lfm2MoeTopKRouter.weight` [E, hidden]) and `expert_bias` (an `nn.Buffer` of [E] float32 when
use_expert_bias: a buffer, not a parameter).
Also prints active parameters per token (top-k of the routed experts).
"""
import collections
import json
import re
import sys

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM


def main(path):
    raw = json.load(open(path))
    cfg = AutoConfig.for_model(**raw)
    with torch.device("meta"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    params = dict(m.named_parameters())  # tied tensors appear once
    total = sum(p.numel() for p in params.values())
    tied = m.lm_head.weight is m.model.embed_tokens.weight
    bufs = {k: (list(b.shape), str(b.dtype).replace("torch.", "")) for k, b in m.named_buffers()}
    nd = cfg.num_dense_layers

    def kind_of(i):
        return f"{cfg.layer_types[i]}/{'dense' if i < nd else 'moe'}"

    print(f"== {path}")
    print(json.dumps({
        "transformers": transformers.__version__, "torch": torch.__version__,
        "class": type(m).__name__, "params": total, "tensors": len(params),
        "tie_word_embeddings": cfg.tie_word_embeddings, "lm_head_is_embed_tokens": tied,
        "num_dense_layers": nd, "num_experts": cfg.num_experts, "num_experts_per_tok": cfg.num_experts_per_tok,
        "intermediate_size": cfg.intermediate_size, "moe_intermediate_size": cfg.moe_intermediate_size,
        "layer_kinds": [kind_of(i) for i in range(cfg.num_hidden_layers)],
        "layer_kind_counts": dict(collections.Counter(kind_of(i) for i in range(cfg.num_hidden_layers))),
    }))
    print("buffers (not parameters; not in the count): " + json.dumps(
        {k: v for k, v in bufs.items() if "rotary" in k or "pos_emb" in k}))
    eb = {k: v for k, v in bufs.items() if k.endswith("expert_bias")}
    if eb:
        shapes = {tuple(v[0]) for v in eb.values()}
        dts = {v[1] for v in eb.values()}
        print(f"expert_bias buffers: {len(eb)} (one per MoE layer), shape {sorted(shapes)}, dtype {sorted(dts)} "
              f"after from_config(dtype=bfloat16); {sum(v[0][0] for v in eb.values()):,} numbers; "
              f"persistent in the state_dict: {all(k in m.state_dict() for k in eb)}")
    kinds = collections.OrderedDict()
    for name, p in params.items():
        mm = re.match(r"model\.layers\.(\d+)\.(.*)", name)
        kind = f"{kind_of(int(mm.group(1)))}: {mm.group(2)}" if mm else name
        k = kinds.setdefault(kind, {"shape": list(p.shape), "n": 0, "each": p.numel(), "total": 0})
        assert k["shape"] == list(p.shape), (kind, k["shape"], p.shape)
        k["n"] += 1
        k["total"] += p.numel()
    for name, (shape, dt) in bufs.items():
        mm = re.match(r"model\.layers\.(\d+)\.(.*)", name)
        if mm:
            kind = f"{kind_of(int(mm.group(1)))}: {mm.group(2)} (BUFFER {dt}, not counted)"
            n = 1
            for s in shape:
                n *= s
            k = kinds.setdefault(kind, {"shape": shape, "n": 0, "each": n, "total": 0})
            k["n"] += 1
    if tied:
        kinds["lm_head.weight (tied to model.embed_tokens.weight, not counted again)"] = {
            "shape": list(m.lm_head.weight.shape), "n": 0, "each": m.lm_head.weight.numel(), "total": 0}
    w = max(len(k) for k in kinds)
    print(f"{'tensor':<{w}}  {'shape':<18} {'n':>3} {'each':>12} {'total':>15}")
    for k, v in kinds.items():
        print(f"{k:<{w}}  {str(v['shape']):<18} {v['n']:>3} {v['each']:>12,} {v['total']:>15,}")

    def s(pred):
        return sum(v["total"] for k, v in kinds.items() if pred(k))
    conv = s(lambda k: ": conv." in k)
    attn = s(lambda k: ": self_attn." in k)
    dense = s(lambda k: "/dense: feed_forward." in k)
    experts = s(lambda k: ": feed_forward.experts." in k)
    router = s(lambda k: ": feed_forward.gate." in k)
    norms = s(lambda k: k.endswith("_norm.weight") and ": " in k)
    emb = params["model.embed_tokens.weight"].numel()
    n_moe = cfg.num_hidden_layers - nd
    per_expert = 3 * cfg.hidden_size * cfg.moe_intermediate_size
    active = total - experts + n_moe * cfg.num_experts_per_tok * per_expert
    print(f"sums: embedding {emb:,}; conv operators {conv:,}; attention operators {attn:,}; "
          f"dense feed_forward {dense:,}; routed experts {experts:,} ({n_moe} layers x {cfg.num_experts} experts x "
          f"{per_expert:,}); routers {router:,}; operator_norm+ffn_norm {norms:,}; "
          f"embedding_norm {params['model.embedding_norm.weight'].numel():,}; total {total:,}; "
          f"total without embedding {total - emb:,}; with an untied lm_head {total + (emb if tied else 0):,}; "
          f"expert_bias buffers {sum(v[0][0] for v in eb.values()):,} numbers (f32, not counted); "
          f"active per token (top-{cfg.num_experts_per_tok} experts) {active:,}")
    print()


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
