"""mlx-lm generating with a shrunk LFM2 (short-convolution layers with an ArraysCache, attention
layers with a KVCache): what the prompt cache holds at the end, entry by entry, byte for byte.

mlx-cpu 0.32.4 (PyPI), mlx-lm d78bf58e (installed from its source archive with --no-deps), as
scripts/measure/mlx/NOTES.md sets them up. `models/lfm2.py`: `make_cache` gives `KVCache()` on
the attention layers (`full_attn_idxs`) and `ArraysCache(size=1)` on the conv layers, whose one
entry `ShortConv.__call__` sets to `Bx[:, -(L_cache - 1):, :]` (or `mx.zeros(..., dtype=Bx.dtype)`
first): (B, L_cache - 1, hidden) in the activations' dtype.

  ~/.mlx-venv/bin/python lfm2.py CONFIG.json PROMPT NEW [OVERRIDES_JSON] [PREFILL_STEP] [KV_BITS] [DTYPE] [BITS]

NEW 0: no generate_step, one `model(prompt, cache=cache)` call over the whole prompt.
KV_BITS: none, or 8/4 (generate_step's `kv_bits`, groups of 64).

DTYPE: bf16 (default: every floating weight cast to bf16, as mlx_lm.convert does; convert.py's
`bf16_model`) or float32 (the model as mlx-lm builds it, not cast). BITS: 0 (default, none) or
4/8: `quantize_model` (groups of 64) after the cast, as `mlx_lm.convert -q` does.

Prints one JSON line: the weights (`nbytes` of the parameters, the tied embedding once), every
cache entry's type and the shape, dtype and `nbytes` of each array it holds (a KVCache's `keys`
and `values` are its whole buffers, capacity in steps of 256), and the bytes freed when the
entries of each kind are dropped (`mx.get_active_memory()` before and after: the buffers they
kept alive, which may be larger than their arrays when an array is a view of a larger one;
mlx's buffer cache is off, `mx.set_cache_limit(0)`, so that no reused buffer's slack counts).
"""
import gc
import json
import sys

import mlx.core as mx
from mlx.utils import tree_flatten
from mlx_lm.generate import generate_step
from mlx_lm.models.cache import ArraysCache, KVCache, QuantizedKVCache
from mlx_lm.utils import _get_classes, quantize_model

from convert import bf16_model, merge


def f32_model(path, over):
    config = merge(json.load(open(path)), over)
    model_class, args_class = _get_classes(config)
    model = model_class(args_class.from_dict(config))
    return config, model


def arr(a):
    return {"shape": list(a.shape), "dtype": str(a.dtype).replace("mlx.core.", ""), "nbytes": a.nbytes}


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
    """mx.get_active_memory() once it is steady: right after generate_step some arrays of the
    abandoned generator (the pipelined next token's logits) are freed only on a later pass."""
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


def main():
    path, prompt, new = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    over = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    step = int(sys.argv[5]) if len(sys.argv) > 5 else 2048
    kv_bits = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] not in ("", "none") else None
    dtype = sys.argv[7] if len(sys.argv) > 7 else "bf16"
    bits = int(sys.argv[8]) if len(sys.argv) > 8 else 0
    # No buffer cache: mlx's allocator otherwise hands a freed, somewhat larger buffer (up to
    # twice the size) to a smaller array, and get_active_memory counts the buffer's size, so the
    # bytes freed by the small conv states would carry that slack (seen: +3,072 or +6,144 on
    # the 350M row). Sizes and nbytes do not depend on it.
    mx.set_cache_limit(0)
    config, model = (bf16_model if dtype == "bf16" else f32_model)(path, over)
    if bits:
        model, _ = quantize_model(model, config, 64, bits)
    mx.eval(model.parameters())
    params = tree_flatten(model.parameters())
    weights_bytes = sum(v.nbytes for _, v in params)
    weights_dtypes = {}
    for k, v in params:
        d = str(v.dtype).replace("mlx.core.", "")
        weights_dtypes[d] = weights_dtypes.get(d, 0) + v.nbytes
    cache = model.make_cache()
    tokens = mx.array([(7 * i) % 97 + 1 for i in range(prompt)], dtype=mx.uint32)
    if new == 0:
        # One forward over the whole prompt (no generate_step): what the cache holds right
        # after a prefill call, before any decode step replaces the conv states.
        logits = model(tokens[None], cache=cache)
        mx.eval(logits, [c.state for c in cache])
    else:
        for _ in zip(range(new), generate_step(tokens, model, max_tokens=new, prompt_cache=cache,
                                                prefill_step_size=step, kv_bits=kv_bits)):
            pass
    # The last (pipelined) step's conv states are lazy slices, outside the logits' graph:
    # materialize them (a slice shares its input's buffer) before reading the memory.
    mx.eval([c.state for c in cache])
    entries = [entry(c) for c in cache]
    conv = [c for c in cache if isinstance(c, ArraysCache)]
    attn = [c for c in cache if not isinstance(c, ArraysCache)]
    row = {
        "config": path.rsplit("/", 1)[-1],
        "override": over,
        "prompt": prompt,
        "new": new,
        "prefill_step_size": step,
        "kv_bits": kv_bits,
        "dtype": dtype,
        "bits": bits or None,
        "weights_bytes": weights_bytes,
        "weights_bytes_by_dtype": weights_dtypes,
        "conv_weight_shape": list(model.layers[0].conv.conv.weight.shape),
        "ff_dim": model.layers[0].feed_forward.w1.weight.shape[0] if not bits else None,
        "layers": [e["type"] for e in entries],
        "cache": entries,
        "conv_nbytes": sum(entry_nbytes(e) for e in entries if e["type"] == "ArraysCache"),
        "attn_nbytes": sum(entry_nbytes(e) for e in entries if e["type"] != "ArraysCache"),
    }
    row["conv_held_bytes"] = held(conv)
    row["attn_held_bytes"] = held(attn)
    row["mlx"] = mx.__version__
    row["mlx_lm"] = "d78bf58e"
    print(json.dumps(row))


if __name__ == "__main__":
    main()
