"""mlx-lm generating with a shrunk Granite 4.0-H (`granitemoehybrid`: Mamba-2 layers with an
ArraysCache of two entries, attention layers with a KVCache, a dense SwiGLU MLP or a shared MLP
beside routed experts): what the weights hold, tensor kind by kind and dtype by dtype, what stays
unquantized, and what the prompt cache holds at the end, entry by entry, byte for byte. Same
method and CLI as lfm2.py / lfm2moe.py.

mlx-cpu 0.32.4 (PyPI), mlx-lm d78bf58e, as scripts/measure/mlx/NOTES.md sets them up.
`models/granitemoehybrid.py`: `make_cache` (:495-502) gives `ArraysCache(size=2)` on a "mamba"
layer and `KVCache()` on an "attention" layer. `_conv` (:123-155) sets entry 0 to
`padded_input[:, -(d_conv - 1):, :]` (or `mx.zeros(..., dtype=conv_input.dtype)` first), a slice
of the step's concatenation of the old state and the step's `conv_input` (B, L, d_inner + 2·G·N);
`_ssm` (:157-194) sets entry 1 to the state `ssm_update` (ssm.py:217) returns, (B, H, P, N).

  ~/.mlx-venv/bin/python granite.py CONFIG.json PROMPT NEW [OVERRIDES_JSON] [PREFILL_STEP] [KV_BITS] [DTYPE] [BITS]

NEW 0: no generate_step, one `model(prompt, cache=cache)` call over the whole prompt.
NEW -1: weights only, never evaluated (mlx arrays are lazy: `nbytes` comes from the shapes).
NEW -2: weights as `mlx_lm.utils.load_model` loads them from a Hugging Face checkpoint: this
model's weights (cast as DTYPE says) written back under the HF names (`shared_mlp.input_linear`
(2S, h) for a dense model, `block_sparse_moe.input_linear` (E, 2I, h) / `output_linear`,
`conv1d.weight` (C, 1, K)) to a temporary model.safetensors, loaded through `sanitize` (which
splits and transposes them into views), and the bytes the load leaves allocated
(`mx.get_active_memory()` before and after) beside the loaded parameters' `nbytes`.
KV_BITS: none, or 8/4 (generate_step's `kv_bits`, groups of 64).

DTYPE: bf16 (default: every floating weight cast to bf16 but what a `cast_predicate` keeps, as
mlx_lm.convert does; convert.py's `bf16_model`; granitemoehybrid.py has none) or float32 (the
model as mlx-lm builds it, not cast). BITS: 0 (default) or 4/8: `quantize_model` (groups of 64,
the model's `quant_predicate`: `router.layer` at 8 bits when the model has experts) after the
cast, as `mlx_lm.convert -q` does.

mlx-cpu's `GatherMM` (SwitchLinear's `mx.gather_mm`) takes float32 alone: an unquantized bf16
mixture fails at its first layer; the row then carries "error" and no cache.

Prints one JSON line: weights (`nbytes` of the parameters, the tied embedding once) by dtype and
by kind; each quantized module kind's bits/group size; the unquantized tensors of a quantized
model; every cache entry's type and arrays (shape, dtype, nbytes); and the bytes freed when the
conv states (ArraysCache[0]), the SSM states (ArraysCache[1]) and the KV caches are dropped in
turn (`mx.get_active_memory()` before and after, mlx's buffer cache off, `mx.set_cache_limit(0)`;
the last step's lazy states are evaluated first): larger than the arrays' `nbytes` when an array
is a view keeping a larger buffer alive.
"""
import gc
import json
import re
import sys
import tempfile
from pathlib import Path

import mlx.core as mx
from mlx.utils import tree_flatten
from mlx_lm.generate import generate_step
from mlx_lm.models.cache import ArraysCache, KVCache, QuantizedKVCache
from mlx_lm.utils import _get_classes, load_model, quantize_model

from convert import bf16_model, merge


def f32_model(path, over):
    config = merge(json.load(open(path)), over)
    model_class, args_class = _get_classes(config)
    model = model_class(args_class.from_dict(config))
    return config, model


KINDS = [
    ("embedding", r"^model\.embed_tokens\."),
    ("lm_head", r"^lm_head\."),
    ("mamba in_proj", r"\.mamba\.in_proj\."),
    ("mamba conv1d", r"\.mamba\.conv1d\."),
    ("mamba out_proj", r"\.mamba\.out_proj\."),
    ("mamba dt_bias/A_log/D", r"\.mamba\.(dt_bias|A_log|D)$"),
    ("mamba gated norm", r"\.mamba\.norm\.weight$"),
    ("attention q/k/v/o_proj", r"\.self_attn\.(q|k|v|o)_proj\."),
    ("norms", r"(norm|layernorm)\.weight$"),
    ("router (block_sparse_moe.router.layer)", r"\.block_sparse_moe\.router\."),
    ("experts (switch_mlp)", r"\.block_sparse_moe\.switch_mlp\."),
    ("shared_mlp", r"\.shared_mlp\."),
    ("dense MLP", r"\.mlp\.(gate|up|down)_proj\."),
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


def entry(c):
    if isinstance(c, ArraysCache):
        return {"type": "ArraysCache", "arrays": [arr(a) if a is not None else None for a in c.cache]}
    if isinstance(c, QuantizedKVCache):
        return {"type": "QuantizedKVCache", "offset": c.offset, "bits": c.bits, "group_size": c.group_size,
                "keys": [arr(a) for a in c.keys], "values": [arr(a) for a in c.values]}
    if isinstance(c, KVCache):
        return {"type": "KVCache", "offset": c.offset, "keys": arr(c.keys), "values": arr(c.values)}
    return {"type": type(c).__name__}


def kv_nbytes(e):
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


def held_arrays(caches, idx):
    """Bytes freed when entry `idx` of every ArraysCache in `caches` is dropped."""
    before = active()
    for c in caches:
        c.cache[idx] = None
    return before - active()


def held_kv(caches):
    before = active()
    for c in caches:
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


def hf_weights(model):
    """The model's (unquantized) weights under the Hugging Face checkpoint's names and shapes:
    the inverse of `Model.sanitize` (granitemoehybrid.py:504-550)."""
    w = dict(tree_flatten(model.parameters()))
    out = {}
    moe = model.args.use_moe
    for k, v in w.items():
        if k.endswith("conv1d.weight"):
            out[k] = mx.contiguous(v.moveaxis(1, 2))  # (C, K, 1) -> (C, 1, K)
        elif ".mlp." in k and not moe:
            continue
        elif ".switch_mlp." in k:
            continue
        else:
            out[k] = v
    for l in range(model.args.num_hidden_layers):
        if moe:
            p = f"model.layers.{l}.block_sparse_moe"
            out[f"{p}.input_linear.weight"] = mx.concatenate(
                [w[f"{p}.switch_mlp.gate_proj.weight"], w[f"{p}.switch_mlp.up_proj.weight"]], axis=1)
            out[f"{p}.output_linear.weight"] = w[f"{p}.switch_mlp.down_proj.weight"]
        else:
            p = f"model.layers.{l}"
            out[f"{p}.shared_mlp.input_linear.weight"] = mx.concatenate(
                [w[f"{p}.mlp.gate_proj.weight"], w[f"{p}.mlp.up_proj.weight"]], axis=0)
            out[f"{p}.shared_mlp.output_linear.weight"] = w[f"{p}.mlp.down_proj.weight"]
    return out


def hf_load_row(config, model):
    with tempfile.TemporaryDirectory() as d:
        hf = hf_weights(model)
        mx.eval(hf)
        mx.save_safetensors(str(Path(d) / "model.safetensors"), hf)
        cfg = {k: v for k, v in config.items() if not k.startswith("_")}
        json.dump(cfg, open(Path(d) / "config.json", "w"))
        hf_bytes = sum(v.nbytes for v in hf.values())
        del hf
        before = active()
        loaded, _ = load_model(Path(d))
        mx.eval(loaded.parameters())
        after = active()
        params = tree_flatten(loaded.parameters())
        return {
            "hf_checkpoint_bytes": hf_bytes,
            "loaded_params_nbytes": sum(v.nbytes for _, v in params),
            "loaded_active_bytes": after - before,
            "loaded_dtypes": sorted({dt(v) for _, v in params}),
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
    mamba = next(l.mamba for l in model.layers if l.layer_type == "mamba")
    row["mamba"] = {"conv_dim": mamba.conv_dim, "intermediate_size": mamba.intermediate_size,
                    "conv1d_weight": arr(mamba.conv1d.weight),
                    "conv1d_bias": arr(mamba.conv1d.bias) if "bias" in mamba.conv1d else None,
                    "in_proj_out": mamba.in_proj.weight.shape[0] if not bits else None,
                    "A_log_dtype": dt(mamba.A_log), "D_dtype": dt(mamba.D), "dt_bias_dtype": dt(mamba.dt_bias)}
    row["layers_spec"] = [l.layer_type for l in model.layers]
    if new == -2:
        row.update(hf_load_row(config, model))
    if new < 0:
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
        # The last (pipelined) step's states are lazy, outside the logits' graph: materialize
        # them (a slice shares its input's buffer) before reading the memory.
        mx.eval([c.state for c in cache])
    except Exception as e:  # mlx-cpu's GatherMM on bf16
        row["error"] = f"{type(e).__name__}: {e}"
        row["mlx"], row["mlx_lm"] = mx.__version__, "d78bf58e"
        print(json.dumps(row))
        return
    entries = [entry(c) for c in cache]
    ssm = [c for c in cache if isinstance(c, ArraysCache)]
    attn = [c for c in cache if not isinstance(c, ArraysCache)]
    row["layers"] = [e["type"] for e in entries]
    row["cache"] = entries
    row["conv_state_nbytes"] = sum(e["arrays"][0]["nbytes"] for e in entries if e["type"] == "ArraysCache")
    row["ssm_state_nbytes"] = sum(e["arrays"][1]["nbytes"] for e in entries if e["type"] == "ArraysCache")
    row["kv_nbytes"] = sum(kv_nbytes(e) for e in entries if e["type"] != "ArraysCache")
    row["conv_state_held_bytes"] = held_arrays(ssm, 0)
    row["ssm_state_held_bytes"] = held_arrays(ssm, 1)
    row["kv_held_bytes"] = held_kv(attn)
    row["mlx"], row["mlx_lm"] = mx.__version__, "d78bf58e"
    print(json.dumps(row))


if __name__ == "__main__":
    main()
