"""reTCP with dynamic buffers (slides 26-31; abstract: utilisation × 1.91, tail latency
× 1.20 over static 16-packet buffers): τ from 0 to 300 µs, the same τ for the VOQ resize
and the circuit-state signal, beside static 16-packet CUBIC."""

from __future__ import annotations

from pl2.reproduce.common import Context
from pl2.reproduce.retcp import sweep
from pl2.reproduce.retcp.common import ETALON_RACKS, RACKS

NAME = "retcp-dynamic-retcp"
TITLE = "reTCP: reTCP with dynamic buffers, τ 0-300 µs (abstract: ×1.91 utilisation, ×1.20 tail latency)"


def taus(quick: bool) -> list[int]:
    return [0, 150, 300] if quick else list(range(0, 301, 50))


def run(ctx: Context) -> str:
    out = []
    for racks in (RACKS, ETALON_RACKS):
        pts = [("static-16 cubic", {"cc": "cubic", "capacity": 16, "racks": racks})]
        pts += [(str(t), {"cc": "retcp", "resize": (t, 16, 50), "signal_lead_us": t, "racks": racks}) for t in taus(ctx.quick)]
        name = f"{NAME}-{racks}racks"
        df = sweep.run_points(ctx, name, pts)
        labels = [p[0] for p in pts]
        sweep.plot(ctx, df, labels, {}, name, "τ (µs)", f"reTCP + dynamic buffers 16 → 50, {racks} racks")
        base_u, base_p99 = sweep.mean_of(df, labels[0], "util"), sweep.mean_of(df, labels[0], "p99_us")
        u150, p150 = sweep.mean_of(df, "150", "util"), sweep.mean_of(df, "150", "p99_us")
        ratio = (f"at τ = 150 µs: utilisation × {u150 / base_u:.2f}, p99 latency × {p150 / base_p99:.2f} over static "
                 "16-packet CUBIC (abstract: × 1.91, × 1.20)") if base_u and base_p99 and u150 and p150 else "ratios: –"
        if racks == ETALON_RACKS and base_u and base_p99 and u150 and p150:
            ctx.claim("reTCP with dynamic buffers (τ = 150 µs) raises utilisation × 1.91 over static 16-packet CUBIC "
                      "(etalon's 25 racks; ±15 %)", "× 1.91", f"× {u150 / base_u:.2f}", abs(u150 / base_u - 1.91) <= 0.15 * 1.91)
            ctx.claim("… at a tail latency cost of × 1.20 (p99; ±15 %)", "× 1.20", f"× {p150 / base_p99:.2f}",
                      abs(p150 / base_p99 - 1.20) <= 0.15 * 1.20)
        out += [f"**{racks} racks**: {ratio}.", "", sweep.result_table(df, labels, {}, "τ (µs)"), ""]
    out += ["Not fully explained: at τ = 150 µs reTCP with dynamic buffers gains less utilisation over static 16-packet "
            "CUBIC than the abstract's × 1.91 (the table's ratio). Our static baseline is close to the slides' (46 % against "
            "49 % at 8 racks), so the gap is in the reTCP runs. One measured limit (quick mode, 8 racks, 25 weeks, "
            "`summary.json` `tcp`): the 16 senders take 153 retransmission timeouts (static CUBIC: 161; CUBIC with VOQs "
            "always at 50: 57); each resets a window to one segment for at least the 1 ms minimum RTO, most of a 1400 µs "
            "week, and a window of one or two segments has little to double when the signal rises (a sender's cwnd probe "
            "reads 1 segment before and 4 segments during the week-10 circuit). pl2's TCP has no tail loss probe or RACK "
            "(`docs/model.md`), which Linux hosts in etalon had; we have not measured how much of the gap that explains.", ""]
    return "\n".join(out)
