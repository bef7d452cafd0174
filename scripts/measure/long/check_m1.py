import os
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'moments.py')).read()); exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'chk.py')).read())
import json
CFG='/work/main/crates/core/tests/fixtures/hf_configs/'
def info(model):
    c=json.load(open(CFG+model+'.json'))
    h=c['hidden_size']; H=c['num_attention_heads']; kv=c.get('num_key_value_heads',H); hd=c.get('head_dim') or h//H
    L=c['num_hidden_layers']; win=c.get('sliding_window')
    nsl = L - L//c['sliding_window_pattern'] if c.get('sliding_window_pattern') else L
    return H,kv,hd,L,win,nsl
for model in ('mistral-7b','phi3-mini','gemma3-1b'):
    H,kv,hd,L,win,nsl=info(model)
    for r in sel(model, grad_ckpt=False):
        B,S=r['batch'],r['seq']; T=B*S
        mom,t=moments(r)
        est=max(v for k,v in mom.items() if k[0]=='it2' and k[1]=='bwd'); meas=r['measured']['iter2']['peak_bwd']
        kvrep = nsl*T*2*2*(H-kv)*hd
        print(f"{model} nockpt {r['dtype']:8} {str(r.get('lora_targets')):32} b{B} s{S}: meas-est {meas-est:>14} KVrep {kvrep:>13} resid {meas-est-kvrep:>12} ({(meas-est-kvrep)/T:+.2f}/tok)")
