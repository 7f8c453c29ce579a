"""reTCP slides 13-14: static VOQ capacities 4 … 128 packets under CUBIC; average circuit
utilisation and median / p99 packet latency."""

from __future__ import annotations

from pl2.reproduce.common import Context
from pl2.reproduce.retcp import sweep
from pl2.reproduce.retcp.common import ETALON_RACKS, RACKS

NAME = "retcp-static"
TITLE = "reTCP: static VOQ capacities, CUBIC (slides 13-14)"
CAPS = [4, 8, 16, 32, 64, 128]
#: Slide 13's bars.
SLIDES = {"4": 21.0, "8": 31.0, "16": 49.0, "32": 77.0, "64": 100.0, "128": 100.0}


def run(ctx: Context) -> str:
    out = []
    for racks in (RACKS, ETALON_RACKS):
        pts = [(f"{c}", {"cc": "cubic", "capacity": c, "racks": racks}) for c in CAPS]
        name = f"{NAME}-{racks}racks"
        df = sweep.run_points(ctx, name, pts)
        labels = [p[0] for p in pts]
        sweep.plot(ctx, df, labels, SLIDES, name, "static VOQ capacity (packets)", f"Static buffers, CUBIC, {racks} racks")
        if racks == ETALON_RACKS:
            sweep.util_claim(ctx, df, labels, SLIDES, "static VOQs: circuit utilisation 21, 31, 49, 77, 100, 100 % for 4–128 "
                             "packets (CUBIC, etalon's 25 racks; each within 10 points)", "21–100 %")
        out += [f"**{racks} racks** ({'the issue' if racks == RACKS else 'etalon as run for the slides'}):", "",
                sweep.result_table(df, labels, {k: f"{v:.0f}" for k, v in SLIDES.items()}, "VOQ capacity (packets)"), ""]
    out += ["In every run with 8 packets or more the packet network carries the same 8.6 Gbps (8 racks) or 9.5 Gbps (25 racks: a pair's circuit is "
            "up 1/24 of the time instead of 1/7, so its VOQ spends longer on the packet uplink alone) of payload: the "
            "10 Gbps uplink less frame and ACK overhead; utilisation differs only by what the circuit carries in its 180 µs. "
            "Latency is set by the VOQ's capacity: a full VOQ of C frames of 9000 B drains at 10 Gbps in C × 7.2 µs, which "
            "the p99 column follows (16 frames: 115 µs + 20 µs of path), as etalon's log does (16 frames: p99 139 µs). With "
            "4-packet VOQs the packet network too is left idle at times (its column).", "",
            "Differences from the slides, measured (etalon's 25 racks): 21, 31, 49, 83, 99, 99 % against the slides' 21, 31, "
            "49, 77, 100, 100 %; at 16 packets 48.7 % and a median latency of 122 µs against etalon's log, 48.7 % and 123 µs "
            "(`graphs/nsdi2020/1581462196-nsdi2020.txt:20, 27`). An earlier version of the family, with the night packet "
            "path open, gave 26, 36, 55, 88, 99, 99 % (16 packets: 55.3 %, median 112 µs). The difference was etalon's night: its RunSchedule turns off, during every "
            "night, the packet path of the pair whose circuit comes next, and turns it on again only when that pair's day ends "
            "(click-etalon `elements/standard/run_schedule.cc:398-415, 522-529`), which pl2 models as `night_packet_path = "
            "\"closed\"` and the family now sets (`night_closed`). On top of every other setting it moves static 16-packet "
            "CUBIC from 53.4 to 48.7 %, its median latency from 110 to 122 µs and its VOQ drops from 45,892 to 41,854 (the gap "
            "table of `retcp-dynamic-retcp`, 'all' against 'all but night_closed'); how the 20 µs without a drain before "
            "each day lowers the circuit's share was not taken apart further. The host factors measured there move static "
            "16-packet CUBIC by at most 2.2 points each: Linux's CUBIC (`tcp_cubic.c` on the hosts' kernel clock: −1.1 "
            "against RFC 9438's, of which its α alone −0.5), RTO form (−1.0) and probe-timeout floor (−0.4; these three in "
            "the family, as etalon's hosts had them), segmentation offload (+0.8), 2-segment TSO units (+2.2) and receive "
            "offload (GRO, off as etalon's NICs had nothing to merge; its brackets −0.1 and −2.0); only turning delayed ACKs "
            "off, which etalon's hosts did not, moves it more (+4.6). The hosts' qdiscs (netem's default limit and pfifo_fast's txqueuelen, 1000 packets each) cannot "
            "bind: a host's backlog is bounded by its one flow's bytes in flight, at most 197,120 B (22 segments) in a "
            "110-week run of the 16-packet point with TCP probes on. Still above the slides: 32 packets, 83 % against 77 % "
            "at 25 racks (within the claim's 10 points; 78 % at 8 racks); Linux's CUBIC leaves it where RFC 9438's CUBIC "
            "with Linux's α had it (82.7 against 82.6 %, seed 1): not explained.", ""]
    return "\n".join(out)
