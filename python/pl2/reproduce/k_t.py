"""§4.3/§4.4: sweeps of PL2's burst size K and unsolicited threshold t on the 4-sender
incast (12 threads per sender, closed loop); t also with 1 thread per sender (low load
per thread, where the low-load optimisation of §4.4 is active)."""

from __future__ import annotations

import polars as pl

from pl2.reproduce.common import Context, Job, buffer_drops, fmt_ci, kib, max_queue, mean_ci, program_drops, scenario, table

NAME = "k_t"
TITLE = "§4.3/§4.4: sweeps of K and t (4-sender incast)"


def _jobs(ctx: Context, label: str, tcfg: dict, size: int, threads: int, dur: float, warm: float, params: dict) -> list[Job]:
    """One point of a sweep, every seed."""
    wl = {"kind": "persistent", "senders": "0..4", "receiver": 5, "size": f"{size}B", "threads": threads}
    sc = scenario(f"k_t-{label}", {"kind": "pl2", **tcfg}, [wl], warmup_ms=warm, until_ms=dur - 0.2, duration_ms=dur, drop_records=False)
    return [Job(sc, {"figure": NAME, **params}, seed, NAME) for seed in ctx.seeds]


def _row(job: Job, s: dict) -> dict:
    """One run's row: the point's parameters (without the figure) and its numbers."""
    st = s.get("pl2") or {}
    sw = st.get("switch") or {}
    lat = (s.get("messages") or {}).get("latency_ps") or {}
    params = {k: v for k, v in job.params.items() if k != "figure"}
    return {
        **params, "seed": job.seed,
        "goodput_gbps": float(s["goodput_gbps"].get("h5", 0.0)),
        "buffer_drops": buffer_drops(s), "program_drops": program_drops(s), "max_queue_bytes": max_queue(s),
        "latency_p99_us": lat["p99"] / 1e6 if lat.get("p99") is not None else None,
        "unsolicited_bursts": st.get("unsolicited_bursts", 0), "bursts": st.get("bursts", 0),
        "unrecovered_packets": sw.get("unsolicited_unrecovered_packets", 0), "drift_packets": sw.get("counter_drift_packets", 0),
    }


def _agg(df: pl.DataFrame, keys: list[str]) -> list[dict]:
    out = []
    for k, g in df.group_by(keys, maintain_order=True):
        out.append(dict(zip(keys, k)) | dict(
            good=mean_ci(g["goodput_gbps"].to_list()), bd=int(g["buffer_drops"].sum()), pd=int(g["program_drops"].sum()),
            q=int(g["max_queue_bytes"].max()), p99=mean_ci(g["latency_p99_us"].to_list()),
            uns=f"{int(g['unsolicited_bursts'].sum())}/{int(g['bursts'].sum())}",
            unrec=int(g["unrecovered_packets"].sum()), drift=int(g["drift_packets"].sum()),
        ))
    return out


def run(ctx: Context) -> str:
    dur, warm = (2.0, 0.2) if ctx.quick else (11.2, 1.0)
    ks = [1, 2, 4, 16] if ctx.quick else [1, 2, 4, 8, 16]
    ts = [5, 15, 35] if ctx.quick else [5, 10, 15, 25, 35]
    kjobs: list[Job] = []
    for dec in ("ingress", "dequeue"):
        for size in (6000, 65536):
            for k in ks:
                kjobs += _jobs(ctx, f"k{k}-{size}-{dec}", {"k": k, "t": 15, "decrement_at": dec}, size, 12, dur, warm,
                               {"decrement_at": dec, "size": size, "k": k})
    tjobs: list[Job] = []
    for threads in (12, 1):
        for t in ts:
            tjobs += _jobs(ctx, f"t{t}-{threads}thr", {"k": 4, "t": t}, 6000, threads, dur, warm, {"threads": threads, "t": t})
    # Both sweeps in one batch; a result is loaded only when its row is made.
    rows = [_row(job, res.summary) for job, res in zip(kjobs + tjobs, ctx.run_many(kjobs + tjobs), strict=True)]
    kdf, tdf = pl.DataFrame(rows[:len(kjobs)]), pl.DataFrame(rows[len(kjobs):])
    ctx.write_parquet(kdf, "k_sweep")
    ctx.write_parquet(tdf, "t_sweep")
    ka = _agg(kdf, ["decrement_at", "size", "k"])
    ta = _agg(tdf, ["threads", "t"])

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(12, 4))
    for dec, ls in (("ingress", "-"), ("dequeue", "--")):
        for size, c in ((6000, "tab:blue"), (65536, "tab:orange")):
            pts = [a for a in ka if a["decrement_at"] == dec and a["size"] == size]
            ax[0].plot([a["k"] for a in pts], [max(a["q"], 1) / 1024 for a in pts], ls=ls, color=c, marker="o", label=f"{size} B, decrement at {dec}")
    ax[0].axhline(1_500_000 / 1024, color="k", ls=":", lw=0.8, label="port limit")
    ax[0].axvline(4, color="tab:green", lw=0.8, label="paper: K = 4 best")
    ax[0].set_xscale("log", base=2)
    ax[0].set_yscale("log")
    ax[0].set_xlabel("K (packets per burst)")
    ax[0].set_ylabel("max queue at s0→h5 (KiB)")
    ax[0].set_title("(a) K sweep")
    ax[0].legend(fontsize=7)
    for threads, c in ((12, "tab:blue"), (1, "tab:red")):
        pts = [a for a in ta if a["threads"] == threads]
        ax[1].plot([a["t"] for a in pts], [a["bd"] + 1 for a in pts], color=c, marker="o", label=f"{threads} thread(s)/sender: buffer drops + 1")
    ax[1].axvspan(10, 25, color="tab:green", alpha=0.15, label="paper: robust 10–25")
    ax[1].axvline(35, color="tab:red", lw=0.8, ls="--", label="paper: loss at 35")
    ax[1].set_yscale("log")
    ax[1].set_xlabel("t (slots)")
    ax[1].set_ylabel("buffer drops + 1 (all seeds)")
    ax[1].set_title("(b) t sweep, 6000 B")
    ax[1].legend(fontsize=7)
    fig.suptitle(f"§4.3/§4.4: K and t on the 4-sender incast ({len(ctx.seeds)} seed(s))", fontsize=10)
    fig.tight_layout()
    ctx.save(fig, "k_t")

    k4 = [a for a in ka if a["decrement_at"] == "ingress" and a["size"] == 6000]
    small = [a for a in k4 if a["k"] < 4]
    t12 = [a for a in ta if a["threads"] == 12]
    t1 = [a for a in ta if a["threads"] == 1]
    ge4 = [a for a in k4 if a["k"] >= 4]
    g4 = next((a["good"][0] for a in k4 if a["k"] == 4), None)
    ctx.claim("K = 4 is best: smaller K loses throughput (goodput at K < 4 at least 2 % below K = 4's)", "K = 4",
              ", ".join(f"K = {a['k']}: {fmt_ci(*a['good'])} Gbps" for a in k4 if a["k"] <= 4),
              all((a["good"][0] or 0.0) < 0.98 * g4 for a in small) if small and g4 else None)
    ctx.claim("K ≥ 4 keeps the queue bounded (no buffer drop, 6000 B, Algorithm 1)", "bounded",
              f"{sum(a['bd'] for a in ge4)} drops", sum(a["bd"] for a in ge4) == 0)
    robust = [a for a in ta if 10 <= a["t"] <= 25]
    ctx.claim("t is robust from 10 to 25 (no buffer drop, both thread counts)", "no loss",
              f"{sum(a['bd'] for a in robust)} drops", sum(a["bd"] for a in robust) == 0)
    at35 = [a for a in ta if a["t"] == 35]
    ctx.claim("t = 35 loses packets", "loss", f"{sum(a['bd'] for a in at35)} drops" if at35 else "not swept",
              sum(a["bd"] for a in at35) > 0 if at35 else None)
    md = [
        "Paper: §4.3 K = 4 is best (smaller K loses throughput to per-exchange overhead, larger K coarsens the schedule); "
        "§4.4 t is robust from 10 to 25, with loss at 35. Goodput mean ± 95% interval over seeds; drops summed over seeds.",
        "",
        "K sweep (t = 15, 12 threads per sender):",
        "",
        table(["decrement", "size B", "K", "goodput Gbps", "max queue KiB", "buffer drops", "program drops", "p99 µs"],
              [[a["decrement_at"], a["size"], a["k"], fmt_ci(*a["good"]), kib(a["q"]), a["bd"], a["pd"], fmt_ci(*a["p99"], digits=1)] for a in ka]),
        "",
        "t sweep (K = 4, 6000 B; 12 threads per sender, then 1):",
        "",
        table(["threads", "t", "goodput Gbps", "max queue KiB", "buffer drops", "program drops", "unsolicited/bursts", "unrecovered pkts", "drift pkts"],
              [[a["threads"], a["t"], fmt_ci(*a["good"]), kib(a["q"]), a["bd"], a["pd"], a["uns"], a["unrec"], a["drift"]] for a in ta]),
        "",
        "**Where we differ and why.**",
        f"- **K:** K < 4 overflows the port under Algorithm 1's ingress decrement ({', '.join('K = %d: %d drops, %d packets of counter drift' % (a['k'], a['bd'], a['drift']) for a in small)} "
        "with 6000 B, summed over seeds) and is bounded when decrementing at dequeue; K ≥ 4 is bounded either way. The "
        "overflow is start-up drift, as in Fig. 9's two-sender incast: 4 × 12 threads × K ≤ T = 128 reserved slots let "
        "the first unsolicited bursts pass the T rule, they are resent, and the resent packets decrement the counters a "
        "second time (all of it in the first 50 µs); with K ≥ 4 the start-up backlog (192 slots) exceeds T and the T rule "
        "drops them instead (the program drops). The drift fix `suppress_excess_decrements` or the low-load optimisation "
        "off removes the loss (experiments/zero_loss/results.md). We do not see the paper's "
        "throughput loss at small K: the model has no per-exchange host cost. \"K = 4 best\" is reproduced only in the sense "
        "that K < 4 loses packets under Algorithm 1. With 6000 B messages (4 packets) K ≥ 4 gives identical bursts; the "
        "64 KiB rows show K on longer messages.",
        f"- **t, 12 threads per sender:** the load keeps the chosen slot ≥ t, so t hardly matters "
        f"({', '.join(a['uns'] for a in t12)} unsolicited bursts for t = {', '.join(str(a['t']) for a in t12)}; "
        f"{sum(a['bd'] for a in t12)} buffer drops). The paper's loss at t = 35 does not appear.",
        f"- **t, 1 thread per sender** (~190 % offered, bursts mostly unsolicited): buffer drops "
        f"{', '.join('t = %d: %d' % (a['t'], a['bd']) for a in t1)}. The T rule (T = 128) reads the same counters that do not "
        "see the queue, so the port overflows " + ("at every t swept" if all(a["bd"] for a in t1) else "at the t with drops above")
        + " here, not only at 35 as in the paper.",
    ]
    return "\n".join(md)
