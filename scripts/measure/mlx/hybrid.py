"""mlx-lm generating with a shrunk Gated DeltaNet hybrid (Qwen3.5 / 3.6, Qwen3-Next):
the weights as mlx_lm.convert leaves them, and the prompt cache at the end (every
KVCache's arrays and every ArraysCache's convolution and recurrent state), byte for byte.

mlx-cpu 0.32.4 (PyPI), mlx-lm d78bf58e (the commit vramfit models, installed from its
source archive with --no-deps). CPU only: gated_delta_update takes its ops path (no Metal
kernel); the cache's arrays are the same either way (the kernel's state_out has the
state's dtype and shape, gated_delta.py:209-210).

  ~/.mlx-venv/bin/python hybrid.py CONFIG.json PROMPT NEW [BITS] [OVERRIDES_JSON] [KV_BITS]

prints one JSON line.
"""
import json
import sys

import mlx.core as mx
import mlx.nn as nn
from mlx.utils import tree_flatten
from mlx_lm.generate import generate_step
from mlx_lm.models.cache import ArraysCache, KVCache, QuantizedKVCache, make_prompt_cache
from mlx_lm.utils import quantize_model

from convert import bf16_model


def main():
    path, prompt, new = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    bits = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] != "0" else None
    over = json.loads(sys.argv[5]) if len(sys.argv) > 5 else {}
    kv_bits = int(sys.argv[6]) if len(sys.argv) > 6 else None
    # mlx_lm.convert: cast floating weights to the dtype, but what
    # cast_predicate keeps (A_log), then quantize_model.
    config, model = bf16_model(path, over)
    if bits:
        model, _ = quantize_model(model, config, 64, bits)
    mx.eval(model.parameters())
    params = tree_flatten(model.parameters())
    weights_bytes = sum(v.nbytes for _, v in params)
    cache = make_prompt_cache(model)
    tokens = mx.array([(7 * i) % 97 + 1 for i in range(prompt)], dtype=mx.uint32)
    mx.reset_peak_memory()
    for n, _ in zip(range(new), generate_step(tokens, model, max_tokens=new, prompt_cache=cache, kv_bits=kv_bits)):
        pass
    kv = state = conv = 0
    kinds, dts = [], []
    for c in cache:
        if isinstance(c, ArraysCache):
            kinds.append("linear")
            conv += c.cache[0].nbytes
            state += c.cache[1].nbytes
            dts = [str(x.dtype) for x in c.cache]
        elif isinstance(c, KVCache):
            kinds.append("full")
            kv += c.keys.nbytes + c.values.nbytes
        elif isinstance(c, QuantizedKVCache):
            kinds.append("full")
            kv += sum(x.nbytes for x in c.keys) + sum(x.nbytes for x in c.values)
    print(json.dumps({
        "config": path.rsplit("/", 1)[-1],
        "override": over,
        "prompt": prompt,
        "new": new,
        "bits": bits,
        "kv_bits": kv_bits,
        "layers": kinds,
        "weights_bytes": weights_bytes,
        "kv_bytes": kv,
        "conv_state_bytes": conv,
        "recurrent_state_bytes": state,
        "state_dtypes": dts,
        "peak_memory": mx.get_peak_memory(),
        "mlx": mx.__version__,
        "mlx_lm": "d78bf58e",
    }))


if __name__ == "__main__":
    main()
