"""mlx-lm generating with a shrunk Llama 4 (chunked attention on all but every 4th layer):
what the prompt cache holds at the end, as buffers (a ChunkedKVCache trimmed to its chunk keeps
a view of its old array until it grows again), byte for byte.

mlx-cpu 0.32.4 (PyPI), mlx-lm d78bf58e (the commit vramfit models, installed from its source
archive with --no-deps), as scripts/measure/mlx/NOTES.md sets them up. The model is quantized to
4 bits (mlx-cpu's GatherMM takes float32 alone); the cache is bf16 either way.

  ~/.mlx-venv/bin/python chunked.py CONFIG.json PROMPT NEW [OVERRIDES_JSON] [PREFILL_STEP] [KV_BITS]

prints one JSON line: the weights (`nbytes` of the quantized parameters), the cache's arrays (`nbytes`, as mlx-lm sees them: a trimmed view counts
its own cells), and the bytes freed when the cache is dropped (`mx.get_active_memory()` before
and after: the buffers it kept alive), per kind of layer.
"""
import gc
import json
import sys

import mlx.core as mx
from mlx.utils import tree_flatten
from mlx_lm.generate import generate_step
from mlx_lm.models.cache import ChunkedKVCache, QuantizedKVCache
from mlx_lm.utils import quantize_model

from convert import bf16_model


def kv_nbytes(c):
    """A KVCache's or QuantizedKVCache's arrays."""
    if isinstance(c, QuantizedKVCache):
        return sum(x.nbytes for x in c.keys) + sum(x.nbytes for x in c.values)
    return c.keys.nbytes + c.values.nbytes


def nbytes_cells(c):
    return (c.keys[0] if isinstance(c, QuantizedKVCache) else c.keys).shape[2]


def held(caches):
    """Bytes freed when `caches` are dropped."""
    mx.synchronize()
    gc.collect()
    before = mx.get_active_memory()
    for c in caches:
        c.keys = c.values = None
    gc.collect()
    mx.synchronize()
    return before - mx.get_active_memory()


def main():
    path, prompt, new = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    over = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    step = int(sys.argv[5]) if len(sys.argv) > 5 else 2048
    kv_bits = int(sys.argv[6]) if len(sys.argv) > 6 else None
    config, model = bf16_model(path, over)
    # mlx-cpu's GatherMM takes float32 alone: the experts run quantized
    # (4 bits, groups of 64), the cache stays bf16.
    model, _ = quantize_model(model, config, 64, 4)
    mx.eval(model.parameters())
    weights_bytes = sum(v.nbytes for _, v in tree_flatten(model.parameters()))
    cache = model.make_cache()
    tokens = mx.array([(7 * i) % 97 + 1 for i in range(prompt)], dtype=mx.uint32)
    for _ in zip(range(new), generate_step(tokens, model, max_tokens=new, prompt_cache=cache,
                                            prefill_step_size=step, kv_bits=kv_bits)):
        pass
    chunked = [c for c in cache if isinstance(c, ChunkedKVCache)]
    # kv_bits turns each KVCache into a QuantizedKVCache (`to_quantized`);
    # ChunkedKVCache has none and stays as it is (`maybe_quantize_kv_cache`).
    full = [c for c in cache if not isinstance(c, ChunkedKVCache)]
    row = {
        "config": path.rsplit("/", 1)[-1],
        "override": over,
        "prompt": prompt,
        "new": new,
        "prefill_step_size": step,
        "chunk": chunked[0].chunk_size if chunked else None,
        "layers": ["chunked" if isinstance(c, ChunkedKVCache) else "full" for c in cache],
        "chunked_cells": [c.keys.shape[2] for c in chunked[:1]],
        "chunked_offset": chunked[0].offset if chunked else None,
        "chunked_start": chunked[0].start_position if chunked else None,
        "kv_bits": kv_bits,
        "bits": 4,
        "weights_bytes": weights_bytes,
        "full_cells": [nbytes_cells(c) for c in full[:1]],
        "chunked_nbytes": sum(c.keys.nbytes + c.values.nbytes for c in chunked),
        "full_nbytes": sum(kv_nbytes(c) for c in full),
    }
    row["chunked_held_bytes"] = held(chunked)
    row["full_held_bytes"] = held(full)
    row["mlx"] = mx.__version__
    row["mlx_lm"] = "d78bf58e"
    print(json.dumps(row))


if __name__ == "__main__":
    main()
