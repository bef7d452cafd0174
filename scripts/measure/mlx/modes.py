"""The weights mlx_lm.convert writes for a model quantized in one of MLX's modes
(`--q-mode affine|mxfp4|nvfp4|mxfp8`, the mode's default group and bits:
`mlx_lm/utils.py: quantize_model`, `defaults_for_mode`), byte for byte: the model
class mlx-lm picks for the config, shrunk, its floating weights cast to bf16 (but
what `cast_predicate` keeps), then `quantize_model` with the model's own
`quant_predicate`; every parameter's `nbytes` summed.

mlx-cpu 0.32.4 (PyPI), mlx-lm d78bf58e (installed from its source archive).

  ~/.mlx-venv/bin/python modes.py CONFIG.json MODE [OVERRIDES_JSON]

prints one JSON line (the per-tensor dtypes and shapes of one layer with it under
"layer0").
"""
import json
import sys

import mlx.core as mx
from mlx.utils import tree_flatten
from mlx_lm.utils import quantize_model

from convert import bf16_model


def main():
    path, mode = sys.argv[1], sys.argv[2]
    over = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    # mlx_lm.convert: cast floating weights to the dtype, but what
    # cast_predicate keeps (A_log), then quantize_model.
    config, model = bf16_model(path, over)
    if mode != "bf16":
        model, qconfig = quantize_model(model, config, None, None, mode=mode)
    mx.eval(model.parameters())
    params = tree_flatten(model.parameters())
    layer0 = {k: [str(v.dtype), list(v.shape)] for k, v in params if ".layers.0." in k}
    print(json.dumps({
        "config": path.rsplit("/", 1)[-1],
        "override": over,
        "mode": mode,
        "weights_bytes": sum(v.nbytes for _, v in params),
        "layer0": layer0,
        "mlx": mx.__version__,
        "mlx_lm": "d78bf58e",
    }))


if __name__ == "__main__":
    main()
