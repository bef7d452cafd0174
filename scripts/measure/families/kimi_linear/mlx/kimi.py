"""mlx-lm with a shrunk Kimi Linear (`kimi_linear`) config: what the weights hold, kind by kind
and dtype by dtype, what stays unquantized, and what the prompt cache holds at the end, layer by
layer, byte for byte. Same method and CLI as ../../dsa/mlx/dsa.py and scripts/measure/mlx/nemotron_h.py.

mlx-cpu 0.32.4 (PyPI), mlx-lm d78bf58e. models/kimi_linear.py: `make_cache` (:483-490) gives a
KDA layer (`(i+1) in linear_attn_config.kda_layers`, :391-392) `ArraysCache(size=4)` =
[q_conv_state, k_conv_state, v_conv_state, ssm_state] (:323-376), and an MLA layer `KVCache()`
whose keys are the kv_a_layernorm'd latent (B, 1, T, kv_lora_rank) and values k_pe
(B, 1, T, qk_rope_head_dim) (:204-207), both in the activations' dtype, grown in steps of 256.

  ~/.mlx-venv/bin/python kimi.py CONFIG.json PROMPT NEW [OVERRIDES_JSON] [PREFILL_STEP] [KV_BITS] [DTYPE] [BITS]

NEW 0: one `model(prompt, cache=cache)` over the whole prompt; NEW > 0: generate_step;
NEW -1: weights only, never evaluated (usable on the real config).
DTYPE bf16 (every floating weight cast to bf16 but what `cast_predicate` keeps, :593-602:
e_score_correction_bias, A_log, dt_bias stay float32) or float32. BITS 0/4/8: quantize_model
(groups of 64) with the model's `quant_predicate` (:604-611: `mlp.gate` at 8 bits, group 64).
Prints one JSON line. Cache part: per layer the arrays, and the bytes freed when the MLA caches,
then the KDA caches, are dropped (mx.get_active_memory() before/after, mx.set_cache_limit(0)).
"""
import gc
import json
import re
import sys
from pathlib import Path

import mlx.core as mx
from mlx.utils import tree_flatten
from mlx_lm.generate import generate_step
from mlx_lm.models.cache import ArraysCache, KVCache, QuantizedKVCache
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
    ("kda q/k/v_proj", r"\.self_attn\.[qkv]_proj\..*" + r"(?<!_)"),
    ("kda conv1d", r"\.self_attn\.[qkv]_conv\."),
    ("kda f_a/f_b/g_a/g_b", r"\.self_attn\.[fg]_[ab]_proj\."),
    ("kda b_proj", r"\.self_attn\.b_proj\."),
    ("kda A_log/dt_bias", r"\.self_attn\.(A_log|dt_bias)$"),
    ("kda o_norm", r"\.self_attn\.o_norm\."),
    ("mla q_proj/kv_a_proj", r"\.self_attn\.(q_proj|kv_a_proj_with_mqa)\."),
    ("mla embed_q/unembed_out (kv_b)", r"\.self_attn\.(embed_q|unembed_out)\."),
    ("attn o_proj (kda+mla)", r"\.self_attn\.o_proj\."),
    ("mla kv_a norm", r"\.self_attn\.kv_a_layernorm\."),
    ("router weight (mlp.gate)", r"\.mlp\.gate\."),
    ("router e_score_correction_bias", r"\.mlp\.e_score_correction_bias$"),
    ("experts (switch_mlp)", r"\.mlp\.switch_mlp\."),
    ("shared_experts", r"\.mlp\.shared_experts\."),
    ("dense mlp", r"\.mlp\.(gate|up|down)_proj\."),
    ("norms", r"(layernorm|norm)\.weight$"),
]


def kind(path, model=None):
    m = re.match(r"model\.layers\.(\d+)\.self_attn\.([qk]_proj)", path)
    if m and model is not None:
        lin = model.layers[int(m.group(1))].is_linear
        return "kda q/k/v_proj" if lin else "mla q_proj/kv_a_proj"
    if re.search(r"\.self_attn\.v_proj\.", path):
        return "kda q/k/v_proj"
    for k, rx in KINDS:
        if k == "kda q/k/v_proj":
            continue
        if re.search(rx, path):
            return k
    return "other"


def dt(a):
    return str(a.dtype).replace("mlx.core.", "")


def arr(a):
    return None if a is None else {"shape": list(a.shape), "dtype": dt(a), "nbytes": a.nbytes}


def entry(c):
    if isinstance(c, QuantizedKVCache):
        return {"type": "QuantizedKVCache", "offset": c.offset, "bits": c.bits, "group_size": c.group_size,
                "keys": [arr(a) for a in c.keys], "values": [arr(a) for a in c.values],
                "nbytes": sum(a.nbytes for a in list(c.keys) + list(c.values))}
    if isinstance(c, KVCache):
        return {"type": "KVCache", "offset": c.offset, "keys": arr(c.keys), "values": arr(c.values),
                "nbytes": c.keys.nbytes + c.values.nbytes}
    if isinstance(c, ArraysCache):
        return {"type": "ArraysCache", "arrays": [arr(a) for a in c.cache],
                "nbytes": sum(a.nbytes for a in c.cache if a is not None)}
    return {"type": type(c).__name__}


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


def held(cache, want):
    before = active()
    for c in cache:
        if want == "mla" and isinstance(c, KVCache):
            c.keys = c.values = None
        if want == "kda" and isinstance(c, ArraysCache):
            c.cache = [None] * len(c.cache)
    return before - active()


def weights_report(model):
    params = tree_flatten(model.parameters())
    names = {k for k, _ in params}
    by_dtype, by_kind, unq = {}, {}, {}
    for k, v in params:
        d = dt(v)
        by_dtype[d] = by_dtype.get(d, 0) + v.nbytes
        kk = by_kind.setdefault(kind(k, model), {})
        kk[d] = kk.get(d, 0) + v.nbytes
        base = k.rsplit(".", 1)[0]
        if k.endswith((".scales", ".biases")) and base + ".scales" in names:
            continue
        if not (k.endswith(".weight") and base + ".scales" in names):
            u = unq.setdefault(kind(k, model), {"tensors": 0, "dtype": d, "nbytes": 0, "example": k, "shape": list(v.shape)})
            u["tensors"] += 1
            u["nbytes"] += v.nbytes
    qbits = {}
    for path, m in model.named_modules():
        if hasattr(m, "bits") and hasattr(m, "group_size"):
            qbits.setdefault(kind(path + ".", model), set()).add((type(m).__name__, m.bits, m.group_size))
    return {
        "weights_bytes": sum(v.nbytes for _, v in params),
        "weights_params": None if any(k.endswith(".scales") for k in names) else sum(v.size for _, v in params),
        "weights_bytes_by_dtype": by_dtype,
        "weights_bytes_by_kind": by_kind,
        "quantized_modules": {k: sorted(list(x) for x in v) for k, v in qbits.items()},
        "unquantized": unq if qbits else None,
        "unquantized_bytes": sum(u["nbytes"] for u in unq.values()) if qbits else None,
    }


def main():
    path, prompt, new = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    over = json.loads(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else {}
    step = int(sys.argv[5]) if len(sys.argv) > 5 else 2048
    kv_bits = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] not in ("", "none") else None
    dtype = sys.argv[7] if len(sys.argv) > 7 else "bf16"
    bits = int(sys.argv[8]) if len(sys.argv) > 8 else 0
    mx.set_cache_limit(0)
    config, model = (bf16_model if dtype == "bf16" else f32_model)(path, over)
    if bits:
        model, _ = quantize_model(model, config, 64, bits,
                                  quant_predicate=getattr(model, "quant_predicate", None))
    if new >= 0:
        mx.eval(model.parameters())
    la = model.args.linear_attn_config
    row = {"config": path.rsplit("/", 1)[-1], "model_type": config["model_type"], "override": over,
           "prompt": prompt, "new": new, "prefill_step_size": step, "kv_bits": kv_bits, "dtype": dtype,
           "bits": bits or None, "num_hidden_layers": model.args.num_hidden_layers,
           "kda_layers_1based": la["kda_layers"], "kda_heads": la["num_heads"], "kda_head_dim": la["head_dim"],
           "first_k_dense_replace": model.args.first_k_dense_replace}
    row.update(weights_report(model))
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
    row["mla_nbytes"] = sum(e["nbytes"] for e in entries if e["type"] in ("KVCache", "QuantizedKVCache"))
    row["kda_nbytes"] = sum(e["nbytes"] for e in entries if e["type"] == "ArraysCache")
    row["mla_held_bytes"] = held(cache, "mla")
    row["kda_held_bytes"] = held(cache, "kda")
    print(json.dumps(row))


if __name__ == "__main__":
    main()
