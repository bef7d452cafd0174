"""mlx-lm generating with a shrunk DeepSeek Sparse Attention model (`deepseek_v32`, and
`glm_moe_dsa`, whose Model subclasses deepseek_v32's): what the weights hold, kind by kind and
dtype by dtype, what stays unquantized, and what the prompt cache holds at the end, entry by
entry, byte for byte. Same method and CLI as scripts/measure/mlx/nemotron_h.py.

mlx-cpu 0.32.4 (PyPI), mlx-lm d78bf58e, as scripts/measure/mlx/NOTES.md sets them up.
`models/deepseek_v32.py`: `make_cache` (:654-655) gives every layer
`CacheList(KVCache(), KVCache())`. Entry 0 (the MLA latent): `cache[0].update_and_fetch(kv_latent,
k_pe)` (:203), keys (B, 1, T, kv_lora_rank) = the kv_a_layernorm'd latent, values
(B, 1, T, qk_rope_head_dim) = the roped k_pe, both in the activations' dtype. Entry 1 (the
indexer keys): `cache.update_and_fetch(k, mx.zeros([b, 1, s, 0]))` (:101), keys
(B, 1, T, index_head_dim) after k_norm and RoPE, values (B, 1, T, 0) float32 (0 bytes). KVCache
grows in steps of 256 (cache.py:326-350). The indexer returns None (dense attention) while the
cached keys number <= index_topk (:102-103), but caches its keys either way.

  ~/.mlx-venv/bin/python dsa.py CONFIG.json PROMPT NEW [OVERRIDES_JSON] [PREFILL_STEP] [KV_BITS] [DTYPE] [BITS]

NEW 0: no generate_step, one `model(prompt, cache=cache)` call over the whole prompt.
NEW -1: weights only, never evaluated (mlx arrays are lazy: `nbytes` comes from the shapes);
usable on the real configs.
KV_BITS: none, or 8/4 (generate_step's `kv_bits`, groups of 64; `maybe_quantize_kv_cache`
needs `to_quantized`, which CacheList lacks: expected to change nothing).
DTYPE: bf16 (default: every floating weight cast to bf16 but what `cast_predicate` keeps
(:647-652, `e_score_correction_bias` stays float32), as mlx_lm.convert does) or float32.
BITS: 0 (default) or 4/8: `quantize_model` (groups of 64; deepseek_v32.py has no
`quant_predicate`: every module with `to_quantized` whose input width divides by 64 is
quantized, MultiLinear embed_q/unembed_out included (mla.py:25-42); nn.LayerNorm k_norm, the
RMSNorms and MoEGate (a plain weight, no to_quantized) stay).

mlx-cpu's `GatherMM` takes float32 alone: an unquantized bf16 mixture fails at its first MoE
layer; such a row carries "error" and no cache (the bf16 rows here use first_k_dense_replace =
num_hidden_layers: all dense).

Prints one JSON line (see nemotron_h.py), the cache part per layer: CacheList of two KVCache
entries (latent, indexer), and the bytes freed when the latent caches, then the indexer caches,
are dropped (`mx.get_active_memory()` before and after, `mx.set_cache_limit(0)`).
"""
import gc
import json
import re
import sys
from pathlib import Path

import mlx.core as mx
from mlx.utils import tree_flatten
from mlx_lm.generate import generate_step
from mlx_lm.models.cache import CacheList, KVCache, QuantizedKVCache
from mlx_lm.utils import _get_classes, quantize_model

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "mlx"))
from convert import bf16_model, merge  # noqa: E402  (scripts/measure/mlx/convert.py)


def f32_model(path, over):
    config = merge(json.load(open(path)), over)
    model_class, args_class = _get_classes(config)
    return config, model_class(args_class.from_dict(config))


KINDS = [
    ("embedding", r"^model\.embed_tokens\."),
    ("lm_head", r"^lm_head\."),
    ("indexer wq_b", r"\.indexer\.wq_b\."),
    ("indexer wk", r"\.indexer\.wk\."),
    ("indexer weights_proj", r"\.indexer\.weights_proj\."),
    ("indexer k_norm (LayerNorm w+b)", r"\.indexer\.k_norm\."),
    ("mla q_a/q_b/kv_a_proj", r"\.self_attn\.(q_a_proj|q_b_proj|kv_a_proj_with_mqa)\."),
    ("mla embed_q/unembed_out (kv_b)", r"\.self_attn\.(embed_q|unembed_out)\."),
    ("mla o_proj", r"\.self_attn\.o_proj\."),
    ("mla q_a/kv_a norms", r"\.self_attn\.(q_a|kv_a)_layernorm\."),
    ("router weight (mlp.gate.weight)", r"\.mlp\.gate\.weight$"),
    ("router e_score_correction_bias", r"\.mlp\.gate\.e_score_correction_bias$"),
    ("experts (switch_mlp)", r"\.mlp\.switch_mlp\."),
    ("shared_experts", r"\.mlp\.shared_experts\."),
    ("dense mlp", r"\.mlp\.(gate|up|down)_proj\."),
    ("norms", r"(layernorm|norm)\.weight$"),
]


def kind(path):
    for k, rx in KINDS:
        if re.search(rx, path):
            return k
    return "other"


def dt(a):
    return str(a.dtype).replace("mlx.core.", "")


def arr(a):
    return {"shape": list(a.shape), "dtype": dt(a), "nbytes": a.nbytes}


def kv_entry(c):
    if isinstance(c, QuantizedKVCache):
        return {"type": "QuantizedKVCache", "offset": c.offset, "bits": c.bits, "group_size": c.group_size,
                "keys": [arr(a) for a in c.keys], "values": [arr(a) for a in c.values],
                "nbytes": sum(a.nbytes for a in list(c.keys) + list(c.values))}
    if isinstance(c, KVCache):
        return {"type": "KVCache", "offset": c.offset, "keys": arr(c.keys), "values": arr(c.values),
                "nbytes": c.keys.nbytes + c.values.nbytes}
    return {"type": type(c).__name__}


def entry(c):
    if isinstance(c, CacheList):
        return {"type": "CacheList", "latent": kv_entry(c[0]), "indexer": kv_entry(c[1])}
    return kv_entry(c)


def active():
    last = None
    while True:
        mx.synchronize()
        gc.collect()
        mx.synchronize()
        now = mx.get_active_memory()
        if now == last:
            return now
        last = now


def held(caches, idx):
    before = active()
    for c in caches:
        c[idx].keys = c[idx].values = None
    return before - active()


def weights_report(model):
    params = tree_flatten(model.parameters())
    names = {k for k, _ in params}
    by_dtype, by_kind, unq = {}, {}, {}
    for k, v in params:
        d = dt(v)
        by_dtype[d] = by_dtype.get(d, 0) + v.nbytes
        kk = by_kind.setdefault(kind(k), {})
        kk[d] = kk.get(d, 0) + v.nbytes
        base = k.rsplit(".", 1)[0]
        if k.endswith((".scales", ".biases")) and base + ".scales" in names:
            continue
        if not (k.endswith(".weight") and base + ".scales" in names):
            u = unq.setdefault(kind(k), {"tensors": 0, "dtype": d, "nbytes": 0, "example": k, "shape": list(v.shape)})
            u["tensors"] += 1
            u["nbytes"] += v.nbytes
    qbits = {}
    for path, m in model.named_modules():
        if hasattr(m, "bits") and hasattr(m, "group_size"):
            qbits.setdefault(kind(path + "."), set()).add((type(m).__name__, m.bits, m.group_size))
    return {
        "weights_bytes": sum(v.nbytes for _, v in params),
        "weights_params": None if any(k.endswith(".scales") for k in names) else sum(v.size for _, v in params),
        "weights_bytes_by_dtype": by_dtype,
        "weights_bytes_by_kind": by_kind,
        "quantized_modules": {k: sorted(list(x) for x in v) for k, v in qbits.items()},
        "unquantized": unq if qbits else None,
        "unquantized_bytes": sum(u["nbytes"] for u in unq.values()) if qbits else None,
    }


def indexer_report(model):
    ix = model.layers[0].self_attn.indexer
    out = {}
    for k, v in tree_flatten(ix.parameters()):
        out[k] = arr(v)
    out["n_heads"], out["head_dim"], out["index_topk"] = ix.n_heads, ix.head_dim, ix.index_topk
    out["rope_dims"] = model.args.qk_rope_head_dim
    return out


def main():
    path, prompt, new = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    over = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    step = int(sys.argv[5]) if len(sys.argv) > 5 else 2048
    kv_bits = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] not in ("", "none") else None
    dtype = sys.argv[7] if len(sys.argv) > 7 else "bf16"
    bits = int(sys.argv[8]) if len(sys.argv) > 8 else 0
    mx.set_cache_limit(0)
    config, model = (bf16_model if dtype == "bf16" else f32_model)(path, over)
    if bits:
        model, _ = quantize_model(model, config, 64, bits)
    if new >= 0:
        mx.eval(model.parameters())
    row = {"config": path.rsplit("/", 1)[-1], "model_type": config["model_type"], "override": over,
           "prompt": prompt, "new": new, "prefill_step_size": step, "kv_bits": kv_bits, "dtype": dtype,
           "bits": bits or None, "num_hidden_layers": model.args.num_hidden_layers,
           "first_k_dense_replace": model.args.first_k_dense_replace, "index_topk": model.args.index_topk}
    row.update(weights_report(model))
    row["indexer_layer0"] = indexer_report(model)
    row["mlx"], row["mlx_lm"] = mx.__version__, "d78bf58e"
    if new < 0:
        print(json.dumps(row))
        return
    cache = model.make_cache()
    tokens = mx.array([(7 * i) % 97 + 1 for i in range(prompt)], dtype=mx.uint32)
    try:
        if new == 0:
            logits = model(tokens[None], cache=cache)
            mx.eval(logits, [c.state for c in cache])
        else:
            for _ in zip(range(new), generate_step(tokens, model, max_tokens=new, prompt_cache=cache,
                                                    prefill_step_size=step, kv_bits=kv_bits)):
                pass
        mx.eval([c.state for c in cache])
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {e}"
        print(json.dumps(row))
        return
    entries = [entry(c) for c in cache]
    row["cache"] = entries
    row["latent_nbytes"] = sum(e["latent"]["nbytes"] for e in entries)
    row["indexer_nbytes"] = sum(e["indexer"]["nbytes"] for e in entries)
    row["latent_held_bytes"] = held(cache, 0)
    row["indexer_held_bytes"] = held(cache, 1)
    print(json.dumps(row))


if __name__ == "__main__":
    main()
