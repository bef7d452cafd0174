"""mlx-lm d78bf58e `models/gemma3n.py`: weight bytes by kind and dtype
(bf16 as mlx_lm.convert casts; 4 and 8 bits as quantize_model, groups of
64) and what the prompt cache holds after generating, byte for byte.

  ~/.mlx-venv/bin/python scripts/measure/families/gemma3n/mlx_gemma3n.py tiny   > mlx_tiny.txt
  ~/.mlx-venv/bin/python scripts/measure/families/gemma3n/mlx_gemma3n.py real   > mlx_real.txt

`real`: E2B/E4B text configs (configs.py), weights only, never evaluated
(mlx arrays are lazy; nbytes comes from shapes).
`tiny`: MLX_TINY below, random weights, generate_step with prompts shorter
and longer than the window, bf16/4/8 bits, and kv_bits 8.
"""
import json, re, sys, pathlib, collections
import mlx.core as mx
import mlx.nn as nn
from mlx.utils import tree_flatten
from mlx_lm.generate import generate_step
from mlx_lm.utils import _get_classes, quantize_model

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import configs

MLX_TINY = dict(configs.TINY, hidden_size=128, hidden_size_per_layer_input=64, head_dim=64,
                num_attention_heads=2, num_key_value_heads=1, intermediate_size=[256] * 10,
                vocab_size=128, vocab_size_per_layer_input=96, laurel_rank=64, sliding_window=16)

KINDS = [
    ("embed_tokens", r"\.embed_tokens\."),
    ("embed_tokens_per_layer", r"\.embed_tokens_per_layer\."),
    ("per_layer_model_projection", r"\.per_layer_model_projection\."),
    ("altup_projections", r"\.altup_projections\."),
    ("altup_unembed_projections", r"\.altup_unembed_projections\."),
    ("attn q/o", r"\.self_attn\.(q_proj|o_proj)\."),
    ("attn k/v (every layer, shared too)", r"\.self_attn\.(k_proj|v_proj)\."),
    ("mlp", r"\.mlp\."),
    ("laurel linear", r"\.laurel\.linear_"),
    ("per_layer_input_gate/projection", r"\.per_layer_(input_gate|projection)\."),
    ("altup coefs", r"\.altup\.(correction_coefs|prediction_coefs)\."),
    ("altup router", r"\.altup\.modality_router\."),
    ("altup correct_output_scale", r"\.altup\.correct_output_scale$"),
    ("norms", r"norm\.weight$"),
]


def kind(k):
    for name, pat in KINDS:
        if re.search(pat, k):
            return name
    return "other:" + k


def build(text, bits, dtype="bf16"):
    config = {"model_type": "gemma3n", "text_config": text}
    model_class, args_class = _get_classes(config)
    model = model_class(args_class.from_dict(config))
    if dtype == "bf16":
        cast = getattr(model, "cast_predicate", lambda _: True)
        w = {k: (v.astype(mx.bfloat16) if cast(k) and mx.issubdtype(v.dtype, mx.floating) else v)
             for k, v in tree_flatten(model.parameters())}
        model.load_weights(list(w.items()))
    if bits:
        model, _ = quantize_model(model, config, 64, bits)
    return model


def weights(model):
    by = collections.OrderedDict()
    total = 0
    for k, v in tree_flatten(model.parameters()):
        key = (kind(k), str(v.dtype))
        n, b = by.get(key, (0, 0))
        by[key] = (n + 1, b + v.nbytes)
        total += v.nbytes
    return total, by


def show_weights(label, model):
    total, by = weights(model)
    print(f"  weights {label}: {total} bytes")
    for (k, dt), (n, b) in by.items():
        print(f"    {k:34s} {dt:10s} x{n:3d} {b:>14d}")


def cache_bytes(cache):
    rows = []
    for i, c in enumerate(cache):
        st = c.state
        arrs = [a for a in (st if isinstance(st, (list, tuple)) else [st]) if isinstance(a, mx.array)]
        flat = []
        for a in st:
            if isinstance(a, (list, tuple)):
                flat += [x for x in a if isinstance(x, mx.array)]
            elif isinstance(a, mx.array):
                flat.append(a)
        b = sum(x.nbytes for x in flat)
        shapes = [tuple(x.shape) for x in flat]
        raw = [getattr(c, "keys", None), getattr(c, "values", None)]
        raw = [x for x in raw if isinstance(x, mx.array)]
        rawb = sum(x.nbytes for x in raw)
        rows.append((i, type(c).__name__, c.offset, shapes, str(flat[0].dtype) if flat else "-", b,
                     getattr(c, "max_size", None), [tuple(x.shape) for x in raw], rawb))
    return rows


def tiny():
    print("mlx", mx.__version__, "MLX_TINY:", json.dumps({k: MLX_TINY[k] for k in (
        "hidden_size", "num_hidden_layers", "num_kv_shared_layers", "num_attention_heads",
        "num_key_value_heads", "head_dim", "sliding_window", "hidden_size_per_layer_input",
        "vocab_size", "vocab_size_per_layer_input", "laurel_rank", "altup_num_inputs")}))
    print("layer_types", MLX_TINY["layer_types"])
    mx.random.seed(0)
    for bits in (0, 4, 8):
        model = build(MLX_TINY, bits)
        mx.eval(model.parameters())
        print(f"\n== bits {bits or 'bf16'}")
        show_weights("", model)
        lm = model.model.language_model
        print("  layer_idx_to_cache_idx", lm.layer_idx_to_cache_idx)
        for prompt, new, kvb in ((10, 4, None), (40, 8, None), (300, 4, None), (40, 8, 8)):
            cache = model.make_cache()
            toks = mx.array([(7 * i + 3) % 120 + 2 for i in range(prompt)])
            try:
                for _tok, _ in generate_step(toks, model, max_tokens=new, prompt_cache=cache, kv_bits=kvb,
                                             kv_group_size=64, quantized_kv_start=0):
                    pass
                if kvb is None and bits == 0 and prompt > MLX_TINY["sliding_window"]:
                    # one forward over the whole prompt, no generation: the transient after prefill
                    c2 = model.make_cache()
                    mx.eval(model(toks[None], cache=c2))
                    r2 = cache_bytes(c2)
                    print(f"  prefill only {prompt}: buffers " + "; ".join(f"{r[0]}:{r[7][0]}" for r in r2)
                          + f" total {sum(r[8] for r in r2)} B")
            except Exception as e:
                print(f"  prompt {prompt} + {new} new (kv_bits {kvb}): error {type(e).__name__}: {e}")
                continue
            mx.eval([c.state for c in cache])
            rows = cache_bytes(cache)
            tot = sum(r[5] for r in rows)
            rawtot = sum(r[8] for r in rows)
            print(f"  prompt {prompt} + {new} new (kv_bits {kvb}): {len(cache)} cache entries, "
                  f"state total {tot} bytes, allocated buffers total {rawtot} bytes")
            for r in rows:
                print(f"    cache {r[0]}: {r[1]} offset {r[2]} max_size {r[6]} dtype {r[4]} state {r[3]} {r[5]} B;"
                      f" buffers {r[7]} {r[8]} B")


def real():
    print("mlx", mx.__version__)
    for label, c in (("E2B", configs.E2B), ("E4B", configs.E4B)):
        for bits in (0, 4, 8):
            model = build(dict(c), bits)
            print(f"\n== {label} bits {bits or 'bf16'} (unevaluated)")
            show_weights("", model)
            print("  cache entries (make_cache):", [type(x).__name__ + (f"({x.max_size})" if hasattr(x, "max_size") else "")
                                                  for x in model.make_cache()])
            del model


if __name__ == "__main__":
    {"tiny": tiny, "real": real}[sys.argv[1]]()
