import os
import json,sys
rows=[json.loads(l) for l in open('/work/main/crates/core/tests/fixtures/long_rows.jsonl')]
def sel(model, **kw):
    out=[]
    for r in rows:
        if r.get('status')!='ok' or r['model']!=model: continue
        if all(r.get(k)==v for k,v in kw.items()): out.append(r)
    return out
