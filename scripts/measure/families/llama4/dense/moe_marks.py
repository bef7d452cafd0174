"""Markers around transformers 5.23's Llama4TextMoe.forward, for the allocation listings.

`install(get_tracker)` wraps `Llama4TextMoe.forward` so that the meter's sequence number (every
storage allocation and free advances it) is recorded

  * at the call's entry and return (`fwd_in`, `fwd_out`), and
  * in backward, when the gradient of the block's output arrives (`bwd_start`) and when the
    gradient of its input has been summed over every path inside the block (`bwd_end`),

through two identity autograd Functions whose forward returns a *view* of its input and whose
backward returns the gradient unchanged: neither allocates a storage, so the rows are the same
as without the markers (checked: the probe rows equal the plain harness rows, NOTES.md).
Forward calls are numbered in call order (`call` 0 = layer 0 of the first forward, ...); with
gradient checkpointing the recomputation would add calls (the probes are only run with gc 0).
"""
import torch

MARKS = []
_STATE = dict(get=None, n=0)


def _mark(kind, call, layer):
    tr = _STATE["get"]()
    if tr is None:
        return
    MARKS.append(dict(kind=kind, call=call, layer=layer, seq=tr.seq, cur=tr.cur, phase=tr.phase))


class _Mark(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, kind, call, layer):
        ctx.info = (kind, call, layer)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        _mark(*ctx.info)
        return g, None, None, None


def install(get_tracker):
    from transformers.models.llama4 import modeling_llama4 as ML
    if getattr(ML.Llama4TextMoe, "_dense_probe", False):
        _STATE["get"] = get_tracker
        return
    orig = ML.Llama4TextMoe.forward
    _STATE["get"] = get_tracker
    layer_of = {}

    def forward(self, hidden_states):
        call = _STATE["n"]
        _STATE["n"] += 1
        layer = layer_of.setdefault(id(self), len(layer_of))
        grad = torch.is_grad_enabled() and hidden_states.requires_grad
        if grad:
            hidden_states = _Mark.apply(hidden_states, "bwd_end", call, layer)
        _mark("fwd_in", call, layer)
        out, logits = orig(self, hidden_states)
        _mark("fwd_out", call, layer)
        if grad:
            out = _Mark.apply(out, "bwd_start", call, layer)
        return out, logits

    ML.Llama4TextMoe.forward = forward
    ML.Llama4TextMoe._dense_probe = True


def reset():
    MARKS.clear()
    _STATE["n"] = 0
