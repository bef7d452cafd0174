import os
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'mech4.py')).read().split('import sys')[0])
def check_moe(model, delta_tok, down_elems):
    a=arch(model); h,L=a['h'],a['L']
    for r in sel(model, grad_ckpt=True, lora=False):
        B,S=r['batch'],r['seq']; T=B*S
        mom,t=moments(r)
        amp=r['dtype']=='amp_bf16'; res=4 if amp else 2; gb=4 if amp else 2
        fix=-t.get('Outer',0)-t.get('Labels',0)+S*8+8+down_elems*gb+T*delta_tok(amp)
        m0=mom[('it2','bwd','recompute_first')]-(L-1)*T*h*res+fix
        others=max(mom[('it2','bwd',k)] for k in ('logits','head','layer','end','recompute'))
        pred=max(m0,others); meas=r['measured']['iter2']['peak_bwd']
        print(f"{model} {r['dtype']:8} b{B} s{S}: meas {meas} m0 {m0} others {others} diff(meas-pred) {meas-pred:+d} ({100*(meas-pred)/meas:+.4f}%) est_old {max(others,mom[('it2','bwd','recompute_first')])}")
h,f,k,E=4096,14336,2,8
check_moe('mixtral-8x7b', lambda amp: 4*k*f-2*k*h-8*k, E*h*f)
print('--- amp-specific delta')
def dl(amp): return (8*k*f-4*k*h-2*h-8*k) if amp else (4*k*f-2*k*h-8*k)
check_moe('mixtral-8x7b', dl, E*h*f)
