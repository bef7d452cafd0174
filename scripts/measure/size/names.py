# The code bytes of the functions whose names match a pattern, from a wasm with its name
# section (page.sh's pre-opt.wasm): python3 names.py /tmp/size/pre-opt.wasm REGEX
import sys, re
data=open(sys.argv[1],'rb').read()
def uleb(b,i):
    r=s=0
    while True:
        x=b[i]; i+=1; r|=(x&0x7f)<<s; s+=7
        if x<0x80: return r,i
i=8; imports=0; code_sizes=[]; names={}
while i<len(data):
    sid=data[i]; i+=1; size,i=uleb(data,i); end=i+size
    if sid==2:
        n,j=uleb(data,i)
        for _ in range(n):
            l,j=uleb(data,j); j+=l; l,j=uleb(data,j); j+=l; kind=data[j]; j+=1
            if kind==0: imports+=1; _,j=uleb(data,j)
            elif kind==1: j+=1; fl,j=uleb(data,j); _,j=uleb(data,j); 
            elif kind==2: fl,j=uleb(data,j); _,j=uleb(data,j); 
            elif kind==3: j+=2
    elif sid==10:
        n,j=uleb(data,i)
        for _ in range(n):
            sz,j=uleb(data,j); code_sizes.append(sz); j+=sz
    elif sid==0:
        l,j=uleb(data,i); nm=data[j:j+l]; j+=l
        if nm==b'name':
            while j<end:
                sub=data[j]; j+=1; ssz,j=uleb(data,j); se=j+ssz
                if sub==1:
                    n,k=uleb(data,j)
                    for _ in range(n):
                        idx,k=uleb(data,k); l,k=uleb(data,k); names[idx]=data[k:k+l].decode('utf8','replace'); k+=l
                j=se
    i=end
pat=re.compile(sys.argv[2])
tot=0
rows=[]
for k,sz in enumerate(code_sizes):
    nm=names.get(k+imports,'?')
    if pat.search(nm): rows.append((sz,nm)); tot+=sz
for sz,nm in sorted(rows,reverse=True)[:25]: print(sz,nm[:150])
print('total',tot,len(rows))
