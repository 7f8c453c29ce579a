"""What both sides of the pHost / YAPS cross-check share: YAPS's oracle FCT (the slowdown
denominator, used for both simulators), the size buckets and the statistics."""

import math

HOSTS_PER_TOR = 16
PROP_US = 0.2
BW_BITS_PER_US = 10e9 / 1e6
MSS = 1460
HDR = 40

# Flow sizes in packets: one packet; the rest of YAPS's short flows (sent whole on free
# tokens, <= capability_initial = 8); then by decade.
BUCKETS = [("1", 1, 1), ("2-8", 2, 8), ("9-100", 9, 100), ("101-1000", 101, 1000), (">1000", 1001, 10**9)]


def oracle_us(size, src, dst):
    """YAPS PFabricTopology::get_oracle_fct, store-and-forward branch
    (coresim/topology.cpp:118-180), in microseconds."""
    hops = 2 if src // HOSTS_PER_TOR == dst // HOSTS_PER_TOR else 4
    prop = 2 * hops * PROP_US
    pkts = size / MSS
    np = math.floor(pkts)
    leftover = int((pkts - np) * MSS)
    incl = (MSS + HDR) * np + (leftover + HDR)
    td = (incl + 2.0 * HDR) * 8.0 / BW_BITS_PER_US
    if hops == 4:
        one = leftover + 2 * HDR if np == 0 else MSS + 2 * HDR
        td += 2 * one * 8.0 / (4 * BW_BITS_PER_US)
    return prop + td


def bucket_of(pkts):
    for name, lo, hi in BUCKETS:
        if lo <= pkts <= hi:
            return name
    raise ValueError(pkts)


def percentile(xs, q):
    """Nearest rank on the sorted values (both sides alike)."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = max(0, math.ceil(q / 100 * len(xs)) - 1)
    return xs[k]


def stats(rows):
    """rows: (pkts, slowdown). Returns {bucket: (n, p50, p99, mean)} with "all"."""
    out = {}
    groups = {"all": [s for _, s in rows]}
    for name, lo, hi in BUCKETS:
        groups[name] = [s for p, s in rows if lo <= p <= hi]
    for name, xs in groups.items():
        out[name] = (len(xs), percentile(xs, 50), percentile(xs, 99), sum(xs) / len(xs) if xs else float("nan"))
    return out
