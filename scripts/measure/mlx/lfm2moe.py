"""mlx-lm generating with a shrunk LFM2-MoE (`lfm2_moe`: short-convolution layers with an
ArraysCache, attention layers with a KVCache, a dense SwiGLU MLP on the first `num_dense_layers`
layers and routed experts (SwitchGLU, sigmoid router with an expert bias) on the others): what
the weights hold, tensor kind by kind and dtype by dtype, what stays unquantized, and what the
prompt cache holds at the end, entry by entry, byte for byte. Same method as lfm2.py.

mlx-cpu 0.32.4 (PyPI), mlx-lm d78bf58e, as scripts/measure/mlx/NOTES.md sets them up.
`models/lfm2_moe.py`: `make_cache` gives `KVCache()` on the attention layers (`full_attn_idxs`,
from `layer_types` when absent) and `ArraysCache(size=1)` on the conv layers, whose one entry
`ShortConv.__call__` sets to `Bx[:, -(L_cache - 1):, :]` (the same code as lfm2.py).
`Lfm2MoeSparseMoeBlock`: `gate` nn.Linear(hidden, E), `switch_mlp` SwitchGLU (gate_proj/up_proj
[E, moe_inter, hidden], down_proj [E, hidden, moe_inter]), `expert_bias` mx.zeros((E,)) (a
float32 parameter). `cast_predicate` keeps `expert_bias` out of the bf16 cast;
`quant_predicate` gives `feed_forward.gate` (the router) 8 bits in groups of 64.

  ~/.mlx-venv/bin/python lfm2moe.py CONFIG.json PROMPT NEW [OVERRIDES_JSON] [PREFILL_STEP] [KV_BITS] [DTYPE] [BITS]

NEW 0: no generate_step, one `model(prompt, cache=cache)` call over the whole prompt.
NEW -1: weights only, never evaluated (mlx arrays are lazy; `nbytes` comes from the shapes, so a
full-size config such as LFM2-8B-A1B's costs no memory).
KV_BITS: none, or 8/4 (generate_step's `kv_bits`, groups of 64).
DTYPE: bf16 (default: every floating weight cast to bf16 but what `cast_predicate` keeps, as
mlx_lm.convert does; convert.py's `bf16_model`) or float32 (the model as mlx-lm builds it, not
cast). BITS: 0 (default) or 4/8: `quantize_model` (groups of 64, the model's `quant_predicate`)
after the cast, as `mlx_lm.convert -q` does.

mlx-cpu's `GatherMM` (SwitchLinear's `mx.gather_mm`) takes float32 alone: an unquantized bf16
model fails at its first MoE layer. The row then carries "error" and no cache. Quantized
experts take `gather_qmm`, which runs with bf16 activations.

Prints one JSON line: weights (`nbytes` of the parameters, the tied embedding once), by dtype
and by kind; each quantized module kind's bits/group size; the unquantized tensors of a
quantized model; every cache entry's type and arrays; and the bytes freed when the entries of
each kind are dropped (`mx.get_active_memory()` before and after, with mlx's buffer cache off,
`mx.set_cache_limit(0)`; the last step's lazy conv states are evaluated first).
"""
import gc
import json
import re
import sys

import mlx.core as mx
from mlx.utils import tree_flatten
from mlx_lm.generate import generate_step
from mlx_lm.models.cache import ArraysCache, KVCache, QuantizedKVCache
from mlx_lm.utils import _get_classes, quantize_model

from convert import bf16_model, merge

KINDS = [
    ("embedding", r"^model\.embed_tokens\."),
    ("conv kernel", r"\.conv\.conv\."),
    ("conv in/out_proj", r"\.conv\.(in|out)_proj\."),
    ("attention q/k/v/out_proj", r"\.self_attn\.(q|k|v|out)_proj\."),
    ("norms", r"(norm|layernorm)\.weight$"),
    ("router (feed_forward.gate)", r"\.feed_forward\.gate\."),
    ("expert_bias", r"\.feed_forward\.expert_bias$"),
    ("experts (switch_mlp)", r"\.feed_forward\.switch_mlp\."),
    ("dense MLP", r"\.feed_forward\.(gate|up|down)_proj\."),
]


def kind(path):
    for k, rx in KINDS:
        if re.search(rx, path):
            return k
    return "other"


def dt(a):
    return str(a.dtype).replace("mlx.core.", "")


def f32_model(path, over):
    config = merge(json.load(open(path)), over)
    model_class, args_class = _get_classes(config)
    model = model_class(args_class.from_dict(config))
    return config, model


def arr(a):
    return {"shape": list(a.shape), "dtype": dt(a), "nbytes": a.nbytes}


def entry(c):
    if isinstance(c, ArraysCache):
        return {"type": "ArraysCache", "arrays": [arr(a) if a is not None else None for a in c.cache]}
    if isinstance(c, QuantizedKVCache):
        return {"type": "QuantizedKVCache", "offset": c.offset, "bits": c.bits, "group_size": c.group_size,
                "keys": [arr(a) for a in c.keys], "values": [arr(a) for a in c.values]}
    if isinstance(c, KVCache):
        return {"type": "KVCache", "offset": c.offset, "keys": arr(c.keys), "values": arr(c.values)}
    return {"type": type(c).__name__}


def entry_nbytes(e):
    if e["type"] == "ArraysCache":
        return sum(a["nbytes"] for a in e["arrays"] if a)
    k, v = e["keys"], e["values"]
    if isinstance(k, list):
        return sum(a["nbytes"] for a in k + v)
    return k["nbytes"] + v["nbytes"]


def active():
    """mx.get_active_memory() once it is steady (lfm2.py's)."""
    last = None
    while True:
        mx.synchronize()
        gc.collect()
        mx.synchronize()
        now = mx.get_active_memory()
        if now == last:
            return now
        last = now


def held(caches):
    """Bytes freed when `caches` are emptied."""
    before = active()
    for c in caches:
        if isinstance(c, ArraysCache):
            c.cache = [None] * len(c.cache)
        else:
            c.keys = c.values = None
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
            q = qbits.setdefault(kind(path + "."), set())
            q.add((type(m).__name__, m.bits, m.group_size))
    return {
        "weights_bytes": sum(v.nbytes for _, v in params),
        "weights_bytes_by_dtype": by_dtype,
        "weights_bytes_by_kind": by_kind,
        "quantized_modules": {k: sorted(list(x) for x in v) for k, v in qbits.items()},
        "unquantized": unq if qbits else None,
        "unquantized_bytes": sum(u["nbytes"] for u in unq.values()) if qbits else None,
    }


def main():
    path, prompt, new = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    over = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    step = int(sys.argv[5]) if len(sys.argv) > 5 else 2048
    kv_bits = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] not in ("", "none") else None
    dtype = sys.argv[7] if len(sys.argv) > 7 else "bf16"
    bits = int(sys.argv[8]) if len(sys.argv) > 8 else 0
    mx.set_cache_limit(0)  # see lfm2.py: no reused buffer's slack in get_active_memory
    config, model = (bf16_model if dtype == "bf16" else f32_model)(path, over)
    if bits:
        model, _ = quantize_model(model, config, 64, bits)
    if new >= 0:
        mx.eval(model.parameters())
    row = {
        "config": path.rsplit("/", 1)[-1], "override": over, "prompt": prompt, "new": new,
        "prefill_step_size": step, "kv_bits": kv_bits, "dtype": dtype, "bits": bits or None,
    }
    row.update(weights_report(model))
    conv_layer = next(l for l in model.layers if not l.is_attention_layer)
    row["conv_weight_shape"] = list(conv_layer.conv.conv.weight.shape)
    row["expert_bias_dtype"] = dt(model.layers[-1].feed_forward.expert_bias)
    if new < 0:
        row["layers"] = ["KVCache" if l.is_attention_layer else "ArraysCache" for l in model.layers]
        row["mlx"], row["mlx_lm"] = mx.__version__, "d78bf58e"
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
    except Exception as e:  # mlx-cpu's GatherMM on bf16
        row["error"] = f"{type(e).__name__}: {e}"
        row["mlx"], row["mlx_lm"] = mx.__version__, "d78bf58e"
        print(json.dumps(row))
        return
    entries = [entry(c) for c in cache]
    conv = [c for c in cache if isinstance(c, ArraysCache)]
    attn = [c for c in cache if not isinstance(c, ArraysCache)]
    row["layers"] = [e["type"] for e in entries]
    row["cache"] = entries
    row["conv_nbytes"] = sum(entry_nbytes(e) for e in entries if e["type"] == "ArraysCache")
    row["attn_nbytes"] = sum(entry_nbytes(e) for e in entries if e["type"] != "ArraysCache")
    row["conv_held_bytes"] = held(conv)
    row["attn_held_bytes"] = held(attn)
    row["mlx"], row["mlx_lm"] = mx.__version__, "d78bf58e"
    print(json.dumps(row))


if __name__ == "__main__":
    main()
