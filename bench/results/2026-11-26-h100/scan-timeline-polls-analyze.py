# Per-warp analysis of the scan timeline (scan-timeline-warps-experiment.patch): each tile's
# t0..t5 (thread 0) and w0..w3 (each warp's fold end). A tile publishes its aggregate right
# after the block barrier that follows every warp's fold, so max(w0..w3) stands for the
# publication (within a scan of 4 warp totals).
import csv, sys, statistics as st
def pct(xs, p): xs = sorted(xs); return xs[int(p * (len(xs) - 1))]
def line(name, d): return f"  {name:58s} mean {st.mean(d)/1000:6.2f} us  p50 {pct(d,.5)/1000:6.2f}  p90 {pct(d,.9)/1000:6.2f}"
for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path)))
    n = len(rows)
    g = lambda k: [int(r[k]) for r in rows]
    t = {k: g(k) for k in ['t0', 't1', 't2', 't3', 't4', 't5', 'w0', 'w1', 'w2', 'w3']}
    agg = [max(t['w0'][i], t['w1'][i], t['w2'][i], t['w3'][i]) for i in range(n)]
    first = [min(t['w0'][i], t['w1'][i], t['w2'][i], t['w3'][i]) for i in range(n)]
    print(f"== {path}: {n} tiles, span {(max(t['t5']) - min(t['t0']))/1000:.1f} us")
    print(line("life (t5 - t0)", [t['t5'][i] - t['t0'][i] for i in range(n)]))
    print(line("spread of the 4 warps' fold ends (last - first)", [agg[i] - first[i] for i in range(n)]))
    print(line("warp 0's fold end to the block's last (t3 -> agg)", [agg[i] - t['t3'][i] for i in range(n)]))
    run = 0; wait = []; after = []
    for i in range(n):
        wait.append(max(0, run - agg[i]))
        after.append(t['t4'][i] - max(agg[i], run))
        run = max(run, agg[i])
    print(line("waiting for the last predecessor's publication (block)", wait))
    print(line("prefix after it (t4 - max(own, predecessors' publication))", after))
    print(line("prefix after own publication (t4 - own agg)", [t['t4'][i] - agg[i] for i in range(n)]))
    if 'own_done' in rows[0]:
        # The polls build: warp 0's stamps inside the look-back.
        od, bd = g('own_done'), g('base_done')
        rounds, polls = g('base_rounds'), g('own_polls')
        run = 0; seen = []
        for i in range(n):
            seen.append(od[i] - max(agg[i], run))
            run = max(run, agg[i])
        print(line("own window's aggregates in, after the last publication", seen))
        print(line("own publication to own window's aggregates in (own_done - agg)", [od[i] - agg[i] for i in range(n)]))
        print(line("find the base (base_done - own_done)", [bd[i] - od[i] for i in range(n)]))
        print(line("the rest of the prefix (t4 - base_done)", [t['t4'][i] - bd[i] for i in range(n)]))
        later = [r for i, r in enumerate(rounds) if i >= 32]
        print(f"  rounds of find_base (tiles past window 0): " + ", ".join(f"{k}: {later.count(k)}" for k in sorted(set(later))))
        ps = [p for i, p in enumerate(polls) if i % 32 != 0]
        print(f"  polls of the last predecessor's aggregate (tiles not first in a window): mean {st.mean(ps):.2f} p50 {pct(ps,.5)} p90 {pct(ps,.9)} max {max(ps)}")
        # Time per poll: own_done - (look-back start ~ agg) over the polls made.
        per = [(od[i] - agg[i]) / polls[i] for i in range(n) if polls[i] > 0]
        print(line("time per poll of the own window ((own_done - agg) / polls)", per))
