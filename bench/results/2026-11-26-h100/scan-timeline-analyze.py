import csv, sys, statistics as st
for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path)))
    T = {k: [int(r[k]) for r in rows] for k in ['t0','t1','t2','t3','t4','t5']}
    n = len(rows)
    base = min(T['t0'])
    end = max(T['t5'])
    def pct(xs, p): xs = sorted(xs); return xs[int(p*(len(xs)-1))]
    print(f"== {path}: {n} tiles, launch span {(end-base)/1000:.1f} us")
    names = [('ticket','t0','t1'),('load','t1','t2'),('fold','t2','t3'),('prefix','t3','t4'),('rescan+store','t4','t5'),('life','t0','t5')]
    for name,a,b in names:
        d = [T[b][i]-T[a][i] for i in range(n)]
        print(f"  {name:13s} mean {st.mean(d)/1000:7.2f} us  p10 {pct(d,.1)/1000:7.2f}  p50 {pct(d,.5)/1000:7.2f}  p90 {pct(d,.9)/1000:7.2f}  p99 {pct(d,.99)/1000:7.2f}")
    # inherent wait: the last predecessor's aggregate (t3 of earlier tiles, running max)
    run = 0; excess = []; inherent = []
    for i in range(n):
        own = T['t3'][i]
        late = max(0, run - own)
        inherent.append(late)
        excess.append(T['t4'][i] - max(own, run))
        run = max(run, T['t3'][i])
    print(f"  waiting for predecessors' aggregates (max t3 of earlier tiles - own t3): mean {st.mean(inherent)/1000:.2f} us p50 {pct(inherent,.5)/1000:.2f} p90 {pct(inherent,.9)/1000:.2f}")
    print(f"  prefix after the last predecessor aggregate (t4 - max(own t3, earlier t3)): mean {st.mean(excess)/1000:.2f} us p50 {pct(excess,.5)/1000:.2f} p90 {pct(excess,.9)/1000:.2f}")
    # gap between a tile's ticket and its predecessor's (ticket order = tile)
    # resident blocks per SM at the middle of the launch
    mid = base + (end-base)//2
    res = {}
    for i in range(n):
        if T['t0'][i] <= mid <= T['t5'][i]:
            res[rows[i]['smid']] = res.get(rows[i]['smid'],0)+1
    if res: print(f"  blocks resident at mid-launch: {sum(res.values())} on {len(res)} SMs, per SM mean {st.mean(res.values()):.2f} max {max(res.values())}")
    # tiles in flight between a tile and its oldest unfinished predecessor
    lag = [T['t1'][i] - T['t1'][max(0,i-1)] for i in range(1,n)]
    print(f"  ticket spacing mean {st.mean(lag):.1f} ns")
