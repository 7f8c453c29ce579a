"""Why Polo's W5 tail in the leaf–spine pod (`pod.py`) is above Homa's: the diagnostics'
names, the measures each text reads from the runs' tables (receivers' intake, spine links,
each flow's D, resends, a fluid model's sharing) and the texts themselves. Every function
here takes rows or tables and returns numbers or a sentence, so each is tested on
hand-worked rows (`tests/test_reproduce_compare.py`); `pod.py` runs the jobs and places
the texts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pl2.reproduce.common import Context
from pl2.reproduce.compare import common as C
from pl2.reproduce.compare import fluid

#: Diagnostics of Polo's W5 tail: each changes one Polo setting; the combinations after
#: them (`COMBOS`) change several.
TAIL_SINGLE = ["Polo first burst 36", "Polo no pause", "Polo D bounded", "Polo sprayed", "Polo ECN 65",
               "Polo D per receiver", "Polo short first"]
#: Diagnostics that combine settings, and how the text names them.
COMBOS = {"Polo all four": "the first four together",
          "Polo three that help": "a first burst of 36, no pause and short first together",
          "Polo three + ECN 65": "those three with ECN marking at 65 full frames",
          "Polo three + ECN 65 sprayed": "those three with ECN marking at 65 full frames and packets sprayed",
          "Polo three + ECN 65 sprayed no gap": "those three with ECN marking at 65 full frames, packets sprayed and no "
                                                "recovery 1"}
#: The three settings that help, and the diagnostic that adds what the long flows of its
#: tail lack: a marking threshold above a round trip's packets, no ECMP collisions, and
#: (sprayed) no gap taken for a loss.
THREE, THREE_FIXED = "Polo three that help", "Polo three + ECN 65 sprayed no gap"
THREE_PLUS = ["Polo three + ECN 65", "Polo three + ECN 65 sprayed", THREE_FIXED]
#: The diagnostics whose spine-to-leaf links are read while each message is open: the
#: same settings hashed per flow and sprayed.
SPINE_DIAG = ["Polo three + ECN 65", THREE_FIXED]
#: The diagnostics that spray Polo's packets (its recovery 1 takes reordering for loss).
SPRAYED = ["Polo sprayed", "Polo all four", "Polo three + ECN 65 sprayed", THREE_FIXED]
TAIL_DIAG = TAIL_SINGLE + list(COMBOS)
#: Diagnostic of Polo's incast goodput: the same incast without Polo's pause.
POLO_NP = "Polo no pause"
#: Diagnostic of Polo's long flows: a few of them alone, sharing one receiver's link.
SHARED_DESIGNS = ["Polo", "Polo ECN 65", "Polo three that help", "Polo three + ECN 65", "Homa"]


#: How the tail text names each diagnostic of Polo's W5 tail.
DIAG_TXT = {"Polo first burst 36": "a first burst of 36 packets", "Polo no pause": "no pause",
            "Polo D bounded": "D bounded (`d_bound = \"validated\"`)",
            "Polo sprayed": "packets sprayed over the uplinks (`ecmp = \"per_packet\"`, as Homa's)",
            "Polo ECN 65": "ECN marking at 65 full frames (100,230 B, DCTCP's K at 100 Gbps) instead of 5",
            "Polo D per receiver": "one D per receiver shared by its flows (`d_scope = \"receiver\"`) instead of one per flow",
            "Polo short first": "messages of at most 100 KB sent at a higher priority (`short_first`)"}


def tail_verdict(t: dict[str, dict[str, float | None]]) -> str:
    """What the diagnostics of Polo's tail show, from their p99 slowdowns: the share of
    Polo's gap to Homa each closes alone, and what the four together leave."""
    share = gap_shares(t)
    if share is None:
        return "Polo's p99 slowdown is not above Homa's in this run."
    alone = ", ".join(f"{diag_name(d)} {share[d]:.0%}" for d in TAIL_SINGLE)
    combos = ", ".join(f"{name} {share[d]:.0%}" for d, name in COMBOS.items())
    best = max(TAIL_DIAG, key=lambda d: share[d])
    name = diag_name(best)
    left = 1 - share[best]
    return (f"Share of Polo's p99-slowdown gap to Homa each closes alone: {alone}; {combos}. The most, "
            f"{share[best]:.0%}, with {name}" + (
                f", leaving {left:.0%} that no setting changed here removes." if left > 0.1
                else ": that setting is Polo's gap to Homa here."))


def diag_name(d: str) -> str:
    """A Polo tail diagnostic's name in running text (its `DIAG_TXT` without the
    parenthesis)."""
    return COMBOS[d] if d in COMBOS else DIAG_TXT[d].split(" (")[0]


def gap_shares(t: dict[str, dict[str, Any]]) -> dict[str, float] | None:
    """Per Polo diagnostic, the share of Polo's p99-slowdown gap to Homa it closes; None
    when Polo's p99 is not finitely above Homa's."""
    def s(d: str) -> float:
        v = t[d]["s99"]
        return math.inf if v is None else v

    gap = s("Polo") - s("Homa")
    if not math.isfinite(gap) or gap <= 0:
        return None
    return {d: (s("Polo") - s(d)) / gap for d in TAIL_DIAG}


def tail_seeds(by_seed: dict[int, dict[str, Any]]) -> str:
    """The diagnostics' shares on every seed: each one's range, and on how many seeds
    it closes the most."""
    sh = {seed: gap_shares(t) for seed, t in by_seed.items()}
    ok = {seed: v for seed, v in sh.items() if v is not None}
    if len(by_seed) < 2:
        return ""
    if not ok:
        return f" On none of seeds {seeds(by_seed)} is Polo's p99 slowdown finitely above Homa's."
    best = {d: sum(1 for v in ok.values() if max(v, key=v.get) == d) for d in TAIL_DIAG}
    rng = ", ".join(f"{diag_name(d)} {min(v[d] for v in ok.values()):.0%} to {max(v[d] for v in ok.values()):.0%}"
                    for d in TAIL_DIAG)
    gaps = ", ".join(f"{C.slowdown(by_seed[seed]['Polo']['s99'])} / {C.slowdown(by_seed[seed]['Homa']['s99'])}"
                     for seed in by_seed)
    top = max(TAIL_DIAG, key=lambda d: best[d])
    every = [diag_name(d) for d in TAIL_DIAG if all(v[d] > 0 for v in ok.values())]
    pooled = gap_shares({d: {"s99": pooled_p99(by_seed, d)} for d in ["Polo", "Homa", *TAIL_DIAG]})
    pool = ("" if pooled is None else
            f" Pooled over the seeds (p99 of every measured message): Polo {C.slowdown(pooled_p99(by_seed, 'Polo'))}, "
            f"Homa {C.slowdown(pooled_p99(by_seed, 'Homa'))}; shares " + ", ".join(f"{diag_name(d)} {pooled[d]:.0%}" for d in TAIL_DIAG) + ".")
    return (f" On seeds {seeds(by_seed)} (Polo / Homa p99 slowdown {gaps}; shares on the {len(ok)} seeds where Polo's "
            f"is finitely above): {rng}; {diag_name(top)} closes the most on {best[top]} of {len(ok)}; "
            + (f"only {' and '.join(every)} {'closes' if len(every) == 1 else 'close'} part of the gap on every one of them" if every else
               "no setting closes part of the gap on every one of them")
            + " (a p99 of about 230 messages is their third slowest, so one seed's shares are not the design's)." + pool)


def pooled_p99(by_seed: dict[int, dict[str, Any]], d: str) -> float | None:
    """p99 slowdown of design `d` over the measured messages of every seed."""
    return C.pct(sorted(x for t in by_seed.values() for x in t[d]["sl"]), sum(t[d]["n"] for t in by_seed.values()), 0.99)


def seeds(by_seed: dict[int, Any]) -> str:
    k = sorted(by_seed)
    return f"{k[0]}–{k[-1]}" if k == list(range(k[0], k[-1] + 1)) else ", ".join(map(str, k))


@dataclass(frozen=True)
class Alone:
    """Polo's and Homa's measured W5 messages each run alone (`_alone_tails`): per
    design, the n, p50 and p99 slowdown of the first seed's messages (`first`) and of
    every seed's (`pooled`), and the design's p99 at load pooled over the seeds (`load99`,
    `pooled_p99`)."""
    first: dict[str, dict[str, Any]]
    pooled: dict[str, dict[str, Any]]
    load99: dict[str, float | None]


def pace(alone: tuple[float | None, float | None], load: tuple[float | None, float | None]) -> tuple[float, float | None]:
    """Polo's p99 slowdown above Homa's with every message alone, and its share of the
    gap at load (None when the gap is not finite and positive)."""
    there = (alone[0] or math.inf) - (alone[1] or math.inf)
    gap = (load[0] or math.inf) - (load[1] or math.inf)
    return there, (there / gap if math.isfinite(gap) and gap > 0 and math.isfinite(there) else None)


def alone(t: dict[str, dict[str, Any]], alone: Alone | None, x: float) -> str:
    """Polo's and Homa's slowdowns with each measured message alone, and the share of
    the gap at load `x` (`t`, the first seed's runs) that Polo's own pace makes: the
    first seed's, then pooled over the seeds when they were run."""
    if alone is None:
        return ""
    a, h = alone.first.get("Polo"), alone.first.get("Homa")
    if not (a and h) or a["s99"] is None or h["s99"] is None:
        return ""
    f = C.slowdown
    there, share = pace((a["s99"], h["s99"]), (t["Polo"]["s99"], t["Homa"]["s99"]))
    verdict = ("" if share is None else
               f" With nothing to contend with Polo's p99 slowdown is {f(there)} above Homa's, {share:.0%} of its gap at "
               f"{x:.0%}: " + (f"that much is Polo's own pace (its first burst of 12 packets, then D driving packets "
                               f"per epoch from D = 12, one more per epoch), the other {1 - share:.0%} is contention."
                               if share >= 0.1 else "the gap is made by contention, not by Polo's own pace."))
    out = (f" Each of the run's measured messages again alone in the pod (same source, destination and size, nothing "
           f"else sent; {a['n']} and {h['n']} runs): p50 / p99 slowdown Polo {f(a['s50'])} / {f(a['s99'])}, Homa "
           f"{f(h['s50'])} / {f(h['s99'])}.{verdict}")
    ap, hp = alone.pooled.get("Polo"), alone.pooled.get("Homa")
    if ap and hp and ap["n"] > a["n"]:
        lp, lh = alone.load99["Polo"], alone.load99["Homa"]
        there, share = pace((ap["s99"], hp["s99"]), (lp, lh))
        out += (f" The same for every seed's messages ({ap['n']} and {hp['n']} runs): alone Polo {f(ap['s50'])} / "
                f"{f(ap['s99'])}, Homa {f(hp['s50'])} / {f(hp['s99'])}; at {x:.0%}, pooled, Polo "
                f"{f(lp)} and Homa {f(lh)} at the p99"
                + (f": Polo's own pace is {share:.0%} of the pooled gap, contention {1 - share:.0%}." if share is not None else "."))
    return out


def grid(table) -> tuple[list[int], int]:
    """A windowed table's window starts, sorted, and its window (the smallest step
    between them; 0 with fewer than two)."""
    starts = sorted(set(table["window_start_ps"].to_list()))
    return starts, min((b - a for a, b in zip(starts, starts[1:])), default=0)


def windows_in(start: int, end: int, w: int) -> int:
    """How many windows of `w` ps (a grid from 0) begin in [start, end)."""
    return len(range(-(-start // w) * w, end, w)) if w else 0


def rx_rates(m, goodput) -> list[tuple[float, float | None]]:
    """Per measured message: (its slowdown, ∞ if unfinished; the payload rate its
    receiver took in, in Gbps, over the goodput windows that begin while it is open, or
    None if none does)."""
    import polars as pl

    starts, w = grid(goodput)
    out = []
    for mid, dst, start, lat, ideal in m.select("id", "dst", "start_ps", "latency_ps", "ideal_ps").rows():
        end = start + lat if lat is not None else (starts[-1] + w if starts else start)
        g = goodput.filter((pl.col("host") == dst) & (pl.col("window_start_ps") >= start) & (pl.col("window_start_ps") < end))
        n = windows_in(start, end, w)
        out.append((lat / ideal if lat is not None else math.inf, g["payload_bytes"].sum() * 8 / (n * w) * 1e3 if n else None))
    return out


def rx_split(messages, m, goodput) -> list[tuple[float, float | None, float | None, float | None]]:
    """Per measured message `m` (of the run's `messages`): (its slowdown, ∞ if unfinished;
    its own payload rate, size over latency; its receiver's payload rate while it was open
    (`rx_rates`); the time-averaged number of messages open to that receiver then, itself
    included), in Gbps; the last three None if it is unfinished."""
    import polars as pl

    o = messages.select("dst", "start_ps", _fin())
    out = []
    for (sl, rx), (dst, size, start, lat) in zip(rx_rates(m, goodput), m.select("dst", "size_bytes", "start_ps", "latency_ps").rows(),
                                                 strict=True):
        if lat is None:
            out.append((sl, None, None, None))
            continue
        end = start + lat
        ov = o.filter((pl.col("dst") == dst) & (pl.col("start_ps") < end) & (pl.col("fin") > start))
        overlap = (ov["fin"].clip(upper_bound=end) - ov["start_ps"].clip(lower_bound=start)).sum()
        out.append((sl, size * 8 / lat * 1e3, rx, overlap / lat))
    return out


def spine_links(m, ports, leaves: int, per_leaf: int, spines: int) -> dict[int, tuple[float, float]]:
    """Per measured message of `m` that crosses racks and finished: the payload-and-header
    rate (Gbps, over the port windows that begin while it is open) of the busiest, and the
    median, of the `spines` links from the spines into its receiver's leaf (a link with no
    row carried nothing), in a pod of `leaves` leaves of `per_leaf` hosts. Names as the
    pod's topology gives them: leaves `s0`…, then the spines."""
    import polars as pl

    w = ports.filter(pl.col("node").str.strip_prefix("s").cast(pl.Int64, strict=False) >= leaves)
    _, win = grid(ports)
    out = {}
    for mid, src, dst, start, lat in m.select("id", "src", "dst", "start_ps", "latency_ps").rows():
        if lat is None or src // per_leaf == dst // per_leaf:
            continue
        n = windows_in(start, start + lat, win)
        if not n:
            continue
        g = (w.filter((pl.col("peer") == f"s{dst // per_leaf}") & (pl.col("window_start_ps") >= start)
                      & (pl.col("window_start_ps") < start + lat))
             .group_by("node").agg(pl.col("tx_bytes").sum()))
        rates = sorted(b * 8 / (n * win) * 1e3 for b in g["tx_bytes"].to_list())
        rates = [0.0] * (spines - len(rates)) + rates
        out[mid] = (rates[-1], median(rates))
    return out


def spine_text(by_seed: dict[int, dict[str, Any]]) -> str:
    """Polo-three-that-help's slowest 1 % of messages (pooled over the seeds) that cross
    racks: the busiest and the median spine-to-leaf link into their receiver's rack while
    they were open, in the runs hashed per flow and sprayed (`SPINE_DIAG`)."""
    if not by_seed or not all("spines" in t.get(d, {}) for t in by_seed.values() for d in SPINE_DIAG) \
            or not all("by_id" in t.get(THREE, {}) for t in by_seed.values()):
        return ""
    top = slowest([(v, s, i) for s, t in by_seed.items() for i, v in t[THREE]["by_id"].items()])
    parts, med = [], {}
    for d in SPINE_DIAG:
        got = [by_seed[s][d]["spines"][i] for _, s, i in top if i in by_seed[s][d]["spines"]]
        if got:
            med[d] = (median([g[0] for g in got]), median([g[1] for g in got]))
            parts.append(f"{diag_name(d)}, {len(got)} of them: the busiest {med[d][0]:.0f} Gbps and "
                         f"the median link {med[d][1]:.0f} (medians over the messages)")
    if not parts:
        return ""
    (hb, hm), (sb, sm) = med.get(SPINE_DIAG[0], (0.0, 0.0)), med.get(SPINE_DIAG[1], (0.0, 0.0))
    verdict = (": hashed per flow, those long flows meet on one spine link into the rack while the others have room "
               "(ECMP collisions); sprayed, the links carry alike." if hb > 1.5 * hm and sb < 1.2 * sm else ".")
    return (" The links from the spines into the receiver's rack while each of those messages crossed racks and was "
            "open: " + "; ".join(parts) + verdict)


def flow_d(messages, m, probes) -> list[tuple[float, float | None, float | None]]:
    """Per measured message `m` (of the run's `messages`): (its slowdown, ∞ if
    unfinished; the median of its own D (probe `polo_flow_d`) while it was open; the
    median of the D the other messages open to the same receiver were probed at in that
    time), None where nothing was probed."""
    import polars as pl

    p = probes.filter(pl.col("name") == "polo_flow_d").select("time_ps", "flow", "value")
    o = messages.select("id", "dst", "start_ps", _fin())
    out = []
    for mid, dst, start, lat, ideal in m.select("id", "dst", "start_ps", "latency_ps", "ideal_ps").rows():
        end = start + lat if lat is not None else NEVER
        others = o.filter((pl.col("dst") == dst) & (pl.col("id") != mid) & (pl.col("start_ps") < end) & (pl.col("fin") > start))["id"]
        own = p.filter(pl.col("flow") == mid)["value"]
        oth = p.filter(pl.col("flow").is_in(others.to_list()) & (pl.col("time_ps") >= start) & (pl.col("time_ps") < end))["value"]
        out.append((lat / ideal if lat is not None else math.inf, own.median() if own.len() else None,
                    oth.median() if oth.len() else None))
    return out


def equal_split(by_seed: dict[int, dict[str, Any]], d: str = THREE_FIXED) -> str:
    """Diagnostic `d`'s slowest 1 % of messages (pooled over the seeds): the payload rate
    each got while open against an equal split of what its receiver took in meanwhile
    among the messages open to it (time-averaged)."""
    if not by_seed or not all("split" in t.get(d, {}) for t in by_seed.values()):
        return ""
    top = [r for r in slowest([r for t in by_seed.values() for r in t[d]["split"]]) if r[1] is not None and r[2] is not None]
    if not top:
        return ""
    share = [r[1] / (r[2] / r[3]) for r in top]
    return (f" Those {len(top)} messages got a median {median([r[1] for r in top]):.1f} Gbps each while open, "
            f"{median(share):.0%} (median; {min(share):.0%} to {max(share):.0%}) of an equal split of what their "
            f"receivers took in meanwhile (a median {median([r[2] for r in top]):.0f} Gbps among a median "
            f"{median([r[3] for r in top]):.1f} open messages)."
            + (" So with every setting tested that helps, Polo's slowest messages still get less than an equal split of "
               "their receivers' intake." if median(share) < 0.9 else "") + own_d(by_seed, d))


def own_d(by_seed: dict[int, dict[str, Any]], d: str = THREE_FIXED) -> str:
    """Diagnostic `d`'s slowest 1 % of messages (pooled over the seeds): the median of
    their own D's medians against that of the D of the messages they shared their
    receiver with (`flow_d`)."""
    if not by_seed or not all("flow_d" in t.get(d, {}) for t in by_seed.values()):
        return ""
    top = [r for r in slowest([r for t in by_seed.values() for r in t[d]["flow_d"]]) if r[1] is not None and r[2] is not None]
    if not top:
        return ""
    own, oth = median([r[1] for r in top]), median([r[2] for r in top])
    below = sum(r[1] < r[2] for r in top)
    return (f" Their own D (probe `polo_flow_d`, packets per epoch, each message's median while open) was a median "
            f"{own:.0f} against {oth:.0f} for the messages they shared their receiver with; {below} of {len(top)} below"
            + (": Polo's per-flow D, one packet more per unmarked epoch and half the marks fewer (the slides' rule), had "
               "not given them an equal part of their receivers by the time they finished." if own < 0.8 * oth else "."))


def spray_resends(by_seed: dict[int, dict[str, Any]]) -> str:
    """Pooled over the seeds: the data packets Polo resent that had arrived (the
    receiver's duplicates) per diagnostic that sprays, of the data packets sent (one
    adjoint each)."""
    ds = [d for d in SPRAYED if by_seed and all("dups" in t.get(d, {}) for t in by_seed.values())]
    if not ds:
        return ""
    tot = {d: (sum(t[d]["dups"] for t in by_seed.values()), sum(t[d]["data"] for t in by_seed.values())) for d in ds}
    return (" Sprayed, Polo's packets of a flow arrive out of order, and its recovery 1 takes each gap for a loss and "
            "asks for the packet at once: data packets resent that had arrived, pooled (of all sent): "
            + "; ".join(f"{diag_name(d)} {tot[d][0]:,} ({tot[d][0] / tot[d][1]:.1%})" if tot[d][1] else f"{diag_name(d)} 0"
                        for d in ds) + ".")


def against_model(by_seed: dict[int, dict[str, Any]], d: str = THREE_FIXED) -> str:
    """Diagnostic `d`'s pooled p99 slowdown beside the fluid model's of the same messages
    (Polo's run's, shared equally and shortest first) and Homa's measured one."""
    if not by_seed or not all("fluid" in t.get(x, {}) for t in by_seed.values() for x in ("Polo", "Homa")) \
            or not all(d in t for t in by_seed.values()):
        return ""
    n = sum(t["Polo"]["n"] for t in by_seed.values())
    fair, srpt = (C.pct(sorted(v for t in by_seed.values() for v in t["Polo"]["fluid"][k]), n, 0.99) for k in ("fair", "srpt"))
    got, polo, homa = pooled_p99(by_seed, d), pooled_p99(by_seed, "Polo"), pooled_p99(by_seed, "Homa")
    f = C.slowdown
    if None in (got, polo, homa, fair, srpt) or not polo > homa:
        return ""
    gap = polo - homa
    out = (f" With {diag_name(d)}, Polo's pooled p99 slowdown is {f(got)}, {(polo - got) / gap:.0%} of its "
           f"gap to Homa closed; the fluid model of the same messages gives {f(fair)} shared equally and {f(srpt)} "
           f"shortest first, and Homa measures {f(homa)}.")
    if got >= fair >= srpt and abs(homa - srpt) <= 0.1 * gap:
        out += (f" So of Polo's pooled gap to Homa ({f(polo)} − {f(homa)}), those changes close {(polo - got) / gap:.0%}; "
                f"equal sharing against shortest first is {(fair - srpt) / gap:.0%} of it in the model (Polo drives every "
                "open flow at once, Homa's receiver grants the shortest first, and Homa measures at the model's "
                f"shortest first); the remaining {(got - fair) / gap:.0%}, Polo above equal sharing, goes with the "
                "unequal per-flow D measured above.")
    return out


def pause_tail(by_seed: dict[int, dict[str, Any]]) -> str:
    """Polo's slowest 1 % of messages pooled over the seeds, and the same messages'
    slowdowns in the run without Polo's pause (same seed, same messages)."""
    if not by_seed or not all("by_id" in t.get(d, {}) for t in by_seed.values() for d in ("Polo", POLO_NP)):
        return ""
    top = slowest([(v, t[POLO_NP]["by_id"].get(i, math.nan)) for t in by_seed.values() for i, v in t["Polo"]["by_id"].items()])
    k = len(top)
    paused = [r for r in top if r[0] > 2 * r[1]]
    rest = [r for r in top if not r[0] > 2 * r[1]]
    f = C.slowdown
    out = (f" The same {k} slowest messages of Polo's, pooled, in the runs without the pause (`{POLO_NP}`, same seeds "
           f"and messages): {len(paused)} of them more than twice as slow with the pause as without it"
           + (f" (with it {', '.join(f(r[0]) for r in paused)}; without {', '.join(f(r[1]) for r in paused)})" if paused else ""))
    if rest:
        out += (f"; the other {len(rest)} a median {f(median([r[1] for r in rest]))} without it against "
                f"{f(median([r[0] for r in rest]))} with it.")
    else:
        out += "."
    return out


def same_messages(by_seed: dict[int, dict[str, Any]], base: str = "Polo", diags: list[str] | None = None) -> str:
    """The median slowdown of `base`'s slowest 1 % of messages (pooled over the seeds) in
    each diagnostic's runs (`diags`, every one by default): the same messages, so a
    setting that speeds up the messages that made the tail shows here even when the tail
    is then made by others."""
    ds = [d for d in (TAIL_DIAG if diags is None else diags) if all("by_id" in t.get(d, {}) for t in by_seed.values())]
    if not by_seed or not ds or not all("by_id" in t.get(base, {}) for t in by_seed.values()):
        return ""
    top = slowest([(v, s, i) for s, t in by_seed.items() for i, v in t[base]["by_id"].items()])
    f = C.slowdown
    parts = [f"{diag_name(d)} {f(median([by_seed[s][d]['by_id'].get(i, math.nan) for _, s, i in top]))}" for d in ds]
    return (f" Those {len(top)} messages in each diagnostic's runs (same seeds and messages), median slowdown: "
            f"{f(median([r[0] for r in top]))} " + ("as run" if base == "Polo" else f"with {diag_name(base)}") + "; "
            + "; ".join(parts) + ".")


def tail_after(by_seed: dict[int, dict[str, Any]], d: str = "Polo three that help") -> str:
    """Which messages make the slowest 1 % (pooled over the seeds) of diagnostic `d`'s
    runs: their sizes and slowdowns, against Polo's as run."""
    if not by_seed or not all("rx" in t.get(x, {}) for t in by_seed.values() for x in ("Polo", d)):
        return ""

    a, b = (slowest([r for t in by_seed.values() for r in t[x]["rx"]]) for x in ("Polo", d))
    f = C.slowdown
    kb = lambda v: f"{v / 1000:,.0f} KB"  # noqa: E731
    sa, sb = sorted(r[2] for r in a), sorted(r[2] for r in b)
    return (f" With {diag_name(d)}, the run's own slowest {len(b)} messages (pooled): median size "
            f"{kb(median(sb))} ({kb(sb[0])} to {kb(sb[-1])}), slowdowns {f(b[-1][0])} to {f(b[0][0])}, "
            f"against median {kb(median(sa))} ({kb(sa[0])} to {kb(sa[-1])}) as run.")


def fluid_check(by_seed: dict[int, dict[str, Any]]) -> str:
    """Polo's and Homa's pooled p99 slowdown against the fluid model of the same
    messages on the hosts' links (`fluid.py`), shared fairly and shortest first; and the
    payload rate the receivers of Polo's slowest 1 % took in while those were open."""
    if not by_seed or not all("fluid" in t.get(d, {}) for t in by_seed.values() for d in ("Polo", "Homa")):
        return ""
    f = C.slowdown
    got = {}
    for d in ("Polo", "Homa"):
        n = sum(t[d]["n"] for t in by_seed.values())
        got[d] = {k: C.pct(sorted(v for t in by_seed.values() for v in t[d]["fluid"][k]), n, 0.99) for k in fluid.DISCIPLINES}
        got[d]["run"] = pooled_p99(by_seed, d)
    top = slowest([r for t in by_seed.values() for r in t["Polo"]["rx_rate"]])
    k = len(top)
    rates = [r[1] for r in top if r[1] is not None]
    p, h = got["Polo"], got["Homa"]
    out = (f" A fluid model of the same messages (`compare/fluid.py`: each served on its sender's and on its receiver's "
           f"link at its line-rate transfer time, no queues, no control loop; its latency the slower of the two plus the "
           f"fixed part of its ideal time), pooled over seeds {seeds(by_seed)}: with every host link shared equally among "
           f"its open messages, p99 slowdown {f(p['fair'])} for Polo's messages and {f(h['fair'])} for Homa's; shared "
           f"shortest first, {f(p['srpt'])} and {f(h['srpt'])}; measured, Polo {f(p['run'])} and Homa {f(h['run'])}.")
    line = min(t["Polo"]["line_gbps"] for t in by_seed.values())
    rate = median(rates) if rates else None
    if rate is not None:
        out += (f" While Polo's {k} slowest messages were open, their receivers took in a median {rate:.0f} Gbps of "
                f"payload, of the {line:.0f} Gbps a link carries with Polo's framing.")
    if p["run"] is not None and p["fair"] is not None and p["run"] > 1.5 * p["fair"]:
        out += (" So fair sharing of the hosts' links does not account for Polo's tail: its contended messages are "
                "driven below an equal share of their receiver's link"
                + (", and the link is not kept full meanwhile." if rate is not None and rate < 0.9 * line else "."))
    return out


#: The end, in ps, of a message never delivered: after any run.
NEVER = 1 << 62


def _fin():
    """A messages table's column `fin`: each message's delivery time (start + latency),
    `NEVER` if undelivered."""
    import polars as pl

    return (pl.col("start_ps") + pl.col("latency_ps")).fill_null(NEVER).alias("fin")


def shares_receiver(messages) -> list[int]:
    """Ids of the messages that, at some time between their start and their delivery
    (the run's end if never delivered), shared their receiver with a larger message that
    was also open then."""
    import polars as pl

    o = messages.select("id", "dst", "size_bytes", "start_ps", _fin())
    j = o.join(o, on="dst", suffix="_o").filter(
        (pl.col("id") != pl.col("id_o")) & (pl.col("size_bytes_o") > pl.col("size_bytes"))
        & (pl.col("start_ps_o") < pl.col("fin")) & (pl.col("fin_o") > pl.col("start_ps")))
    return j["id"].unique().to_list()


def slowest(rows: list) -> list:
    """The slowest 1 % (at least one) of `rows`, each a tuple whose first item is a
    slowdown, slowest first."""
    return sorted(rows, key=lambda r: -r[0])[:max(1, len(rows) // 100)]


def median(v: list[float]) -> float:
    """The lower median."""
    return sorted(v)[(len(v) - 1) // 2]


def receiver_sharing(by_seed: dict[int, dict[str, Any]]) -> str:
    """Polo's and Homa's slowest 1 % of messages pooled over the seeds: their median
    size and how many shared their receiver with a larger open message, against the
    share among all measured messages."""
    if not by_seed or not all("rx" in t.get(d, {}) for t in by_seed.values() for d in ("Polo", "Homa")):
        return ""
    parts, facts = [], {}
    for d in ("Polo", "Homa"):
        rows = [r for t in by_seed.values() for r in t[d]["rx"]]
        top = slowest(rows)
        k = len(top)
        shared_top, shared_all = sum(r[1] for r in top), sum(r[1] for r in rows) / len(rows)
        size50 = median([r[2] for r in top])
        facts[d] = (shared_top / k, shared_all, size50)
        parts.append(f"{d}'s {k} slowest of {len(rows)} (median size {size50 / 1000:,.0f} KB): {shared_top} "
                     f"shared their receiver with a larger open message, against {shared_all:.0%} of all its messages")
    (pt, pa, ps), (_, _, hs) = facts["Polo"], facts["Homa"]
    verdict = (" Polo's tail is short messages that met a larger one at their receiver, where Polo drives each flow by "
               "its own D with no priority by size; Homa's is large messages, which its SRPT grants last."
               if pt >= 2 * pa and ps < hs else "")
    return (f" Which messages make the tail, pooled over seeds {seeds(by_seed)} (slowest 1 % by slowdown): "
            + "; ".join(parts) + "." + verdict)


def d_cuts(v: list[float]) -> list[list[float]]:
    """D's runs of consecutive cuts in a series of epoch-end values: each run's values
    from the one before its first cut to the one after its last, for every run that ends
    inside the series (one still cutting at the series' end is left out)."""
    out, i = [], 0
    while i + 1 < len(v):
        if v[i + 1] < v[i]:
            j = i
            while j + 1 < len(v) and v[j + 1] < v[j]:
                j += 1
            if j + 1 < len(v):
                out.append(list(v[i:j + 1]))
            i = j
        else:
            i += 1
    return out


def shared(ctx: Context, js: list, size: int):
    """Per (design, number of flows): the payload rate into the receiver from the first
    start to the last delivery (None if a message is unfinished) and, for Polo, its D
    (probe `polo_d`, summed over the receiver's flows) while every flow was open: the
    runs of cuts (`d_cuts`), their median peak, trough and length, the mean D, and the
    first run of two cuts or more as an example."""
    import polars as pl

    rows = []
    for job, res in zip(js, ctx.run_many(js), strict=True):
        m = res.messages
        done = m["finish_ps"].null_count() == 0
        first, last = int(m["start_ps"].min()), int(m["start_ps"].max())
        row: dict[str, Any] = {"design": job.params["design"], "flows": m.height,
                               "gbps": m.height * size * 8 / (int(m["finish_ps"].max()) - first) * 1e3 if done else None,
                               "cycles": 0, "d_peak": None, "d_trough": None, "d_cuts": None, "d_mean": None, "d_example": None}
        p = res.probes.filter((pl.col("name") == "polo_d") & (pl.col("time_ps") >= last))
        if done:
            p = p.filter(pl.col("time_ps") < int(m["finish_ps"].min()))
        v = p.sort("time_ps", maintain_order=True)["value"].to_list()
        if v:
            runs = d_cuts(v)
            row.update(d_mean=sum(v) / len(v), cycles=len(runs))
            if runs:
                row.update(d_peak=median([r[0] for r in runs]), d_trough=median([r[-1] for r in runs]),
                           d_cuts=median([len(r) - 1 for r in runs]),
                           d_example=" → ".join(f"{x:.0f}" for x in next((r for r in runs if len(r) > 2), runs[0])))
        rows.append(row)
    return pl.DataFrame(rows, schema={"design": pl.String, "flows": pl.Int64, "gbps": pl.Float64, "cycles": pl.Int64,
                                      "d_peak": pl.Float64, "d_trough": pl.Float64, "d_cuts": pl.Float64,
                                      "d_mean": pl.Float64, "d_example": pl.String})


def shared_text(df, size: int, seed: int) -> str:
    """The long-flow diagnostic in words: every design's rate per number of flows, and
    what Polo's D did while its flows shared the link."""
    if df.is_empty():
        return ""
    rows = {(r["design"], r["flows"]): r for r in df.iter_rows(named=True)}
    ns = sorted({n for _, n in rows})
    ds = list(dict.fromkeys(d for d, _ in rows))
    g = lambda r: "unfinished" if r["gbps"] is None else f"{r['gbps']:.1f}"  # noqa: E731
    out = (f"- **Polo's long flows sharing a link** (diagnostic, seed {seed}): n hosts of rack 1 each send one "
           f"{size / 1e6:g} MB message to host 0 in rack 0 at once, nothing else in the pod; the payload rate into "
           f"host 0 from the first start to the last delivery (n × {size / 1e6:g} MB over that time), Gbps: "
           + "; ".join(f"{n} flow{'s' if n > 1 else ''} " + ", ".join(f"{d} {g(rows[(d, n)])}" for d in ds if (d, n) in rows)
                       for n in ns) + ".")
    line = 100 * 1500 / 1542
    share = {d: [f"{n} flow{'s' if n > 1 else ''} {rows[(d, n)]['gbps'] / line:.0%}" for n in ns
                 if (d, n) in rows and rows[(d, n)]["gbps"] is not None] for d in ("Polo", "Polo ECN 65")}
    if any(share.values()):
        out += (f" Of the {line:.1f} Gbps of payload a 100 Gbps link carries in full frames: "
                + "; ".join(f"{d} {', '.join(v)}" for d, v in share.items() if v) + ".")
    r = next((rows[("Polo", n)] for n in ns if n > 1 and ("Polo", n) in rows), None)
    if r and r["d_example"]:
        ex = [float(x) for x in r["d_example"].split(" → ")]
        out += (f" Polo's D (probe `polo_d`, summed over host 0's flows, at each epoch's end while all {r['flows']} were "
                f"open) went through {r['cycles']} runs of cuts, each a median {r['d_cuts']:.0f} epochs of cuts in a "
                f"row from a median {r['d_peak']:.0f} packets per epoch to {r['d_trough']:.0f} (e.g. {r['d_example']}); "
                f"over the transfer D averaged {r['d_mean']:.1f}, {r['d_mean'] / r['d_peak']:.0%} of its median peak. "
                "The slides' rule cuts D by half its marked packets in every epoch that has any, and an epoch is one "
                "round trip of high-priority control packets")
        if len(ex) > 2:
            implied = 2 * (ex[1] - ex[2]) - r["flows"]
            out += (f": the example's second cut, {ex[1] - ex[2]:.0f}, needs at least 2 × {ex[1] - ex[2]:.0f} − "
                    f"{r['flows']} = {implied:.0f} marked arrivals in an epoch that began with D = {ex[1]:.0f}"
                    + (", more than that D asks for: packets driven before the first cut, marked as they waited, "
                       "cut D again" if implied > ex[1] else ""))
        out += (". A cut once per round trip of data, as TCP's response to ECN (RFC 3168 §6.1.2), would stop at half "
                "the peak.")
    e = next((rows[("Polo ECN 65", n)] for n in ns if n > 1 and ("Polo ECN 65", n) in rows), None)
    if e and e["d_peak"] is not None:
        out += (f" With marking at 65 frames ({e['flows']} flows): a median {e['d_cuts']:.0f} cuts in a row from "
                f"{e['d_peak']:.0f} to {e['d_trough']:.0f}, D averaging {e['d_mean']:.1f}.")
    return out
