"""What mlx_lm.convert does before quantizing, shared by hybrid.py and modes.py: the
model class mlx-lm picks for a config (with overrides merged in), its floating weights
cast to bf16 but what the model's `cast_predicate` keeps (Qwen3.5's A_log)."""
import json

import mlx.core as mx
from mlx.utils import tree_flatten
from mlx_lm.utils import _get_classes


def merge(base, over):
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            merge(base[k], v)
        else:
            base[k] = v
    return base


def bf16_model(path, over):
    """(config, model) for the config at `path` with `over` merged in."""
    config = merge(json.load(open(path)), over)
    model_class, args_class = _get_classes(config)
    model = model_class(args_class.from_dict(config))
    cast = getattr(model, "cast_predicate", lambda _: True)
    weights = dict(tree_flatten(model.parameters()))
    weights = {
        k: v.astype(mx.bfloat16) if cast(k) and mx.issubdtype(v.dtype, mx.floating) else v
        for k, v in weights.items()
    }
    model.load_weights(list(weights.items()))
    return config, model
