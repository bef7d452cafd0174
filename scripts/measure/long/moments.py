import os
import json, subprocess, os, functools
BIN='/work/wt-long/target/release/deps/long_terms-6e12ab55664ef2b9'
def query(r):
    b=lambda k: bool(r.get(k))
    q=(f"model={r['model']}&dtype={r['dtype']}&optim={r['optim']}&batch={r['batch']}&seq={r['seq']}"
       f"&grad_ckpt={'true' if b('grad_ckpt') else 'false'}&attn={r['attn']}&keep_outputs={'true' if b('keep_outputs') else 'false'}"
       f"&cuda_like={'true' if (b('cuda_like') and not r['family'].startswith('deepseek')) else 'false'}")
    if b('lora'):
        q+=f"&lora_r={r['lora_r']}"
        if r.get('lora_targets'): q+=f"&lora_targets={r['lora_targets']}"
    return q
@functools.lru_cache(maxsize=None)
def run(q):
    out=subprocess.run([BIN,'--nocapture'],env=dict(os.environ,Q=q,LONG_DEBUG='1'),capture_output=True,text=True)
    txt=out.stdout+out.stderr
    mom={}; terms={}
    for line in txt.splitlines():
        p=line.split()
        if line.startswith('MOMENT'):
            mom[(p[1],p[2],p[3])]=int(p[4])
        elif line.startswith('  ') and not line.startswith('    ') and ' = ' in line:
            terms[p[0]]=int(line.rsplit('=',1)[1])
    return mom,terms
def moments(r): return run(query(r))
