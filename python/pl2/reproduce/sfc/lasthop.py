"""SFC slides, "SFC Benefits", the ToR last hop as a time series: one incast of the
benefit experiment followed through its first round trips under SFC and PFC. The benefit
section measures SFC's time-weighted queue at ToR ports toward hosts above PFC's and one
such port at the egress pool's dynamic threshold, and explains it by the bytes the
incast's flows have in flight before a signal can reach a sender; this run shows that
explanation on one incast and checks its numbers.

The incast: of the benefit experiment's first seed, the first incast that arrives at or
after the warm-up (its messages all start at one instant towards one receiver). The run
is the benefit run itself (same scenario, same seed: same arrivals) cut at the incast's
start + `SPAN_US`, with a finer per-port window (`WINDOW`) and a per-frame trace of the
incast's flows (`[metrics.trace]`, flows = the incast's message ids; RoCE's flow id is
its message id, and the trace's `transport` column keeps only the incast transport's).

From the trace, per `WINDOW`:
- bytes in flight of the incast's flows: payload the senders' NICs started to transmit
  (`tx` at the source host) less payload delivered to the receiver (`arrive` at it) and
  payload dropped, cumulated from the incast's start (a resent frame counts again);
- SFC signals for the incast's flows: sent (`tx` at the switch that made the signal,
  the first hop of each `sfc` frame) and arrived at a sender (`arrive` at a host).
From `ports`: the receiver's ToR port toward the receiver, the window's largest and
time-averaged queue (all traffic through that port: the incast's and background).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from pl2.reproduce.common import Context, Job, table
from pl2.reproduce.sfc.common import COLORS, HOSTS, HOSTS_PER_TOR, fmt

NAME = "sfc-lasthop"
#: The designs shown: SFC against PFC (the claim under test is theirs).
DESIGNS = ["SFC", "PFC"]
#: Per-port window of the run: 1 µs, a twelfth of the base RTT, so that a signal's
#: flight (half an RTT) spans several windows.
WINDOW = "1us"
WINDOW_PS = 1_000_000
#: DCQCN's window under the slides' preset: 15 µs at 100 Gbps, the most a flow has
#: unacknowledged (`preset = "sfc_seed"`).
WINDOW_BYTES = 187_500
#: How long after the incast's start the run is followed (µs): the first signals, the
#: peak of the receiver's port queue and its first drain fit in it (full mode).
SPAN_US = {False: 300, True: 100}
#: The trace's record limit: far above an incast's frames over the span (a full trace
#: would be cut short, so `run` refuses one that reached it).
MAX_RECORDS = 20_000_000


def pick(messages: pl.DataFrame, warmup_ps: int) -> dict[str, Any]:
    """The first incast (messages of the incast transport that start at one instant to
    one receiver) starting at or after `warmup_ps`: its start, receiver, senders and
    message ids."""
    inc = messages.filter((pl.col("transport") == "incast") & (pl.col("start_ps") >= warmup_ps))
    t = inc["start_ps"].min()
    one = inc.filter(pl.col("start_ps") == t)
    dsts = one["dst"].unique().to_list()
    if len(dsts) != 1:
        raise ValueError(f"incast at {t} ps has {len(dsts)} receivers")
    return {"start_ps": int(t), "dst": int(dsts[0]), "ids": sorted(int(i) for i in one["id"].to_list()),
            "srcs": sorted(int(s) for s in one["src"].to_list())}


def jobs(base: list[Job], incast: dict[str, Any], quick: bool) -> list[Job]:
    """The benefit jobs of `DESIGNS` (one seed) rerun to the incast's start + the span,
    with the finer window and the trace of the incast's flows."""
    end_ps = incast["start_ps"] + SPAN_US[quick] * 1_000_000
    out = []
    for j in base:
        d = j.scenario.to_dict()
        d["name"] = f"{NAME}-{j.params['design'].replace(' ', '-')}"
        d["run"] = {**d["run"], "duration": f"{end_ps}ps", "stop_when_delivered": False}
        d["metrics"] = {**d["metrics"], "window": WINDOW,
                        "trace": {"flows": incast["ids"], "from": f"{incast['start_ps']}ps", "until": f"{end_ps}ps",
                                  "max_records": MAX_RECORDS}}
        params = {**j.params, "figure": NAME, "incast_start_ps": incast["start_ps"]}
        out.append(Job(type(j.scenario).from_dict(d, base_dir="."), params, j.seed, NAME))
    return out


def series(trace: pl.DataFrame, ports: pl.DataFrame, incast: dict[str, Any], span_us: int) -> pl.DataFrame:
    """Per `WINDOW` from the incast's start (`t_us`, the window's start after it): the receiver's
    ToR port toward the receiver (`queue_max_b`, `queue_mean_b`), the incast's bytes in
    flight at the window's end (`inflight_b`), and its SFC signals sent and arrived in
    the window."""
    t0 = incast["start_ps"]
    # Windows as the simulator's: multiples of `WINDOW` from time 0; the first holds the
    # incast's start, the last ends at or before the run's end (a partial one would
    # under-state its time-average).
    w0 = t0 - t0 % WINDOW_PS
    rcv = f"h{incast['dst']}"
    tor = f"s{incast['dst'] // HOSTS_PER_TOR}"
    senders = [f"h{s}" for s in incast["srcs"]]
    tr = trace.filter(pl.col("transport") == "incast").with_columns(
        ((pl.col("time_ps").cast(pl.Int64) - w0) // WINDOW_PS).alias("k"))
    data = tr.filter(pl.col("kind") == "data")
    b = pl.col("payload_bytes").cast(pl.Int64)
    sent = data.filter((pl.col("event") == "tx") & pl.col("node").is_in(senders)).group_by("k").agg(b.sum().alias("sent"))
    got = data.filter((pl.col("event") == "arrive") & (pl.col("node") == rcv)).group_by("k").agg(b.sum().alias("got"))
    lost = data.filter(pl.col("event") == "drop").group_by("k").agg(b.sum().alias("lost"))
    sig = tr.filter(pl.col("kind") == "sfc")
    # A signal's first transmission is at the switch that made it: its `src`.
    made = sig.filter((pl.col("event") == "tx") & (pl.col("node") == pl.lit("s") + (pl.col("src") - HOSTS).cast(pl.Utf8)))
    sig_sent = made.group_by("k").agg(pl.len().cast(pl.Int64).alias("signals_sent"))
    sig_got = sig.filter((pl.col("event") == "arrive") & pl.col("node").str.starts_with("h")).group_by("k").agg(
        pl.len().cast(pl.Int64).alias("signals_arrived"))
    q = ports.filter((pl.col("node") == tor) & (pl.col("peer") == rcv)).select(
        ((pl.col("window_start_ps").cast(pl.Int64) - w0) // WINDOW_PS).alias("k"),
        pl.col("max_queue_bytes").cast(pl.Int64).alias("queue_max_b"), pl.col("mean_queue_bytes").alias("queue_mean_b"),
        pl.col("end_queue_bytes").cast(pl.Int64).alias("end_b"))
    n = (t0 + span_us * 1_000_000 - w0) // WINDOW_PS
    out = pl.DataFrame({"k": list(range(n))}, schema={"k": pl.Int64})
    for t in (sent, got, lost, sig_sent, sig_got, q):
        out = out.join(t, on="k", how="left")
    # A window without a port row held the level the previous row ended at.
    held = pl.col("end_b").forward_fill().fill_null(0)
    out = out.with_columns(
        pl.col("queue_max_b").fill_null(held.cast(pl.Int64)), pl.col("queue_mean_b").fill_null(held.cast(pl.Float64)))
    out = out.with_columns(pl.col(c).fill_null(0) for c in ("sent", "got", "lost", "signals_sent", "signals_arrived"))
    return out.select(
        ((pl.col("k") * WINDOW_PS + w0 - t0) / 1e6).alias("t_us"), "queue_max_b", "queue_mean_b",
        (pl.col("sent").cum_sum() - pl.col("got").cum_sum() - pl.col("lost").cum_sum()).alias("inflight_b"),
        pl.col("sent").cum_sum().alias("sent_b"), pl.col("got").cum_sum().alias("delivered_b"), pl.col("lost").cum_sum().alias("dropped_b"),
        "signals_sent", "signals_arrived")


def per_flow(trace: pl.DataFrame, incast: dict[str, Any]) -> pl.DataFrame:
    """Per flow of the incast: when its first SFC signal reached its sender (`signal_us`
    after the incast's start, null if none did within the trace) and the payload its
    sender had started to transmit by then (`sent_before_b`; all it sent if no signal
    came): what the flow put into the network before SFC could stop it."""
    t0 = incast["start_ps"]
    senders = [f"h{s}" for s in incast["srcs"]]
    tr = trace.filter(pl.col("transport") == "incast")
    first = (tr.filter((pl.col("kind") == "sfc") & (pl.col("event") == "arrive") & pl.col("node").str.starts_with("h"))
             .group_by("flow").agg(pl.col("time_ps").min().alias("sig_ps")))
    tx = tr.filter((pl.col("kind") == "data") & (pl.col("event") == "tx") & pl.col("node").is_in(senders)).join(first, on="flow", how="left")
    before = tx.filter(pl.col("sig_ps").is_null() | (pl.col("time_ps") < pl.col("sig_ps")))
    out = pl.DataFrame({"flow": incast["ids"]}, schema={"flow": tr.schema["flow"]})
    out = out.join(first, on="flow", how="left").join(
        before.group_by("flow").agg(pl.col("payload_bytes").cast(pl.Int64).sum().alias("sent_before_b")), on="flow", how="left")
    return out.select("flow", ((pl.col("sig_ps").cast(pl.Int64) - t0) / 1e6).alias("signal_us"),
                      pl.col("sent_before_b").fill_null(0))


def facts(s: pl.DataFrame, flows: pl.DataFrame | None = None) -> dict[str, float | None]:
    """The numbers the explanation rests on: the first signal's send and arrival (µs
    after the incast's start), the bytes in flight then, the peak of the receiver's port
    queue and when, and the largest bytes in flight."""
    def first(col: str) -> float | None:
        r = s.filter(pl.col(col) > 0)
        return float(r["t_us"][0]) if r.height else None

    t_sig, t_arr = first("signals_sent"), first("signals_arrived")
    at = s.filter(pl.col("t_us") == t_arr) if t_arr is not None else None
    peak = s.sort("queue_max_b", descending=True).head(1)
    return {
        "first signal sent us": t_sig,
        "first signal arrived us": t_arr,
        "inflight at first arrival KB": float(at["inflight_b"][0]) / 1e3 if at is not None and at.height else None,
        "peak queue KB": float(peak["queue_max_b"][0]) / 1e3,
        "peak queue at us": float(peak["t_us"][0]),
        "peak inflight KB": float(s["inflight_b"].max()) / 1e3,
        "signals sent": float(s["signals_sent"].sum()),
        "signals arrived": float(s["signals_arrived"].sum()),
        "dropped KB": float(s["dropped_b"].max()) / 1e3,
        "flows signalled": float(flows["signal_us"].is_not_null().sum()) if flows is not None else None,
        "flow signal p50 us": float(flows["signal_us"].median()) if flows is not None and flows["signal_us"].is_not_null().any() else None,
        "sent before signal mean KB": float(flows["sent_before_b"].mean()) / 1e3 if flows is not None else None,
        "sent before signal max KB": float(flows["sent_before_b"].max()) / 1e3 if flows is not None else None,
        "sent before signal sum KB": float(flows["sent_before_b"].sum()) / 1e3 if flows is not None else None,
    }


def plot(ctx: Context, df: pl.DataFrame, f: dict[str, dict[str, float | None]], incast: dict[str, Any]) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    for d in DESIGNS:
        s = df.filter(pl.col("design") == d)
        axes[0].plot(s["t_us"], s["queue_max_b"] / 1e3, color=COLORS[d], lw=1, label=f"{d}: largest in each {WINDOW}")
        axes[0].plot(s["t_us"], s["queue_mean_b"] / 1e3, color=COLORS[d], lw=1, ls=":", label=f"{d}: time-average")
        axes[1].plot(s["t_us"], s["inflight_b"] / 1e3, color=COLORS[d], lw=1, label=d)
    s = df.filter(pl.col("design") == "SFC")
    axes[2].bar(s["t_us"], s["signals_sent"], width=1.0, align="edge", color=COLORS["SFC"], alpha=0.6, label="sent (at the switch)")
    axes[2].bar(s["t_us"], -s["signals_arrived"], width=1.0, align="edge", color="tab:purple", alpha=0.6, label="arrived at a sender (drawn below 0)")
    t_arr = f["SFC"]["first signal arrived us"]
    for ax in axes:
        if t_arr is not None:
            ax.axvline(t_arr, color="k", lw=0.6, ls="--")
    axes[0].set_ylabel("receiver's ToR port\nqueue (KB)")
    axes[1].axhline(len(incast["ids"]) * WINDOW_BYTES / 1e3, color="k", lw=0.6, ls=":")
    axes[1].set_ylabel("incast bytes\nin flight (KB)")
    axes[2].set_ylabel(f"SFC signals\nper {WINDOW}")
    axes[2].set_xlabel(f"time since the incast started (µs); dashed: SFC's first signal reaches a sender; dotted: flows × DCQCN's window")
    for ax in axes:
        ax.legend(fontsize=7, loc="upper right")
    axes[0].set_title(f"{len(incast['ids'])}-to-1 incast into h{incast['dst']} at {incast['start_ps'] / 1e6:.1f} µs "
                      "(benefit experiment, first seed)", fontsize=9)
    fig.tight_layout()
    ctx.save(fig, "lasthop")


def run(ctx: Context, base: list[Job], benefit_messages: pl.DataFrame, warmup_ps: int) -> str:
    """The last-hop section: `base` are the benefit jobs of the first seed (their
    designs' scenarios), `benefit_messages` the messages of one of them (the arrivals are
    every design's)."""
    incast = pick(benefit_messages, warmup_ps)
    mine = [j for j in base if j.params["design"] in DESIGNS]
    js = jobs(mine, incast, ctx.quick)
    span = SPAN_US[ctx.quick]
    frames = []
    f: dict[str, dict[str, float | None]] = {}
    for job, res in zip(js, ctx.run_many(js), strict=True):
        d = job.params["design"]
        if res.trace.height >= MAX_RECORDS:
            raise ValueError(f"{NAME} {d}: the trace reached its {MAX_RECORDS:,} records; raise MAX_RECORDS")
        s = series(res.trace, res.ports, incast, span)
        f[d] = facts(s, per_flow(res.trace, incast) if d == "SFC" else None)
        frames.append(s.with_columns(pl.lit(d).alias("design")))
    df = pl.concat(frames)
    ctx.write_parquet(df, "lasthop")
    plot(ctx, df, f, incast)
    return section(f, incast, span)


def section(f: dict[str, dict[str, float | None]], incast: dict[str, Any], span: int) -> str:
    fan = len(incast["ids"])
    window_kb = WINDOW_BYTES / 1e3
    rows = [[d, fmt(f[d]["first signal arrived us"]), fmt(f[d]["peak inflight KB"], 0),
             f"{fmt(f[d]['peak queue KB'], 0)} at {fmt(f[d]['peak queue at us'])} µs",
             f"{f[d]['signals sent']:,.0f} / {f[d]['signals arrived']:,.0f}", fmt(f[d]["dropped KB"], 0)] for d in DESIGNS]
    sfc, pfc = f["SFC"], f["PFC"]
    return "\n".join([
        "### The ToR last hop over time (one incast)",
        "",
        f"One {fan}-to-1 incast of the first seed (the first to start after the warm-up: at {incast['start_ps'] / 1e6:.1f} µs, "
        f"into h{incast['dst']}), rerun under SFC and PFC to {span} µs after its start with a {WINDOW} per-port window "
        "and a per-frame trace of its flows (`sfc-benefit/lasthop.parquet`, `lasthop.png`; the arrivals are the benefit "
        "run's). Queue: the receiver's ToR port toward the receiver, all traffic through it. In flight: the incast's "
        "payload its senders' NICs have started to send, less what reached the receiver or was dropped. Signals: SFC "
        "signals for the incast's flows, sent by any switch, and their arrivals at the senders. Times are µs after the "
        "incast's start.",
        "",
        table(["design", "first signal at a sender (µs)", "largest in flight (KB)", "peak port queue (KB)",
               "signals sent / arrived", "dropped (KB)"], rows),
        "",
        f"The benefit section's explanation (\"{fan} flows × a {window_kb:.1f} KB window in flight before a signal can "
        f"reach a sender\", up to {fan * window_kb / 1e3:.2f} MB) checked on this incast. When SFC's first signal reached a "
        f"sender ({fmt(sfc['first signal arrived us'])} µs after the start) the incast had "
        f"{fmt(sfc['inflight at first arrival KB'], 0)} KB in flight, against a peak of {fmt(sfc['peak queue KB'], 0)} KB at the "
        f"receiver's port ({fmt(sfc['peak queue at us'])} µs) and {fmt(sfc['peak inflight KB'], 0)} KB in flight at most. But "
        "a signal pauses one flow, so what counts is each flow's bytes before its own first signal: "
        f"{sfc['flows signalled']:.0f} of the {fan} flows were signalled within {span} µs, a flow's first signal reaching its "
        f"sender after p50 {fmt(sfc['flow signal p50 us'])} µs, and before it each flow had sent "
        f"{fmt(sfc['sent before signal mean KB'], 0)} KB on average (at most {fmt(sfc['sent before signal max KB'], 0)} KB), "
        f"{fmt(sfc['sent before signal sum KB'], 0)} KB together ({_share(sfc['sent before signal sum KB'], sfc['peak queue KB'])} "
        "the port's peak). So the mechanism holds — the bytes the flows release before their own signals land at the "
        "last hop — but the per-flow amount is a fraction of DCQCN's window: a flow's own signal reaches it sooner "
        f"than the {WINDOW_BYTES * 8 / 100e9 * 1e6:.0f} µs its window takes at line rate, and its NIC also carries other "
        "flows. Under PFC no signal stops a flow: its in flight reaches "
        f"{fmt(pfc['peak inflight KB'], 0)} KB (the windows' bound is {fan * window_kb:,.0f} KB), while the receiver's port "
        f"peaks at {fmt(pfc['peak queue KB'], 0)} KB: PFC's pauses hold the rest upstream, in the aggregation and core "
        f"tiers. SFC dropped {fmt(sfc['dropped KB'], 0)} KB of this incast at the port (a port alone in the egress pool "
        "may hold about 7.55 MB, the pool's dynamic threshold), PFC "
        f"{fmt(pfc['dropped KB'], 0)} KB.",
    ])


def _share(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}× of" if a is not None and b else "– of"
