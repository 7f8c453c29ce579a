"""Figs. 5–6: memcached throughput and latency with competing UDP background traffic
(§6.2.2). The paper runs memcached over VMA TCP (Cubic without PL2, TCP over PL2 with
it) beside a UDP background (no congestion control, over PL2 in the PL2 case). A pl2
scenario has one transport for all its traffic, so TCP memcached beside UDP background
cannot be run; this module approximates it two ways, labelled as such:

- *UDP for everything* (`udp`, `udp/pl2`, `udp/pl2 dequeue+improved`): the background is
  exactly the paper's (UDP, no congestion control, raw or over PL2), and memcached runs
  over UDP too (memcached has a UDP protocol, but the paper used TCP): a lost request or
  response is never resent, so its connection stalls for good.
- *TCP without congestion control for everything* (`tcp no-cc`, no PL2): memcached is
  over TCP as in the paper (losses are repaired by retransmission timeouts), and the
  background has no congestion control, as UDP, but is TCP (it retransmits what it loses
  and sends ACKs).

Setup in `pl2.reproduce.memcached`.
"""

from __future__ import annotations

import math

from pl2.reproduce import memcached as mc
from pl2.reproduce.common import Context

NAME = "fig5_6"
TITLE = "Figs. 5–6 (§6.2.2): memcached with UDP background into the client, without and with PL2 (one transport per run: approximated)"
SCHEMES = {
    "udp": {"kind": "raw", "headers": "udp"},
    "tcp no-cc": {"kind": "tcp", "cc": "none"},
    "udp/pl2": {"kind": "pl2", "headers": "udp", **mc.PL2},
    "udp/pl2 dequeue+improved": {"kind": "pl2", "headers": "udp", **mc.PL2_FIXED},
}
COLORS = {"udp": "tab:green", "tcp no-cc": "tab:olive", "udp/pl2": "tab:red", "udp/pl2 dequeue+improved": "tab:orange"}
PAPER = {
    ("udp", 2): "3–7 tps, p99 ~s",
    ("udp", 4): "3–7 tps, p99 5 s",
    ("tcp no-cc", 4): "3–7 tps, p99 5 s",
    ("udp/pl2", 4): "p99 25 µs; bg 75–90 Gbps",
    ("udp/pl2", 2): "bg 75–90 Gbps",
}


def run(ctx: Context) -> str:
    df = mc.sweep(ctx, NAME, SCHEMES)
    ctx.write_parquet(df, NAME)
    return plot_and_report(ctx, df)


def plot_and_report(ctx: Context, df) -> str:  # type: ignore[no-untyped-def]
    agg = mc.aggregate(df)
    schemes = [s for s in SCHEMES if any(k[0] == s for k in agg)]
    seeds = df["seed"].n_unique()
    mc.plot(ctx, agg, schemes, COLORS, NAME,
            f"Figs. 5–6: memcached (8 GETs outstanding, 4 KiB values) vs n hosts × 4 threads of 64 KiB UDP into the client; "
            f"one transport per run ({seeds} seed(s))", background_panel=True,
            paper_band=(75, 90, "paper, PL2: 75–90 Gbps"))
    ns = sorted({n for _, n in agg})
    top = ns[-1]
    md = [
        "pl2 runs one transport per scenario, so the paper's TCP memcached beside a UDP background is approximated: "
        "`udp*` run everything over UDP (the background exactly as the paper's, memcached over UDP, where a lost message is "
        "never resent); `tcp no-cc` runs everything over TCP without congestion control (memcached over TCP as in the "
        "paper, the background without congestion control but retransmitting). " + mc.setup_text(),
        "",
        mc.results_table(agg, PAPER),
        "",
        "**Beside the paper, and where we differ.**",
    ]

    def a(s: str, n: int):  # type: ignore[no-untyped-def]
        return agg.get((s, n))

    heavy = [n for n in ns if n >= 2]
    for scheme in ("udp", "tcp no-cc"):
        cells = [(n, a(scheme, n)) for n in heavy if a(scheme, n)]
        if not cells:
            continue
        desc = "; ".join(f"{n} hosts: {x['tps'][0] * 1e3:.0f} transactions/s, p99 {mc._fmt_lat(x['p99'])} µs, "
                         f"{x['drops']} drops" for n, x in cells)
        md.append(f"- Without PL2, `{scheme}`, from 2 background hosts on (paper: 3–7 transactions/s, p99 of seconds): {desc}.")
    udp = [a("udp", n) for n in heavy if a("udp", n)]
    if udp and all(x["tps"][0] == 0 for x in udp):
        last = max((x["last"] for x in udp if x["last"] is not None), default=None)
        md.append("- Over UDP the loss is permanent: each of the 8 connections stops at its first lost request or response, "
                  + (f"the last response arriving at {last:.0f} µs, " if last is not None else "")
                  + "so no RPC runs in the window (the paper: \"the memcached benchmark does not complete\"). The paper's "
                  "3–7 transactions/s and 5 s p99 come from TCP's retransmission timeouts backing off, which UDP does not "
                  "have; our runs last ms, so a 5 s timeout cannot appear in them (TCP's minimum RTO here is 1 ms).")
    nocc = [(n, x) for n in heavy if (x := a("tcp no-cc", n))]
    if nocc:
        desc = "; ".join(f"{n} hosts: {x['finished']} of {x['rpcs']} RPCs started in the window finished, background "
                         f"{x['bg'][0]:.1f} Gbps, {x['retx']} retransmissions, {x['rto']} timeouts" for n, x in nocc)
        md.append("- `tcp no-cc` (TCP memcached, a background without congestion control that retransmits), over all "
                  f"seeds: {desc}. Unlike UDP's, this background's own goodput collapses under the losses it causes "
                  "(no congestion control, and every loss resent into the same full port), and an RPC that loses a "
                  "segment waits for retransmission timeouts (≥ 1 ms, doubling); some do not finish by the end, so p99 is ∞.")
    for scheme in ("udp/pl2", "udp/pl2 dequeue+improved"):
        x = a(scheme, top)
        if x:
            md.append(f"- `{scheme}` at {top} hosts: p99 {mc._fmt_lat(x['p99'])} µs, p50 {mc._fmt_lat(x['p50'])} µs "
                      f"(paper 25 µs p99), {x['tps'][0]:.0f} k transactions/s, {x['drops']} drops, background "
                      f"{x['bg'][0]:.1f} Gbps into the client (paper: PL2 holds it at 75–90 Gbps from 2 to 4 hosts).")
    pl, fix = a("udp/pl2", top), a("udp/pl2 dequeue+improved", top)
    if pl and fix and pl["drops"] > fix["drops"]:
        md.append(f"- PL2 with Algorithm 1 as written lost {pl['drops']} frames at {top} hosts against {fix['drops']} with "
                  "decrement at dequeue + improved admission: the low-load optimisation lets the background's unsolicited "
                  "bursts past a T rule that, with the decrement at ingress, does not see the queue they build (as in "
                  "Figs. 3–4 and 8). Over UDP every lost memcached message stalls its connection, so "
                  + ("Algorithm 1 as written does not protect memcached here, while the variant does."
                     if math.isinf(pl["p99"][0] or 0.0) and not math.isinf(fix["p99"][0] or 0.0) else
                     "the losses show in the tail."))
    fix0 = a("udp/pl2 dequeue+improved", 0)
    if fix0 and fix:
        md.append(f"- With PL2 the transactions/s fall from {fix0['tps'][0]:.0f} k (no background) to {fix['tps'][0]:.0f} k "
                  f"at {top} hosts (dequeue+improved): the responses share the client's downlink, which PL2 splits among "
                  "the senders, rather than being lost (paper: throughputs similar to the TCP-background experiment).")
    return "\n".join(md)
