"""Polo slides, "Intermediate link is the bottleneck": N senders to one receiver across a
core link of 1 Gbps of which a 200 Mbps UDP background takes 200 Mbps; goodput and p99
flow completion time as N grows, Polo against Homa, NDP and pHost."""

from __future__ import annotations

from pl2.reproduce.common import Context, table
from pl2.reproduce.polo import incast
from pl2.reproduce.polo.common import DESIGNS

NAME = "polo-core"
TITLE = "Polo: the core link is the bottleneck (1 Gbps, 200 Mbps background, RTT 50 µs, 86 KB)"


def senders(quick: bool) -> list[int]:
    return [8, 32] if quick else [4, 8, 16, 32, 64, 128]


def rounds(quick: bool) -> int:
    return 2 if quick else 10


def run(ctx: Context) -> str:
    designs = list(DESIGNS)
    ns = senders(ctx.quick)
    js = incast.jobs(ctx, NAME, "core", designs, ns, rounds(ctx.quick))
    df = incast.rows(ctx, js)
    ctx.write_parquet(df, "core")
    agg = incast.aggregate(df)
    avail = incast.available_bps("core") / 1e6
    incast.plot(ctx, agg, designs, ns, "core", "Core bottleneck: N senders → 1 receiver over a 1 Gbps core link with 200 Mbps background", avail)
    share = [agg[("Polo", n)]["good"][0] / agg[("Polo", n)]["bound"] for n in ns]
    ctx.claim("Polo's goodput stays close to the available bandwidth as N grows (at least 90 % of its bound)", "close to full",
              f"{min(share):.0%}–{max(share):.0%} of the bound", min(share) >= 0.9)
    polo, ph = agg[("Polo", ns[-1])], agg[("pHost", ns[-1])]
    close = not polo["p99_inf"] and not ph["p99_inf"] and abs(polo["p99"][0] - ph["p99"][0]) <= 0.25 * ph["p99"][0]
    ctx.claim(f"Polo's p99 close to pHost's (within 25 %, N = {ns[-1]})", "close", f"Polo {incast.p99s(polo)}, pHost {incast.p99s(ph)}", close)
    return section(agg, designs, ns, rounds(ctx.quick), avail)


def section(agg: dict, designs: list[str], ns: list[int], r: int, avail: float) -> str:
    big = ns[-1]
    polo = agg[("Polo", big)]
    ph = agg[("pHost", big)]
    share = [agg[("Polo", n)]["good"][0] / agg[("Polo", n)]["bound"] for n in ns]
    md = [
        f"Setting: N senders on switch s0, the receiver on s1, the s0–s1 link 1 Gbps shared with a 200 Mbps UDP flow "
        f"(host links 5 µs, core link 15 µs); {r} synchronised rounds in which every sender sends one 100 KB flow, the "
        "next round once the receiver has every flow (`ps_shuffle`, global barrier). Goodput: payload of the completed "
        "rounds over their summed durations (mean ± 95% interval over seeds); p99: nearest-rank p99 of the flows' "
        "completion times per seed, then the mean over seeds (a p99 that falls on an unfinished flow is ∞). Bound: "
        "the bandwidth the background left (1 Gbps − 200 Mbps × the share of its frames delivered during the rounds, "
        "column *background delivered*: UDP never resends, so a design whose queue fills the shared priority-0 FIFO takes "
        "bandwidth from it) × payload / wire bytes per data packet (Polo: its adjoint packet too). Counters summed over "
        "seeds; max queue is the largest any port reached.",
        "",
        table(incast.HEAD, incast.table_rows(agg, designs, ns)),
        "",
        "| slide claim | ours |",
        "|---|---|",
        f"| \"With the number of senders increasing, Polo still has goodput close to full available bandwidth\" | "
        f"Polo's goodput is {min(share):.0%}–{max(share):.0%} of its bound ({agg[('Polo', ns[0])]['bound']:.0f} Mbps) for "
        f"{ns[0]}–{big} senders; at {big}: Polo {polo['good'][0]:.0f}, Homa {agg[('Homa', big)]['good'][0]:.0f}, "
        f"NDP {agg[('NDP', big)]['good'][0]:.0f}, pHost {ph['good'][0]:.0f} Mbps |",
        "| (not in the slides) what the designs leave the background | share of the background's frames delivered at "
        f"{big} senders: " + ", ".join(f"{d} {agg[(d, big)]['bg']:.3f}" if agg[(d, big)]["bg"] is not None else f"{d} – (no round done)" for d in designs) + ": a design whose data fills "
        "the priority-0 FIFO of the core port (NDP up to its 72 KB data limit, Homa and pHost up to the port limit) "
        "drops the UDP background's frames, which are never resent, and takes their bandwidth; Polo keeps the queue "
        "near its ECN threshold (polo-queue) and leaves it |",
        f"| \"99th percentile tail latency is close to pHost\" | at {big} senders: Polo "
        f"{incast.p99s(polo)}, pHost {incast.p99s(ph)}, Homa {incast.p99s(agg[('Homa', big)])}, NDP {incast.p99s(agg[('NDP', big)])} |",
    ]
    md += ["", *incast.why_text(agg, designs, ns)]
    return "\n".join(md)
