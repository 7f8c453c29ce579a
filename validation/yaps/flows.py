"""The flow lists both simulators run (issue 19, pHost cross-check): one per seed.

Poisson arrivals at every host of YAPS's default network (144 hosts), each flow to a
uniformly chosen other host, sizes in whole 1460 B packets drawn from a packet CDF the
way YAPS's packet mode does (`coresim/random_variable.cpp:63-72`: u = uniform, linear
interpolation between CDF points, rounded, at least one packet), at `load` of the 10 Gbps
host link counting 1500 B per packet (payload + YAPS's 40 B header, as its generators do,
`run/flow_generator.cpp:104-145`). YAPS seeds `srand(0)` once (`coresim/main.cpp:123`), so
the seed varies the flow list, not YAPS: each seed is its own trace.

Writes, per seed, `<out>/yaps-<seed>.trace` (YAPS `FlowReader`'s 9 columns,
`run/flow_generator.cpp:147-174`: id start_s x x size_pkts x x src dst) and
`<out>/pl2-<seed>.csv` (pl2's message list: time,src,dst,size,thread,priority).

    python3 validation/yaps/flows.py --out /tmp/yaps-flows --seeds 1-10
"""

import argparse
import os
import random

HOSTS = 144
RATE_BPS = 10e9
MSS = 1460
PKT_WIRE = 1500

# YAPS py/CDF_aditya.txt (packets, ignored column, cumulative probability): the IMC'10
# data-centre workload of the pHost paper (§4, "IMC10"), Benson et al.
ADITYA = [(1, 0.0), (1, 0.5), (2, 0.6), (3, 0.7), (5, 0.75), (7, 0.8), (40, 0.8125), (72, 0.825),
          (137, 0.85), (267, 0.9), (1187, 0.95), (2107, 1.0)]


def sample(cdf, u):
    """YAPS EmpiricalRandomVariable::value with smoothing: linear interpolation."""
    for i in range(1, len(cdf)):
        if u <= cdf[i][1]:
            (x0, p0), (x1, p1) = cdf[i - 1], cdf[i]
            if p1 == p0:
                return x1
            return x0 + (x1 - x0) * (u - p0) / (p1 - p0)
    return cdf[-1][0]


def mean_packets(cdf, n=200000):
    return sum(max(1, round(sample(cdf, (i + 0.5) / n))) for i in range(n)) / n


def flows(seed, load, duration_s, cdf=ADITYA):
    rng = random.Random(seed)
    lam = RATE_BPS * load / (mean_packets(cdf) * PKT_WIRE * 8)
    out = []
    for src in range(HOSTS):
        t = rng.expovariate(lam)
        while t < duration_s:
            dst = rng.randrange(HOSTS - 1)
            dst += dst >= src
            pkts = max(1, round(sample(cdf, rng.random())))
            out.append((t, src, dst, pkts))
            t += rng.expovariate(lam)
    out.sort()
    return out


def write(seed, load, duration_s, out_dir):
    fl = flows(seed, load, duration_s)
    with open(os.path.join(out_dir, f"yaps-{seed}.trace"), "w") as f:
        for i, (t, s, d, p) in enumerate(fl):
            f.write(f"{i} {t:.12f} 0 0 {p} 0 0 {s} {d}\n")
    with open(os.path.join(out_dir, f"pl2-{seed}.csv"), "w") as f:
        f.write(f"# pHost cross-check, seed {seed}: {len(fl)} flows, load {load}, {duration_s * 1e3} ms\n")
        f.write("time,src,dst,size,thread,priority\n")
        for t, s, d, p in fl:
            f.write(f"{round(t * 1e12)},{s},{d},{p * MSS},0,0\n")
    return len(fl)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", default="1-10")
    ap.add_argument("--load", type=float, default=0.6)
    ap.add_argument("--duration-ms", type=float, default=10.0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    lo, _, hi = a.seeds.partition("-")
    for seed in range(int(lo), int(hi or lo) + 1):
        n = write(seed, a.load, a.duration_ms / 1e3, a.out)
        print(f"seed {seed}: {n} flows")


if __name__ == "__main__":
    main()
