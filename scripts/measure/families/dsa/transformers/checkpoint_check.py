"""Reconcile transformers' meta-device totals (params_out.jsonl) with the checkpoint totals the
weight dumps in ../configs/SOURCES.md report ("参数总量", every tensor's numel summed over the
safetensors files): the difference must be the MTP layer (transformers does not build it:
_keys_to_ignore_on_load_unexpected) + the e_score_correction_bias buffers + (DeepSeek, FP8)
the weight_scale_inv tensors, ceil(out/128) x ceil(in/128) fp32 per FP8 weight."""
import json
from math import ceil
from pathlib import Path

rows = [json.loads(l) for l in open(Path(__file__).parent / "params_out.jsonl")][:2]
tf = {r["config"]: r["total_params"] for r in rows}
C = lambda a, b: ceil(a / 128) * ceil(b / 128)


def layer(h, ql, H, nope, rope, v, kvr, ih, ihd, E, mi, di, moe):
    """(params, fp8 weight shapes) of one decoder layer."""
    lin = [(ql, h), (H * (nope + rope), ql), (kvr + rope, h), (H * (nope + v), kvr), (h, H * v),
           (ih * ihd, ql), (ihd, h)]  # q_a, q_b, kv_a, kv_b, o, indexer.wq_b, indexer.wk
    p = sum(a * b for a, b in lin) + ql + kvr + 2 * h + 2 * ihd + ih * h  # norms, k_norm w+b, weights_proj
    if moe:
        mlp = [(mi, h), (mi, h), (h, mi)] * (E + 1)
        p += sum(a * b for a, b in mlp) + E * h  # experts + shared + router
    else:
        mlp = [(di, h), (di, h), (h, di)]
        p += sum(a * b for a, b in mlp)
    return p, lin + mlp


# DeepSeek-V3.2: 61 layers (3 dense) + MTP layer 61 (MoE layer + eh_proj + enorm/hnorm +
# shared_head.norm + its own embed_tokens and shared_head.head), FP8 with block scales.
h, V = 7168, 129280
d_args = dict(h=h, ql=1536, H=128, nope=128, rope=64, v=128, kvr=512, ih=64, ihd=128, E=256, mi=2048, di=18432)
dense, fp8_dense = layer(moe=False, **d_args)
moe, fp8_moe = layer(moe=True, **d_args)
mtp_extra = h * 2 * h + 3 * h + 2 * V * h
scales = 3 * sum(C(a, b) for a, b in fp8_dense) + 59 * sum(C(a, b) for a, b in fp8_moe)
ds = {"mtp_layer": moe + mtp_extra, "e_score_correction_bias": 59 * 256, "weight_scale_inv": scales}
ds_sum = tf["DeepSeek-V3.2.json"] + sum(ds.values())
print(json.dumps({"model": "DeepSeek-V3.2", "transformers_total": tf["DeepSeek-V3.2.json"], **ds,
                  "sum": ds_sum, "checkpoint_total_reported": 685396921376,
                  "diff": 685396921376 - ds_sum}))

# GLM-5.1: 78 layers (3 dense) + MTP layer 78 (MoE layer + eh_proj + enorm/hnorm +
# shared_head.norm; no embed/head copies in the dump), bf16.
h = 6144
g_args = dict(h=h, ql=2048, H=64, nope=192, rope=64, v=256, kvr=512, ih=32, ihd=128, E=256, mi=2048, di=12288)
moe, _ = layer(moe=True, **g_args)
g = {"mtp_layer": moe + h * 2 * h + 3 * h, "e_score_correction_bias": 76 * 256}
g_sum = tf["GLM-5.1.json"] + sum(g.values())
print(json.dumps({"model": "GLM-5.1", "transformers_total": tf["GLM-5.1.json"], **g, "sum": g_sum,
                  "checkpoint_total_reported": 753864139008, "diff": 753864139008 - g_sum}))
