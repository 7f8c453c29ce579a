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
            "CUBIC than the abstract's × 1.91 (the table's ratio). Our static baseline is near the slides' 49 % (the "
            "table's first row; `retcp-static`), so the gap is in the reTCP runs. Measured (full mode, the runs' "
            "`summary.json` `tcp`, counted over all 550 weeks): retransmission timeouts, each of which resets a window to one "
            "segment for at least the 1 ms minimum RTO (most of a 1400 µs week), so that a window of one or two segments has "
            "little to double when the signal rises. These runs model RACK-TLP (RFC 8985; etalon's Linux 4.15 hosts had it "
            "on, `docs/model.md`). Without it (`--set transport.rack_tlp=false`) the 16 senders of the τ = 150 µs run take "
            "3,380 timeouts at 8 racks and 10,601 at 25 (static CUBIC: 3,126 and 7,378), and the ratio is × 1.48 at 8 racks, "
            "× 1.56 at 25 (68.3 % over 46.2 %, 64.9 % over 41.6 %). With it they take 2,478 and 8,211 (static CUBIC: 1,872 "
            "and 7,762): tail loss probes (896 and 1,318) and RACK's time-based marks (23,830 and 58,864 segments) repair "
            "losses sooner, and reTCP gains more from that than the static baseline does (8 racks: 68.3 → 74.9 % against "
            "46.2 → 46.8 %; 25 racks: 64.9 → 74.5 % against 41.6 → 46.2 %), so the ratio rises to the table's × 1.60 and "
            "× 1.61: RACK-TLP explains about a quarter of the gap to × 1.91 at 8 racks and a seventh at 25. Most timeouts "
            "remain: they follow losses of whole flights, when a VOQ refuses every frame (cut back to 16 at a circuit's end, "
            "or full), which neither a probe's ACK nor RACK can see. The rest of the gap is not yet explained; etalon's "
            "segmentation offload, its hosts' kernel timers (200 ms minimum RTO, jiffy-granular probe timers) under time "
            "dilation, and its delayed-ACK timer are unmeasured differences.", ""]
    return "\n".join(out)
