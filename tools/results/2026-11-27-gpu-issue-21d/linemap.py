# Attribute Nsight Compute's per-SASS-instruction counts and stall samples of one kernel to
# source lines and call sites, via an nvdisasm -gi listing of the same kernels compiled here:
#   PYCNO_NVRTC_FLAGS=-lineinfo PYCNO_PTX_OUT=DIR cargo test --release --test kernels
#   ptxas -arch=sm_90 -lineinfo DIR/kernels-sm_90.ptx -o k.cubin; nvdisasm -gi -c k.cubin > all.sass
#   ncu -i REP -k KERNEL --launch-count 1 --page source --csv --print-source sass > K-sass.csv
#   python3 linemap.py KERNEL K-sass.csv [TOP_LINES] [TOP_INSTRUCTIONS] [all.sass]
# (the run's NVRTC source is "default_program", the kernel sources concatenated in
# KERNEL_SOURCES order; the device's JIT and this ptxas gave the same instructions.)
import csv,sys,re,collections
kern, ncucsv = sys.argv[1], sys.argv[2]
names="real.cuh state.cuh model.cuh eigen.cuh flux.cuh wetdry.cuh boundary.cuh reconstruct.cuh source.cuh extremes.cuh solver.cu order2.cu resident.cu peer.cu probe.cu".split()
srcmap=[None]  # line -> (file,line)
for n in names:
    txt=open('/work/main/kernels/'+n).read()
    srcmap.append((n,0))
    for i,l in enumerate(txt.split('\n')):   # text + "\n" appended: split gives len+1 lines
        srcmap.append((n,i+1))
def where(l): return srcmap[l] if l < len(srcmap) else ('?',l)
lines=open(sys.argv[5] if len(sys.argv) > 5 else "all.sass").read().split('\n')
start=lines.index('.text.%s:'%kern)
inner=None; chain=[]; instr={}
for l in lines[start+1:]:
    if l.startswith('//----') : break
    m=re.match(r'\s*//## File ".*", line (\d+)( inlined at ".*", line (\d+))?',l)
    if m:
        if inner is None: inner=int(m.group(1)); chain=[]
        chain.append(int(m.group(1)))
        continue
    m=re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*);',l)
    if m:
        off=int(m.group(1),16)
        instr[off]=((inner,tuple(chain)) if inner is not None else None, m.group(2))
        inner=None
# carry forward the last line for instructions without annotations
last=None
for off in sorted(instr):
    if instr[off][0] is None: instr[off]=(last,instr[off][1])
    else: last=instr[off][0]
rows=list(csv.reader(open(ncucsv)))
ks=[i for i,r in enumerate(rows) if r and r[0]=='Kernel Name']
hdr=rows[1]; data=rows[2:ks[1] if len(ks)>1 else len(rows)]
ix={h:i for i,h in enumerate(hdr)}
num=lambda s: float(s.replace(',','') or 0)
base=int(data[0][0],16)
byline=collections.Counter(); bysamp=collections.Counter(); mism=0
bychain=collections.Counter()
for r in data:
    off=int(r[0],16)-base
    if off not in instr: mism+=1; continue
    loc,txt=instr[off]
    a=r[1].strip().split()[0]; b=txt.split()[0]
    if a!=b and not (a.startswith('@') ): mism+=1
    n=num(r[ix["Instructions Executed"]]); s=num(r[ix["Warp Stall Sampling (All Samples)"]])
    if loc is None: continue
    f=where(loc[0]); byline[f]+=n; bysamp[f]+=s
    outer=tuple(where(c) for c in loc[1][-3:])
    bychain[outer]+=n
print("mismatches",mism,"of",len(data))
tot=sum(byline.values()); ts=sum(bysamp.values())
print("total instr %.4g samples %d"%(tot,ts))
byfile=collections.Counter(); 
for (f,l),v in byline.items(): byfile[f]+=v
print(byfile.most_common())
for (f,l),v in byline.most_common(int(sys.argv[3]) if len(sys.argv)>3 else 50):
    txt=open('/work/main/kernels/'+f).read().split('\n')[l-1].strip() if f!='?' and l>0 else ''
    print("%9.3g %5.1f%% samp %5d  %s:%d  %s"%(v,100*v/tot,bysamp[(f,l)],f,l,txt[:90]))
# Aggregate by the call site inside rc_cell / tile2_kernel (the chain's frames).
print("---- by frame")
agg=collections.Counter(); aggs=collections.Counter()
for r in data:
    off=int(r[0],16)-base
    loc,txt=instr[off]
    if loc is None: continue
    frames=[where(c) for c in loc[1]]  # innermost first
    # pick the frame whose caller is in rc_cell (reconstruct.cuh 165-195) or tile2_kernel (order2.cu 215-232) or edge paths
    key=None
    for i,f in enumerate(frames):
        if f[0]=='reconstruct.cuh' and 165<=f[1]<=196: key=f; break
        if f[0]=='order2.cu' and 210<=f[1]<=235: key=f; break
        if f[0]=='order2.cu' and 130<=f[1]<=175: key=f; break
        if f[0]=='flux.cuh' and 50<=f[1]<=130: key=f; break
    if key is None: key=frames[-1]
    agg[key]+=num(r[ix["Instructions Executed"]]); aggs[key]+=num(r[ix["Warp Stall Sampling (All Samples)"]])
for (f,l),v in agg.most_common(45):
    txt=open('/work/main/kernels/'+f).read().split('\n')[l-1].strip() if f!='?' and l>0 else ''
    print("%9.3g %5.1f%% samp %5d  %s:%d  %s"%(v,100*v/tot,aggs[(f,l)],f,l,txt[:90]))
print("---- top instructions by samples")
S=ix["Warp Stall Sampling (All Samples)"]
st=[h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
top=sorted(data,key=lambda r:-num(r[S]))[:int(sys.argv[4]) if len(sys.argv)>4 else 30]
for r in top:
    off=int(r[0],16)-base; loc,txt=instr[off]
    fr=[where(c) for c in loc[1]] if loc else []
    main=max(st,key=lambda h:num(r[ix[h]]))
    print("%5d %-6s %-44s %s"%(num(r[S]),hex(off),r[1].strip()[:44],main+" "+" < ".join("%s:%d"%f for f in fr[:4])))
