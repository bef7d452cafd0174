"""mlx-lm generating with a shrunk Nemotron-H (`nemotron_h`: Mamba-2 layers "M" with an
ArraysCache of two entries, attention layers "*" with a KVCache, MLP-only layers "-" and
MoE-only layers "E" with no cache): what the weights hold, tensor kind by kind and dtype by dtype,
what stays unquantized, and what the prompt cache holds at the end, entry by entry, byte for
byte. Same method and CLI as granite.py (lfm2.py / lfm2moe.py).

mlx-cpu 0.32.4 (PyPI), mlx-lm d78bf58e, as scripts/measure/mlx/NOTES.md sets them up.
`models/nemotron_h.py`: the layer kinds come from `hybrid_override_pattern` (or
`layers_block_type`, mapped to the same characters, :60-73); `make_cache` (:529-536) gives
`ArraysCache(size=2)` on an "M" layer, `KVCache()` on a "*" layer and nothing on "-" / "E".
`_conv` (:134-166) sets entry 0 to `padded_input[:, -(conv_kernel - 1):, :]` (or
`mx.zeros(..., dtype=conv_input.dtype)` first), a slice of the step's concatenation of the old
state and the step's `conv_input` (B, L, H·P + 2·G·N); `_ssm` (:168-205) sets entry 1 to the
state `ssm_update` (ssm.py:217) returns, (B, H, P, N).

  ~/.mlx-venv/bin/python nemotron_h.py CONFIG.json PROMPT NEW [OVERRIDES_JSON] [PREFILL_STEP] [KV_BITS] [DTYPE] [BITS]

NEW 0: no generate_step, one `model(prompt, cache=cache)` call over the whole prompt.
NEW -1: weights only, never evaluated (mlx arrays are lazy: `nbytes` comes from the shapes).
NEW -2: weights as `mlx_lm.utils.load_model` loads them from a Hugging Face checkpoint: this
model's weights (cast as DTYPE says) written back under the HF names (`conv1d.weight`
(C, 1, K); experts one by one, `mixer.experts.{e}.up_proj.weight` (I, h) / `down_proj.weight`
(h, I)) to a temporary model.safetensors, loaded through `sanitize` (which transposes the conv
and `mx.stack`s the experts, :538-555), and the bytes the load leaves allocated
(`mx.get_active_memory()` before and after) beside the loaded parameters' `nbytes`.
KV_BITS: none, or 8/4 (generate_step's `kv_bits`, groups of 64).

DTYPE: bf16 (default: every floating weight cast to bf16 but what `cast_predicate` keeps, as
mlx_lm.convert does; convert.py's `bf16_model`; nemotron_h.py's (:557-562) keeps `A_log` and
`e_score_correction_bias` in float32) or float32 (the model as mlx-lm builds it, not cast).
BITS: 0 (default) or 4/8: `quantize_model` (groups of 64; nemotron_h.py has no
`quant_predicate`, so every module with `to_quantized` whose input width divides by 64 is
quantized at BITS) after the cast, as `mlx_lm.convert -q` does.

mlx-cpu's `GatherMM` (SwitchLinear's `mx.gather_mm`) takes float32 alone: an unquantized bf16
mixture fails at its first "E" layer; the row then carries "error" and no cache.

Prints one JSON line: weights (`nbytes` of the parameters; `lm_head` is its own matrix, never
tied) by dtype and by kind; each quantized module kind's bits/group size; the unquantized
tensors of a quantized model; every cache entry's type and arrays (shape, dtype, nbytes); and the
bytes freed when the conv states (ArraysCache[0]), the SSM states (ArraysCache[1]) and the KV
caches are dropped in turn (`mx.get_active_memory()` before and after, mlx's buffer cache off,
`mx.set_cache_limit(0)`; the last step's lazy states are evaluated first): larger than the
arrays' `nbytes` when an array is a view keeping a larger buffer alive.
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


# Every layer's mixer is `backbone.layers.N.mixer`, whatever its kind: the kinds are told apart
# by the mixer's own tensor names (an "M" mixer's in_proj, a "-" mixer's up_proj, ...).
KINDS = [
    ("embedding", r"^backbone\.embeddings\."),
    ("lm_head", r"^lm_head\."),
    ("mamba in_proj", r"\.mixer\.in_proj\."),
    ("mamba conv1d", r"\.mixer\.conv1d\."),
    ("mamba out_proj", r"\.mixer\.out_proj\."),
    ("mamba A_log", r"\.mixer\.A_log$"),
    ("mamba dt_bias/D", r"\.mixer\.(dt_bias|D)$"),
    ("mamba gated norm", r"\.mixer\.norm\.weight$"),
    ("attention q/k/v/o_proj", r"\.mixer\.(q|k|v|o)_proj\."),
    ("MLP layer up/down_proj", r"\.mixer\.(up|down)_proj\."),
    ("router weight (mixer.gate.weight)", r"\.mixer\.gate\.weight$"),
    ("router e_score_correction_bias", r"\.mixer\.gate\.e_score_correction_bias$"),
    ("experts (switch_mlp fc1/fc2)", r"\.mixer\.switch_mlp\."),
    ("shared_experts up/down_proj", r"\.mixer\.shared_experts\."),
    ("latent proj", r"\.mixer\.fc[12]_latent_proj\."),
    ("norms", r"(\.norm|\.norm_f)\.weight$"),
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


def layer_report(model, bits):
    """Shapes and dtypes of one layer of each kind (the first one)."""
    out = {}
    for l in model.layers:
        t = l.block_type
        if t in out:
            continue
        m = l.mixer
        if t == "M":
            out[t] = {"conv_dim": m.conv_dim, "intermediate_size": m.intermediate_size,
                      "n_groups": m.n_groups, "ssm_state_size": m.ssm_state_size, "head_dim": m.head_dim,
                      "num_heads": m.num_heads, "conv1d_weight": arr(m.conv1d.weight),
                      "conv1d_bias": arr(m.conv1d.bias) if "bias" in m.conv1d else None,
                      "in_proj_out": m.in_proj.weight.shape[0] if not bits else None,
                      "A_log": arr(m.A_log), "D": arr(m.D), "dt_bias": arr(m.dt_bias),
                      "norm_weight": arr(m.norm.weight), "norm_group_size": m.norm.group_size}
        elif t == "*":
            out[t] = {"head_dim": m.head_dim, "num_heads": m.num_heads, "num_key_value_heads": m.num_key_value_heads,
                      "q_proj_weight": arr(m.q_proj.weight), "k_proj_weight": arr(m.k_proj.weight),
                      "o_proj_weight": arr(m.o_proj.weight)}
        elif t == "-":
            out[t] = {"up_proj_weight": arr(m.up_proj.weight), "down_proj_weight": arr(m.down_proj.weight)}
        elif t == "E":
            e = {"switch_mlp": type(m.switch_mlp).__name__,
                 "fc1": type(m.switch_mlp.fc1).__name__, "fc1_weight": arr(m.switch_mlp.fc1.weight),
                 "fc2_weight": arr(m.switch_mlp.fc2.weight),
                 "gate": type(m.gate).__name__, "gate_weight": arr(m.gate.weight),
                 "e_score_correction_bias": arr(m.gate.e_score_correction_bias)}
            if "shared_experts" in m:
                e["shared_up_proj_weight"] = arr(m.shared_experts.up_proj.weight)
                e["shared_down_proj_weight"] = arr(m.shared_experts.down_proj.weight)
            out[t] = e
    return out


def hf_weights(model):
    """The model's (unquantized) weights under the Hugging Face checkpoint's names and shapes:
    the inverse of `Model.sanitize` (nemotron_h.py:538-555)."""
    w = dict(tree_flatten(model.parameters()))
    out = {}
    for k, v in w.items():
        if k.endswith("conv1d.weight"):
            out[k] = mx.contiguous(v.moveaxis(1, 2))  # (C, K, 1) -> (C, 1, K)
        elif ".switch_mlp." in k:
            continue
        else:
            out[k] = v
    for l, layer in enumerate(model.layers):
        if layer.block_type != "E":
            continue
        p = f"backbone.layers.{l}.mixer"
        for n, m in [("fc1", "up_proj"), ("fc2", "down_proj")]:
            stacked = w[f"{p}.switch_mlp.{n}.weight"]
            for e in range(stacked.shape[0]):
                out[f"{p}.experts.{e}.{m}.weight"] = mx.contiguous(stacked[e])
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
        by_dtype = {}
        for _, v in params:
            by_dtype[dt(v)] = by_dtype.get(dt(v), 0) + v.nbytes
        return {
            "hf_checkpoint_bytes": hf_bytes,
            "loaded_params_nbytes": sum(v.nbytes for _, v in params),
            "loaded_active_bytes": after - before,
            "loaded_bytes_by_dtype": by_dtype,
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
    row["layer_kinds"] = layer_report(model, bits)
    row["layers_spec"] = "".join(l.block_type for l in model.layers)
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
