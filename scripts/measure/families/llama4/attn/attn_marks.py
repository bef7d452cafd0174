"""Markers around the decoder layer, the attention and the feed-forward block (transformers 5.23
Llama 4 text and Llama), for the allocation listings of attn_probe.py.

Adapted from ../dense/moe_marks.py: each wrapped forward records the meter's sequence number at
its entry and return (`fwd_in`, `fwd_out`) and, in backward, when its output's gradient arrives
(`bwd_start`) and when its input's gradient is complete (`bwd_end`), through identity autograd
Functions that return views (no storage).  Records: dict(kind, part, call, layer, seq, cur, phase).
"""
import torch

MARKS = []
_STATE = dict(get=None, n={})


def _mark(kind, part, call, layer):
    tr = _STATE["get"]()
    if tr is None:
        return
    MARKS.append(dict(kind=kind, part=part, call=call, layer=layer, seq=tr.seq, cur=tr.cur, phase=tr.phase))


class _Mark(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kind, part, call, layer):
        ctx.info = (kind, part, call, layer)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        _mark(*ctx.info)
        return g, None, None, None, None


def _wrap(cls, part):
    if getattr(cls, "_attn_probe", False):
        return
    orig = cls.forward
    layer_of = {}

    def forward(self, *args, **kwargs):
        n = _STATE["n"].get(part, 0)
        _STATE["n"][part] = n + 1
        layer = layer_of.setdefault(id(self), len(layer_of))
        if "hidden_states" in kwargs:
            x = kwargs["hidden_states"]
            key = "kw"
        else:
            x = args[0]
            key = "arg"
        grad = torch.is_grad_enabled() and x.requires_grad
        if grad:
            x = _Mark.apply(x, "bwd_end", part, n, layer)
            if key == "kw":
                kwargs["hidden_states"] = x
            else:
                args = (x,) + tuple(args[1:])
        _mark("fwd_in", part, n, layer)
        out = orig(self, *args, **kwargs)
        _mark("fwd_out", part, n, layer)
        if grad:
            if isinstance(out, tuple):
                out = (_Mark.apply(out[0], "bwd_start", part, n, layer),) + tuple(out[1:])
            else:
                out = _Mark.apply(out, "bwd_start", part, n, layer)
        return out

    cls.forward = forward
    cls._attn_probe = True


def install(get_tracker):
    _STATE["get"] = get_tracker
    from transformers.models.llama4 import modeling_llama4 as L4
    from transformers.models.llama import modeling_llama as L
    _wrap(L4.Llama4TextDecoderLayer, "layer")
    _wrap(L4.Llama4TextAttention, "attn")
    _wrap(L4.Llama4TextMoe, "ff")
    # (not Llama4TextMLP: the shared expert's output is modified in place by Llama4TextMoe: out.add_)
    _wrap(L.LlamaDecoderLayer, "layer")
    _wrap(L.LlamaAttention, "attn")
    _wrap(L.LlamaMLP, "ff")


def reset():
    MARKS.clear()
    _STATE["n"] = {}
