import os
import pickle, json, sys, glob, os
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'trace.py')).read().split('\nif __name__')[0])
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'moments.py')).read()); exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'chk.py')).read())
CFG='/work/main/crates/core/tests/fixtures/hf_configs/'
def cfg(model):
    c=json.load(open(CFG+model+'.json'))
    h=c.get('hidden_size') or c.get('n_embd'); L=c.get('num_hidden_layers') or c.get('n_layer')
    return c,h,L
def masked_extra(c,r,S,T):
    win=c.get('sliding_window'); 
    if c['model_type'] in ('qwen2','qwen2_moe') and not c.get('use_sliding_window'): win=None
    return (S*S) if (win and S>=win and r['attn']=='sdpa' and r['grad_ckpt']) else 0
def layer0(pkl):
    d=pickle.load(open(pkl,'rb'))
    ev=[e for e in d['events'] if e[2]=='bwd2']
    pre = 'transformer.h.0.' if any('transformer.h.' in e[4] for e in ev) else 'model.layers.0.'
    start=next(e[0] for e in ev if e[4].startswith(pre))
    end=d['phase_start']['opt2'][1]
    best=max(((c,s) for s,c in timeline(d) if start<=s<end))
    sq=best[1]; grads=0; trans=[]
    for r in d['recs']:
        nb,a,f,ph,tag,label,func=r
        if a<=sq and (f is None or f>sq):
            if label=='grads': grads+=nb
            elif label is None and ph=='bwd2': trans.append((nb,func))
    return d['row'], best[0], grads, trans
def derive(model, dtype):
    pkl=os.environ.get('TRACES', '/work/scratch-long') + f'/t4_{model}_{dtype}.pkl'
    if not os.path.exists(pkl): return None
    row,m0,grads,trans=layer0(pkl)
    c,h,L=cfg(model); B,S=row['batch'],row['seq']; T=B*S
    mom,t=moments(row)
    res=4 if dtype=='amp_bf16' else 2
    base=mom[('it2','bwd','recompute_first')]-(L-1)*T*h*res-t.get('Outer',0)-t.get('Labels',0)+S*8+8+masked_extra(c,row,S,T)
    G0=grads-t.get('GradsButFirst',0)-(t.get('HeadGrad',0) if False else 0)
    X=m0-base
    delta=(X-G0)/T
    return dict(G0=G0, delta=delta, m0=m0, base=base, trans=sorted(trans,reverse=True)[:12], T=T)
def check(model):
    c,h,L=cfg(model)
    for dtype in ('bf16','amp_bf16'):
        dv=derive(model,dtype)
        if dv is None: print(model,dtype,'no trace'); continue
        print(f"== {model} {dtype}: layer-0 moment extra grads G0={dv['G0']}  delta/token={dv['delta']:.3f}")
        res=4 if dtype=='amp_bf16' else 2
        for r in sel(model, grad_ckpt=True, lora=False, dtype=dtype):
            B,S=r['batch'],r['seq']; T=B*S
            mom,t=moments(r)
            m0=mom[('it2','bwd','recompute_first')]-(L-1)*T*h*res-t.get('Outer',0)-t.get('Labels',0)+S*8+8+masked_extra(c,r,S,T)+dv['G0']+round(T*dv['delta'])
            others=max(mom[('it2','bwd',k)] for k in ('logits','head','layer','end','recompute'))+masked_extra(c,r,S,T)
            pred=max(m0,others); meas=r['measured']['iter2']['peak_bwd']
            old=max(mom[('it2','bwd',k)] for k in ('logits','head','layer','end','recompute','recompute_first'))
            print(f"   b{B} s{S}: meas {meas} pred {pred} ({'m0' if pred==m0 else 'other'}) meas-pred {meas-pred:+d} ({100*(meas-pred)/meas:+.4f}%)  today {100*(old-meas)/meas:+.2f}%")
for m in sys.argv[1:]: check(m)
