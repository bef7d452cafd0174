import os
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'moments.py')).read()); exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'chk.py')).read())
import json
CFG='/work/main/crates/core/tests/fixtures/hf_configs/'
def arch(model):
    c=json.load(open(CFG+model+'.json'))
    h=c['hidden_size']; heads=c['num_attention_heads']; kv=c.get('num_key_value_heads',heads)
    hd=c.get('head_dim') or h//heads
    return dict(h=h,f=c['intermediate_size'],L=c['num_hidden_layers'],heads=heads,kv=kv,hd=hd,win=c.get('sliding_window'),V=c['vocab_size'])
def check(model):
    a=arch(model); h,f,L,heads,kv,hd=a['h'],a['f'],a['L'],a['heads'],a['kv'],a['hd']
    for r in sel(model, grad_ckpt=True, lora=False):
        B,S=r['batch'],r['seq']; T=B*S
        mom,t=moments(r)
        amp=r['dtype']=='amp_bf16'; res=4 if amp else 2; gb=4 if amp else 2
        masked = a['win'] is not None and S>=a['win'] and r['attn']=='sdpa'
        fix = -t.get('Outer',0)-t.get('Labels',0)+S*8+8 + h*f*gb - (h*f*2 if amp else 0) + T*(4*f-(2*h if amp else 0))
        if masked: fix += S*S + T*4*(heads-kv)*hd
        m0 = mom[('it2','bwd','recompute_first')] - (L-1)*T*h*res + fix
        mlast = mom[('it2','bwd','recompute')] + fix + h*gb   # final norm weight grad
        others = max(mom[('it2','bwd',k)] for k in ('logits','head','layer','end')) + (S*S if masked else 0)
        pred=max(m0,mlast,others)
        meas=r['measured']['iter2']['peak_bwd']
        print(f"{model:18} {r['dtype']:8} b{B} s{S}: meas {meas} pred {pred} diff {meas-pred:+d} ({100*(meas-pred)/meas:+.3f}%)  est_old {max(mom[('it2','bwd',k)] for k in ('logits','head','layer','end','recompute','recompute_first'))} which={'m0' if pred==m0 else 'mlast' if pred==mlast else 'other'}")
import sys
for m in sys.argv[1:]: check(m)
