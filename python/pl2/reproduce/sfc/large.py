"""SFC slides, "SFC Benefits", the messages > 1 MB: where their time goes. The benefit
section finds SFC's p99 of these messages at 0.72× of PFC's, not half, with DCQCN alone
(no pause at all) near SFC's; this part measures why, on the benefit experiment's first
seed, and varies DCQCN's rate recovery alone as a sensitivity.

The runs are the benefit runs themselves (same scenario, same seed: same arrivals) with a
per-frame trace of the measured background messages > 1 MB at their sending hosts
(`[metrics.trace]`, flows = their message ids, nodes = their sources: RoCE's flow id is
its message id) and the background transport's DCQCN rate probes (`roce_rate_bps`, kept
at most once per `PROBE_INTERVAL` per flow). Observing changes nothing: the runs' FCTs
equal the benefit runs' (the section says whether they do).

Per message, from its start s to its last data frame's transmission L at its NIC, then to
its delivery f (an exact identity; `breakdown`):

    f − s = line + paused + below + other + tail

- line: its data frames' wire time at 100 Gbps (resent frames included);
- paused: the time under an SFC pause (the union of [arrival, arrival + pause] of the
  signals for the flow that reached its sender, within [s, L]);
- below: over the rest of [s, L], ∫ (1 − r(t)/C) dt with r the flow's DCQCN rate (line
  rate until its first probe, then each probe's value held): the time a flow that always
  sent at its DCQCN rate would spend beyond its line time;
- other: what is left of L − s: waits beyond its rate (DCQCN's window of 15 µs in flight,
  other flows of the same NIC, PFC pauses of the NIC, go-back-N rewinds);
- tail: f − L, the last frame's way to the receiver.

The sensitivity: the same runs with DCQCN's additive increase as the DCQCN paper's (R_AI
40 Mbps and R_HAI 200 Mbps, Zhu et al. 2015 §3.1 and the authors' simulator, the
`dcqcn_paper` preset) instead of the slides' 12.5 / 25 Mbps, nothing else changed: a
documented value, not one fitted to the claim.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from pl2.reproduce.common import Context, Job, table
from pl2.reproduce.sfc.common import LINK_BPS, fmt, pct

NAME = "sfc-large"
#: The designs measured: SFC and DCQCN alone (no pause at all), whose p99s are alike.
DESIGNS = ["SFC", "DCQCN lossy"]
#: Messages of at least this size (the benefit section's top bucket).
LARGE_B = 1_000_000
#: How often a flow's DCQCN rate is kept (sample-and-hold; DCQCN's increase timer is 4 µs).
PROBE_INTERVAL = "4us"
#: The sensitivity's DCQCN rate recovery: the DCQCN paper's additive and hyper increase
#: (`presets.rs`, `dcqcn_paper`), in place of the slides' 12.5 / 25 Mbps.
PAPER_AI = {"rate_ai": "40Mbps", "rate_hai": "200Mbps"}
#: The variants: the slides' DCQCN (the benefit runs) and the paper's increase.
VARIANTS = {"slides AI": {}, "paper AI": PAPER_AI}
#: The trace's record limit (a trace that reached it would be cut short: `run` refuses it).
MAX_RECORDS = 20_000_000
#: How many of each design's slowest messages the section lists one by one.
SLOWEST = 3


def pick(messages: pl.DataFrame) -> dict[str, Any]:
    """The measured background messages > 1 MB: their ids and sending hosts."""
    m = messages.filter(pl.col("in_window") & (pl.col("transport") == "default") & (pl.col("size_bytes") >= LARGE_B))
    return {"ids": sorted(int(i) for i in m["id"].to_list()), "srcs": sorted({int(s) for s in m["src"].to_list()})}


def jobs(base: list[Job], large: dict[str, Any]) -> list[Job]:
    """The benefit jobs of `DESIGNS` (one seed), for each variant, with the trace of the
    large messages at their sources and the background transport's rate probes."""
    out = []
    for variant, dcqcn in VARIANTS.items():
        for j in base:
            if j.params["design"] not in DESIGNS:
                continue
            d = j.scenario.to_dict()
            d["name"] = f"{NAME}-{j.params['design'].replace(' ', '-')}" + ("-paper-ai" if dcqcn else "")
            d["transport"] = {**d["transport"], **dcqcn, "probes": True}
            d["transports"] = {k: {**v, **dcqcn} for k, v in d.get("transports", {}).items()}
            d["metrics"] = {**d["metrics"], "probes": True, "probe_interval": PROBE_INTERVAL,
                            "trace": {"flows": large["ids"], "nodes": [f"h{s}" for s in large["srcs"]],
                                      "max_records": MAX_RECORDS}}
            params = {**j.params, "figure": NAME, "variant": variant}
            out.append(Job(type(j.scenario).from_dict(d, base_dir="."), params, j.seed, NAME))
    return out


def _union_within(iv: list[tuple[int, int]], lo: int, hi: int) -> int:
    """Length of the union of intervals `iv`, clipped to [lo, hi] (ps)."""
    total, cur_a, cur_b = 0, None, None
    for a, b in sorted((max(a, lo), min(b, hi)) for a, b in iv):
        if b <= a:
            continue
        if cur_b is None or a > cur_b:
            total += (cur_b - cur_a) if cur_b is not None else 0
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    return total + ((cur_b - cur_a) if cur_b is not None else 0)


def _below(rates: list[tuple[int, float]], pauses: list[tuple[int, int]], lo: int, hi: int) -> float:
    """∫ (1 − r(t)/C) dt over [lo, hi] outside `pauses` (ps), r held from each
    (time, rate) and C before the first."""
    steps = [(lo, LINK_BPS)] + [(t, r) for t, r in rates if lo < t < hi]
    before = [r for t, r in rates if t <= lo]
    if before:
        steps[0] = (lo, before[-1])
    total = 0.0
    for (t, r), (t2, _) in zip(steps, steps[1:] + [(hi, 0.0)], strict=True):
        span = t2 - t - _union_within(pauses, t, t2)
        total += span * max(0.0, 1.0 - r / LINK_BPS)
    return total


def breakdown(messages: pl.DataFrame, trace: pl.DataFrame, probes: pl.DataFrame, ids: list[int]) -> pl.DataFrame:
    """Per message of `ids`: its FCT and the five parts it adds up to (µs), the bytes it
    sent (resends included) and its mean DCQCN rate over [s, L] (Gbps)."""
    m = messages.filter(pl.col("id").is_in(ids)).select("id", "src", "size_bytes", "start_ps", "finish_ps")
    # Each traced frame with its message's sending host: data leaving that host's NIC.
    src = m.select(pl.col("id").cast(trace.schema["flow"]).alias("flow"), (pl.lit("h") + pl.col("src").cast(pl.Utf8)).alias("src_node"))
    tr = trace.filter(pl.col("flow").is_in(ids)).join(src, on="flow", how="inner")
    tx = (tr.filter((pl.col("kind") == "data") & (pl.col("event") == "tx") & (pl.col("node") == pl.col("src_node")))
          .group_by("flow").agg(pl.col("time_ps").max().alias("last_ps"), pl.col("wire_bytes").cast(pl.Int64).sum().alias("wire_b"),
                                pl.col("payload_bytes").cast(pl.Int64).sum().alias("sent_b")))
    sig = (tr.filter((pl.col("kind") == "sfc") & (pl.col("event") == "arrive") & (pl.col("node") == pl.col("src_node")))
           .group_by("flow").agg(pl.col("time_ps").alias("at"), pl.col("aux").alias("pause")))
    pr = (probes.filter((pl.col("name") == "roce_rate_bps") & pl.col("flow").is_in(ids)).sort("time_ps")
          .group_by("flow").agg(pl.col("time_ps").alias("pt"), pl.col("value").alias("pv")))
    j = (m.join(tx, left_on="id", right_on="flow", how="left").join(sig, left_on="id", right_on="flow", how="left")
         .join(pr, left_on="id", right_on="flow", how="left"))
    rows = []
    for r in j.iter_rows(named=True):
        s, f, last = r["start_ps"], r["finish_ps"], r["last_ps"]
        if f is None or last is None:
            rows.append({"id": r["id"], "fct_us": None})
            continue
        pauses = [(a, a + p) for a, p in zip(r["at"] or [], r["pause"] or [], strict=True)]
        rates = list(zip(r["pt"] or [], r["pv"] or [], strict=True))
        line = r["wire_b"] * 8 / LINK_BPS * 1e12
        paused = _union_within(pauses, s, last)
        below = _below(rates, pauses, s, last)
        held = [v for t, v in rates if s <= t <= last]
        rows.append({
            "id": r["id"], "size_b": r["size_bytes"], "fct_us": (f - s) / 1e6, "line_us": line / 1e6,
            "paused_us": paused / 1e6, "below_us": below / 1e6, "other_us": (last - s - line - paused - below) / 1e6,
            "tail_us": (f - last) / 1e6, "resent_b": r["sent_b"] - r["size_bytes"],
            "min_rate_gbps": min(held) / 1e9 if held else LINK_BPS / 1e9,
            "signals": len(pauses)})
    return pl.DataFrame(rows, schema_overrides={"fct_us": pl.Float64})


PARTS = ["line_us", "paused_us", "below_us", "other_us", "tail_us"]


def slowest(b: pl.DataFrame, k: int) -> pl.DataFrame:
    """The `k` messages of largest FCT (unfinished ones first)."""
    return b.sort("fct_us", descending=True, nulls_last=False).head(k)


def run(ctx: Context, base: list[Job], benefit_messages: pl.DataFrame) -> tuple[str, str]:
    """The section and its one-line mechanism (`note`): `base` are the benefit jobs of the
    first seed, `benefit_messages` the messages of one of them (the arrivals are every
    design's)."""
    large = pick(benefit_messages)
    js = jobs(base, large)
    frames = []
    fcts: dict[tuple[str, str], list[float]] = {}
    for job, res in zip(js, ctx.run_many(js), strict=True):
        d, v = job.params["design"], job.params["variant"]
        if res.trace.height >= MAX_RECORDS:
            raise ValueError(f"{NAME} {d}: the trace reached its {MAX_RECORDS:,} records; raise MAX_RECORDS")
        b = breakdown(res.messages, res.trace, res.probes, large["ids"])
        frames.append(b.with_columns(pl.lit(d).alias("design"), pl.lit(v).alias("variant")))
        fcts[(d, v)] = [x / 1e6 if x is not None else float("inf") for x in
                        res.messages.filter(pl.col("id").is_in(large["ids"]))["latency_ps"].to_list()]
    df = pl.concat(frames, how="diagonal_relaxed")
    ctx.write_parquet(df, "large")
    # Observing must change nothing: the slides' runs against the benefit runs themselves.
    mine = [j for j in base if j.params["design"] in DESIGNS]
    same = {}
    for job, res in zip(mine, ctx.run_many(mine), strict=True):
        ref = [x / 1e6 if x is not None else float("inf") for x in
               res.messages.filter(pl.col("id").is_in(large["ids"]))["latency_ps"].to_list()]
        same[job.params["design"]] = ref == fcts[(job.params["design"], "slides AI")]
    return section(df, fcts, len(large["ids"]), ctx.seeds[0], same), note(df, fcts, ctx.seeds[0])


def quick_section() -> str:
    """What quick mode writes in place of the section: where the measurement lives."""
    return "\n".join([
        "### Messages > 1 MB: where their time goes, and DCQCN's recovery varied",
        "",
        f"Not run in quick mode: the `{NAME}` runs (SFC and DCQCN alone, each with the slides' and the DCQCN paper's "
        "additive increase, with a per-frame trace) follow the full run's messages > 1 MB, and quick mode's 0.3 ms of "
        "arrivals holds few of them. `pl2 reproduce sfc-benefit` (without `--quick`) runs them; the committed "
        "`results/sfc/report.md` has the section.",
    ])


def note(df: pl.DataFrame, fcts: dict[tuple[str, str], list[float]], seed: int) -> str:
    """The measured mechanism in one line, for the claim's row: where the messages' time
    went under SFC, DCQCN alone's p99, and SFC's p99 with the paper's increase."""
    g = df.filter((pl.col("design") == "SFC") & (pl.col("variant") == "slides AI") & pl.col("fct_us").is_not_null())
    if not g.height or ("DCQCN lossy", "slides AI") not in fcts:
        return ""
    tot = g["fct_us"].sum()
    r = pct(fcts[("SFC", "paper AI")], 0.99) if ("SFC", "paper AI") in fcts else None
    base = pct(fcts[("SFC", "slides AI")], 0.99)
    faster = (f"; with the DCQCN paper's faster increase SFC's p99 is {r / base:.2f}× of it"
              if r is not None and base and not math.isinf(r) and not math.isinf(base) else "")
    return (f"mechanism measured on seed {seed} (section \"Messages > 1 MB\"): these messages spent "
            f"{100 * g['below_us'].sum() / tot:.0f} % of their time below line rate at their DCQCN rate and "
            f"{100 * g['paused_us'].sum() / tot:.0f} % under SFC pauses; DCQCN alone, with no pauses, p99 "
            f"{fmt(pct(fcts[('DCQCN lossy', 'slides AI')], 0.99), 0)} µs{faster}")


def _sum_row(g: pl.DataFrame) -> list[str]:
    """Mean over messages of each part, and its share of the mean FCT."""
    fct = g["fct_us"].mean()
    return [f"{fmt(g[p].mean(), 0)} ({100 * g[p].mean() / fct:.0f} %)" if fct else "–" for p in PARTS]


def section(df: pl.DataFrame, fcts: dict[tuple[str, str], list[float]], n: int, seed: int, same: dict[str, bool]) -> str:
    head = ["design, DCQCN increase", "messages", "FCT p50 / p99 (µs)", "line", "SFC-paused", "below line rate",
            "other waits", "last frame's way"]
    mean_rows, slow_rows = [], []
    for v in VARIANTS:
        for d in DESIGNS:
            g = df.filter((pl.col("design") == d) & (pl.col("variant") == v) & pl.col("fct_us").is_not_null())
            if (d, v) not in fcts or not g.height:
                continue
            lat = fcts[(d, v)]
            label = f"{d}, {v}"
            mean_rows.append([label, f"{len(lat)} ({sum(1 for x in lat if x == float('inf'))} open)",
                              f"{fmt(pct(lat, 0.5), 0)} / {fmt(pct(lat, 0.99), 0)}", *_sum_row(g)])
            for r in slowest(g, SLOWEST).iter_rows(named=True):
                slow_rows.append([label, f"{r['size_b'] / 1e6:.2f}", fmt(r["fct_us"], 0), *(fmt(r[p], 0) for p in PARTS),
                                  fmt(r["min_rate_gbps"], 2), str(r["signals"])])

    def p99(d: str, v: str) -> float | None:
        return pct(fcts[(d, v)], 0.99) if (d, v) in fcts else None

    def part(d: str, v: str, k: str, top: bool = False) -> float | None:
        g = df.filter((pl.col("design") == d) & (pl.col("variant") == v) & pl.col("fct_us").is_not_null())
        if top:
            g = slowest(g, SLOWEST)
        return g[k].mean() if g.height else None

    def ratio(a: float | None, b: float | None) -> str:
        if a is None or b is None or math.isinf(a) or math.isinf(b) or not b:
            return "–"
        return f"{a / b:.2f}×"

    s, dl = "SFC", "DCQCN lossy"
    lines = [
        "### Messages > 1 MB: where their time goes, and DCQCN's recovery varied",
        "",
        f"The {n} measured background messages > 1 MB of seed {seed}, rerun with a trace of their frames at their "
        f"senders and their DCQCN rates (`{NAME}` runs; `sfc-benefit/large.parquet`, one row per message and run). "
        "Each FCT splits exactly into: *line* (its frames' wire time at 100 Gbps, resends included), *SFC-paused* (under "
        "an SFC pause of the flow), *below line rate* (∫ (1 − DCQCN rate / 100 Gbps) dt over the unpaused time: what "
        "sending at its DCQCN rate costs beyond line rate), *other waits* (the rest until its last frame leaves the NIC: "
        "DCQCN's 15 µs window, other flows on the NIC, PFC pauses of the NIC, go-back-N) and *last frame's way* (its "
        "last frame's trip to the receiver). Means over the messages (share of the mean FCT); *paper AI*: the same runs "
        "with the DCQCN paper's additive and hyper increase (R_AI 40 Mbps, R_HAI 200 Mbps, `dcqcn_paper`) in place of the "
        "slides' 12.5 / 25 Mbps, nothing else changed. "
        + ("Observing changed nothing: " if all(same.values()) else "Observing changed the runs (a defect): ")
        + "; ".join(f"{d}'s FCTs {'equal' if ok else 'differ from'} its benefit run's" for d, ok in same.items()) + ".",
        "",
        table(head, mean_rows),
        "",
        f"The {SLOWEST} slowest delivered messages of each run (µs; min rate: the lowest DCQCN rate the flow held, Gbps; signals: SFC "
        "signals that reached its sender):",
        "",
        table(["design, DCQCN increase", "MB", "FCT", "line", "SFC-paused", "below line rate", "other waits",
               "last frame's way", "min rate", "signals"], slow_rows),
        "",
        f"Measured mechanism (seed {seed}): the {SLOWEST} slowest delivered messages under SFC spent on average "
        f"{fmt(part(s, 'slides AI', 'below_us', True), 0)} µs below line rate, {fmt(part(s, 'slides AI', 'paused_us', True), 0)} µs "
        f"SFC-paused and {fmt(part(s, 'slides AI', 'other_us', True), 0)} µs in other waits of "
        f"{fmt(part(s, 'slides AI', 'fct_us', True), 0)} µs; under DCQCN alone {fmt(part(dl, 'slides AI', 'below_us', True), 0)} µs "
        f"below line rate and {fmt(part(dl, 'slides AI', 'other_us', True), 0)} µs in other waits of "
        f"{fmt(part(dl, 'slides AI', 'fct_us', True), 0)} µs. With the paper's increase the p99 becomes SFC "
        f"{fmt(p99(s, 'paper AI'), 0)} µs ({ratio(p99(s, 'paper AI'), p99(s, 'slides AI'))} of the slides' DCQCN's "
        f"{fmt(p99(s, 'slides AI'), 0)} µs) and DCQCN alone {fmt(p99(dl, 'paper AI'), 0)} µs "
        f"({ratio(p99(dl, 'paper AI'), p99(dl, 'slides AI'))} of {fmt(p99(dl, 'slides AI'), 0)} µs). PFC was not rerun "
        "(its runs are the slowest on this shared machine), so SFC against PFC with the paper's increase is not measured.",
        "",
        verdict(df, fcts),
    ]
    return "\n".join(lines)


def verdict(df: pl.DataFrame, fcts: dict[tuple[str, str], list[float]]) -> str:
    """What the breakdown says, from its numbers: the share of the delivered messages'
    summed FCT spent below line rate and SFC-paused, and how the p99 moves with the
    paper's increase."""
    def share(d: str, v: str, k: str) -> float | None:
        g = df.filter((pl.col("design") == d) & (pl.col("variant") == v) & pl.col("fct_us").is_not_null())
        return g[k].sum() / g["fct_us"].sum() if g.height else None

    def p99_ratio(d: str) -> float | None:
        a, b = (pct(fcts[(d, v)], 0.99) if (d, v) in fcts else None for v in ("paper AI", "slides AI"))
        return a / b if a is not None and b and not math.isinf(a) and not math.isinf(b) else None

    below, paused = share("SFC", "slides AI", "below_us"), share("SFC", "slides AI", "paused_us")
    dl_below = share("DCQCN lossy", "slides AI", "below_us")
    if below is None or paused is None or dl_below is None:
        return ""
    out = (f"Of the delivered messages' summed FCT, SFC's spent {100 * below:.0f} % sending below line rate at their "
           f"DCQCN rate and {100 * paused:.0f} % under SFC pauses; DCQCN alone's {100 * dl_below:.0f} % below line rate. ")
    if not (below > 0.5 and paused < 0.1):
        return out + "So neither DCQCN's rate alone nor SFC's pauses alone set how long these messages take."
    out += ("So it is DCQCN's rate, not SFC's pauses, that sets how long these messages take, in SFC as without any "
            "pause. ")
    r_sfc, r_dl, below_paper = p99_ratio("SFC"), p99_ratio("DCQCN lossy"), share("SFC", "paper AI", "below_us")
    if r_sfc is None or below_paper is None:
        return out
    moved = "shortens" if r_sfc < 0.9 else "barely moves"
    return out + (f"A faster recovery {moved} the tail (the paper's increase: SFC's p99 {r_sfc:.2f}×"
                  + (f", DCQCN alone's {r_dl:.2f}×" if r_dl is not None else "") + "), yet with it the messages still spend "
                  f"{100 * below_paper:.0f} % of their time below line rate: the rate's slow recovery is part of the tail, "
                  "and the cuts that keep bringing it down (the min rate column) are the rest.")
