"""The reTCP family's shared settings (issue 23; Mukerjee et al., "Adapting TCP for
Reconfigurable Datacenter Networks", NSDI 2020, slides in
`../shared/seeds/002_481dd45c4473cc50.txt`): the hybrid network of the slides and of the
authors' emulator etalon, the 16 long-lived flows, and the two measures the slides plot
(etalon's definitions, `docs/model.md` "Reconfigurable networks").

Every choice the slides leave open is a constant here, stated in the family's report:

- 8 racks of 16 hosts; packet network 10 Gbps, 5 µs ToR to ToR; circuit network 80
  Gbps, 30 µs; 9000 B MTU (etalon `etc/python_config.py:64-76`). Round-robin schedule,
  180 µs days, 20 µs nights: one circuit per rack pair per 1400 µs week. Frames in flight
  at night delivered. A pair's packet path is off from the night before its day until the
  day ends (`night_closed`: etalon's RunSchedule, click-etalon
  `elements/standard/run_schedule.cc:398-415, 522-529`).
- Hosts send at 40 Gbps (etalon's hosts: `etc/python_config.py:17` DATA_RATE_Gbps_TDF = 40 /
  TDF, a netem rate on each container, `experiments/common.py:481-483`): with `tso` that is
  the offload's shaper on an 800 Gbps host link (etalon's 40 Gbps NIC in emulated time),
  without it the host link's rate; links 100 ns. Switch
  pipelines 0 (etalon's switch is one software element whose delays are the links'),
  store and forward; the switches' shared buffers are large (64 MB) so that a VOQ is the
  only place a frame can be dropped.
- Hosts: pl2's TCP (SACK, RACK-TLP, delayed ACKs every second segment, initial window
  10) with etalon's segmentation offload: TSO/GSO units of up to 64 KiB timed whole by a
  40 Gbps shaper (each container's netem rate), then sent back to back by etalon's 40 Gbps
  NIC, 800 Gbps in emulated time (`host.offload`; etalon turns no offload off, see
  `docs/model.md`). RACK-TLP because
  etalon's hosts ran Linux 4.15 (Ubuntu 4.15.0-50, etalon `bin/kernel_install.sh:38`),
  whose defaults have it on (`tcp_recovery` = 1: RACK beside the duplicate-ACK rules;
  `tcp_early_retrans` = 3: tail loss probes), and etalon's scripts change neither. DCTCP
  as 4.15's `tcp_dctcp.c` runs it (`dctcp_linux`): a mark starts the kernel's CWR state, in
  which Proportional Rate Reduction carries the window down to cwnd · (1 − α/2) over the next
  window of data and the window does not grow; α in the kernel's integers; and a loss cuts
  the window by α/2 as a mark does (`dctcp_loss = "alpha"`).
  Linux's timers in emulated time: etalon dilates time by TDF = 20 (`etc/python_config.py:11`)
  with libVT, a user-space interposition library (etalon `README.md:136-137`), so the
  hosts' kernels keep real time: the 200 ms minimum RTO is 10 ms of emulated time, the
  40 ms delayed-ACK timer (TCP_ATO_MIN) 2 ms, the 10 ms floor under the tail loss probe's
  timeout 500 µs (`linux_pto`). Linux's RTO form, SRTT + max(4·RTTVAR, minimum)
  (`linux_rto`), and CUBIC as Linux 4.15's `tcp_cubic.c` runs it (`linux_cubic`,
  `cubic_linux`): integer windows, Linux's Reno-friendly α, and its step recomputed at most
  once per HZ/32 jiffies of the hosts' undilated kernel clock (HZ 250: a 4 ms jiffy, 200 µs
  emulated), so after each reduction the window holds for 1.4-1.6 ms of emulated time.
- Fast recovery by Proportional Rate Reduction (`linux_prr`, RFC 6937): Linux has reduced
  the window over the recovery's ACKs instead of at once since 3.2 (`tcp_cwnd_reduction`).
- Reno as Linux 4.15's `tcp_cong.c` runs it (`linux_reno`, `reno_linux`), for Reno and for
  reTCP's Reno base (the authors' module calls `tcp_reno_cong_avoid` and names
  `tcp_reno_ssthresh`, etalon `reTCP/retcp.c`): whole-segment windows, ssthresh = half of
  cwnd after a loss (RFC 5681 halves the flight, which after reTCP's jump down is up to
  twice cwnd), and reTCP's jumps on whole segments.
- Resized VOQs drop the frames beyond a shrunk capacity at the shrink (`shrink_drop`):
  etalon's schedule runner resizes its Click queues through `resize_capacity`
  (`elements/standard/run_schedule.cc:501-520`), whose `SimpleQueue::live_reconfigure`
  kills the frames the smaller capacity leaves out (`elements/standard/simplequeue.cc:66-96`).
- etalon's circuit-state signal (`signal_timing = "recompute"`, click-etalon
  `elements/standard/run_schedule.cc:439-481`), and, for the 25-rack runs, etalon's "fake
  strobe" (`experiments/click_common.py:186-215`): 3 real racks, the measured pair's
  circuit one day in 24, the reverse pair's (the ACKs' path) in the 23 others.
- Each of these etalon settings is a switch (`SETTINGS`); `results/retcp/report.md` measures
  what each changes ("The gap to the abstract").
- 16 flows, host i of rack 0 to host i of rack 1, each a closed loop of 1 GB messages
  (never finishing within the run): long-lived.
"""

from __future__ import annotations

from typing import Any

from pl2.scenario import Scenario

#: Racks of the issue's setting (a 1400 µs week), and of the emulator as the slides' runs
#: used it (etalon `experiments/buffers/nsdi2020_graphs.py:39` NUM_RACKS_FAKE = 25: a
#: "fake strobe" over 25 racks, a 4800 µs week, passed as `num_racks` to every
#: utilisation plot, lines 246, 276, 364, 425, 473, 534).
RACKS = 8
ETALON_RACKS = 25
HOSTS_PER_RACK = 16
DAY_US = 180
NIGHT_US = 20


def week_us(racks: int) -> int:
    return (racks - 1) * (DAY_US + NIGHT_US)


CIRCUIT_BPS = 80e9
PACKET_BPS = 10e9
MTU = 9000
#: Measured and warm-up weeks (full; quick).
WEEKS = {False: (500, 50), True: (20, 5)}
FLOWS = 16
SRC_RACK, DST_RACK = 0, 1


#: etalon's settings the family runs with (module doc): host links 40 Gbps, Linux's timers
#: in emulated time, etalon's recomputed circuit-state signal, its 3-rack fake strobe
#: (only where the runs stand for etalon's 25 racks; the 8-rack runs are the issue's round
#: robin over 8 real racks), segmentation offload behind the hosts' shaper, the closed
#: night packet path, Linux's CUBIC (`tcp_cubic.c` on the hosts' kernel clock), RTO form
#: and tail-loss-probe floor, and (with resized VOQs) etalon's queues dropping the frames
#: beyond a shrunk capacity (click-etalon's `SimpleQueue::live_reconfigure`), and Linux's
#: fast recovery by Proportional Rate Reduction, and Linux's Reno (`tcp_cong.c`, reTCP's base).
SETTINGS = ("host_40g", "linux_timers", "signal_recompute", "fake_strobe", "tso", "night_closed", "linux_cubic",
            "linux_rto", "linux_pto", "shrink_drop", "linux_prr", "linux_reno")

#: Further host factors the gap table measures one at a time on top of the family's
#: settings, none of them etalon's: `tso_2seg`, segmentation offload units of at most two
#: segments (Linux's floor, `tcp_tso_autosize`'s min_tso_segs = 2, where `tso` takes its
#: 64 KiB ceiling); `no_delayed_ack`, an ACK for every segment; `gro_16us` and `gro_128us`,
#: receive offload merging what arrives within the receiving NIC's interrupt moderation
#: time (mlx4's fixed default 16 µs, `MLX4_EN_RX_COAL_TIME`, and its adaptive maximum
#: 128 µs, `MLX4_EN_RX_COAL_TIME_HIGH`; real time, so 0.8 and 6.4 µs emulated). etalon's
#: NICs ran mlx4's adaptive moderation, which below 400,000 packets/s
#: (`MLX4_EN_RX_RATE_LOW`) uses `MLX4_EN_RX_COAL_TIME_LOW` = 0 µs: its GRO had nothing to
#: merge at the ≤ 55,000 frames/s a receiving machine got, so the family leaves GRO off.
#: `cubic_alpha_only`: with `linux_cubic`, CUBIC per RFC 9438 with only Linux's α (no
#: integer windows, no kernel clock), the family's CUBIC before Linux's `tcp_cubic.c` was.
#: `rfc_dctcp`: DCTCP's window cut at once on a mark and growing as Reno's through the
#: reduced window (RFC 8257, pl2's default), the family's DCTCP before Linux's CWR state was.
PROBES = ("tso_2seg", "no_delayed_ack", "gro_16us", "gro_128us", "cubic_alpha_only", "rfc_dctcp")

#: Linux's timers on the hosts' real clock, in emulated time (TDF 20): the 200 ms minimum
#: RTO, the 40 ms delayed-ACK timer (TCP_ATO_MIN) and the 10 ms floor of the tail loss
#: probe's timeout (`tcp_schedule_loss_probe`).
TDF = 20
LINUX_MIN_RTO_MS = 200
LINUX_ATO_MS = 40
LINUX_MIN_PTO_MS = 10
#: The circuit-state signal's lead in etalon's runs that set none, as its static-buffer runs
#: (`experiments/buffers/nsdi2020.py`, experiment (3), as run for the slides) do not:
#: `setConfig` defaults `in_advance` to 12000 µs of dilated time (etalon
#: `experiments/click_common.py:262-266`), 600 µs emulated, and RunSchedule keeps a pair in
#: its ECE map while its circuit is up or due within `in_advance` whether or not it resizes
#: VOQs (click-etalon `elements/standard/run_schedule.cc:439-481`; ECE marking is on for
#: every reTCP run, `click_common.py:301-302`). The resizing runs set it to τ.
ETALON_DEFAULT_LEAD_US = 12_000 // TDF
#: The hosts' kernel timer frequency: Ubuntu's generic kernels (etalon's 4.15.0-50-generic,
#: `bin/kernel_install.sh:38`) are built with CONFIG_HZ = 250 (Ubuntu's 2024 proposal to
#: move them to 1000 names 250 as the generic kernel's: discourse.ubuntu.com/t/42255). A
#: jiffy is 4 ms of the hosts' real clock, 200 µs of emulated time.
LINUX_HZ = 250
#: BBR's clock-bound constants (Linux 4.15 `tcp_bbr.c`), on the hosts' real clock: the
#: 10 s min-RTT window, 200 ms of PROBE_RTT, the ~1 ms of data at the pacing rate that
#: sizes a sending unit (`sk_pacing_shift` 10: 976.5625 µs) and the 1 ms RTT assumed
#: before the first sample. Rates need no scaling: the kernel measures them on the same
#: real clock as the times it paces with.
LINUX_BBR = {"min_rtt_window_ms": 10_000, "probe_rtt_duration_ms": 200, "unit_time_ps": 976_562_500,
             "initial_rtt_ms": 1}

#: The probes' GRO windows in emulated µs.
GRO_WINDOW_US = {"gro_16us": 16 / TDF, "gro_128us": 128 / TDF}

#: etalon's hosts' NIC: a 40 Gbps ConnectX-3 (etalon `bin/install.sh:129-131` mlx4,
#: `README.md:34-39` 40 Gbps links) on a clock dilated 20 times: 800 Gbps of emulated
#: time, behind each container's 40 Gbps netem rate.
ETALON_NIC_GBPS = 40 * 20

#: Largest GSO unit's payload (Linux's 64 KiB: seven 8960 B segments); `tso_2seg`: two.
GSO_MAX_BYTES = 65_536
GSO_TWO_SEGMENTS_BYTES = 2 * (MTU - 40)


def settings_for(racks: int) -> tuple[str, ...]:
    """The family's settings for a run standing for `racks` racks."""
    return tuple(s for s in SETTINGS if s != "fake_strobe" or racks == ETALON_RACKS)


def weeks(quick: bool) -> tuple[int, int]:
    return WEEKS[quick]


def preamble() -> list[str]:
    measured, warm = weeks(False)
    return [
        "- Source: the reTCP slides (`../shared/seeds/002_481dd45c4473cc50.txt`, NSDI 2020) and the authors' emulator "
        "etalon (github mukerjee/etalon, cited by file and line in `docs/model.md`). Nothing is tuned to the slides.",
        f"- Network: {RACKS} racks × {HOSTS_PER_RACK} hosts; packet network 10 Gbps / 5 µs, circuit network 80 Gbps / "
        f"30 µs (ToR to ToR); MTU 9000 B; round-robin circuits, {DAY_US} µs days and {NIGHT_US} µs nights, a "
        f"{week_us(RACKS)} µs week (the issue's {RACKS} racks), and, where marked, etalon's {ETALON_RACKS}-rack fake strobe as the "
        f"slides' runs used it (a {week_us(ETALON_RACKS)} µs week, on etalon's 3 real racks); hosts sending at 40 Gbps (etalon's netem rate) on 800 Gbps links (its NIC); VOQ per "
        "destination rack, the only place frames are dropped; a pair's packet path off from the night before its day until "
        "the day ends (etalon's schedule runner). Hosts: pl2's TCP with RACK-TLP and Linux's timers as etalon's "
        "hosts ran them under time dilation (10 ms minimum RTO plus SRTT, 2 ms delayed-ACK timer, 500 µs floor under the "
        "tail loss probe's timeout), CUBIC as Linux 4.15's `tcp_cubic.c` on the same undilated clock (HZ 250: its "
        "growth step recomputed at most every 8 jiffies of 200 µs emulated), and "
        "segmentation offload as etalon's hosts sent (64 KiB units timed by the hosts' 40 Gbps shaper, then back to back "
        "at its NIC's 800 Gbps of emulated time; `retcp/common.py`, `docs/model.md`).",
        f"- Traffic: {FLOWS} long-lived TCP flows, host i of rack 0 → host i of rack 1; {warm} warm-up weeks, then "
        f"{measured} measured weeks (quick: {weeks(True)[1]} + {weeks(True)[0]}).",
        "- Circuit utilisation: payload bytes the 0 → 1 circuit carried over 80 Gbps × the time it was up in the measured "
        "weeks (etalon: `buffers_graphs.py:157-179`). Latency: per data frame of more than 1000 B of payload, from its "
        "arrival at rack 0's ToR to its last bit at rack 1's ToR (etalon logs each packet's time through its hybrid "
        "switch, `parse_logs.py:497-511`). No completion times: the flows are long-lived, and an ideal completion time is "
        "not defined on a network whose paths change with the schedule (`docs/model.md`, \"Ideal completion times\").",
    ]


def scenario(name: str, **kw: Any) -> Scenario:
    """The family's run: the 16 flows over the hybrid network with VOQs of `capacity`
    frames (or resized `(tau_us, small, large)`), TCP `cc`, and the circuit-state
    signal `signal_lead_us` ahead when set (the settings of `scenario_dict`)."""
    return Scenario.from_dict(scenario_dict(name, **kw))


def scenario_dict(name: str, *, cc: str, capacity: int = 16, resize: tuple[int, int, int] | None = None,
                  signal_lead_us: float | None = None, mark_threshold: int | None = None, quick: bool,
                  retcp_base: str = "reno", racks: int = RACKS,
                  settings: tuple[str, ...] | None = None) -> dict[str, Any]:
    """`scenario` as the dictionary it is built from. `settings`: which of etalon's
    `SETTINGS` to apply (default `settings_for(racks)`); `racks` is the rack count the
    schedule stands for (with `fake_strobe`, 3 real racks)."""
    on = set(settings_for(racks) if settings is None else settings)
    if unknown := on - set(SETTINGS) - set(PROBES):
        raise ValueError(f"unknown reTCP family settings {sorted(unknown)}; use some of {SETTINGS + PROBES}")
    measured, warm = weeks(quick)
    warm_us = warm * week_us(racks)
    total_us = (measured + warm) * week_us(racks)
    voq: dict[str, Any] = {"capacity_packets": capacity}
    if resize is not None:
        tau, small, large = resize
        voq["resize"] = {"tau": f"{tau}us", "small": small, "large": large}
        if "shrink_drop" in on:
            voq["resize"]["shrink"] = "drop"
    if mark_threshold is not None:
        voq["mark_threshold_packets"] = mark_threshold
    circuit: dict[str, Any] = {"schedule": "round_robin", "day": f"{DAY_US}us", "night": f"{NIGHT_US}us",
                               "stats_from": f"{warm_us}us"}
    real_racks = racks
    if "fake_strobe" in on and racks > 3:
        # etalon's 1/2/0 (the 23 other days: 1 → 0, 2 → 1, 0 → 2) and 2/0/1 (0 → 1, the
        # measured pair, with 1 → 2 and 2 → 0), racks renumbered so that its r2 → r3 is 0 → 1.
        real_racks = 3
        circuit["schedule"] = {"list": [[1, 2, 0]] * (racks - 2) + [[2, 0, 1]]}
    if "night_closed" in on:
        circuit["night_packet_path"] = "closed"
    if signal_lead_us is not None:
        circuit["signal_lead"] = f"{signal_lead_us}us"
        if "signal_recompute" in on:
            circuit["signal_timing"] = "recompute"
    transport: dict[str, Any] = {"kind": "tcp", "cc": cc, "rack_tlp": True}
    if cc == "dctcp":
        # Linux 4.15's DCTCP cuts cwnd · (1 − α/2) on a loss as on a mark (`dctcp_ssthresh`;
        # halving came with 5.1's `dctcp_react_to_loss`).
        transport["dctcp_loss"] = "alpha"
        if "rfc_dctcp" not in on:
            # ... and runs the kernel's CWR state: a reduction by PRR, no growth during it.
            transport["dctcp_linux"] = True
    if "linux_timers" in on:
        transport |= {"min_rto": f"{1000 * LINUX_MIN_RTO_MS // TDF}us", "delayed_ack_timeout": f"{1000 * LINUX_ATO_MS // TDF}us"}
        if cc == "bbr":
            b = LINUX_BBR
            transport["bbr"] = {"min_rtt_window": f"{1000 * b['min_rtt_window_ms'] // TDF}us",
                                "probe_rtt_duration": f"{1000 * b['probe_rtt_duration_ms'] // TDF}us",
                                "unit_time": f"{b['unit_time_ps'] // TDF}ps",
                                "initial_rtt": f"{1000 * b['initial_rtt_ms'] // TDF}us"}
    if "linux_cubic" in on:
        # Linux's Reno-friendly α stays 3(1 − β)/(1 + β) (`tcp_cubic.c` beta_scale) ...
        transport["cubic_alpha"] = "linux"
        runs_cubic = cc == "cubic" or (cc == "retcp" and retcp_base == "cubic")
        if runs_cubic and "cubic_alpha_only" not in on:
            # ... and the whole of `tcp_cubic.c` runs on the hosts' undilated jiffy clock.
            transport["cubic_linux"] = {"hz": LINUX_HZ, "dilation": TDF}
    if "linux_rto" in on:
        transport["linux_rto"] = True
    if "linux_pto" in on:
        transport["min_pto"] = f"{1000 * LINUX_MIN_PTO_MS // TDF}us"
    if "linux_prr" in on and cc != "bbr":
        # Linux (since 3.2) reduces the window in fast recovery by PRR, RFC 6937
        # (`tcp_cwnd_reduction`); BBR sets its own window.
        transport["prr"] = True
    if "linux_reno" in on and (cc == "new_reno" or (cc == "retcp" and retcp_base == "reno")):
        # Linux's `tcp_reno_cong_avoid` / `tcp_reno_ssthresh`, which `retcp.c` calls too.
        transport["reno_linux"] = True
    for g, w in GRO_WINDOW_US.items():
        if g in on:
            transport["gro"] = {"window": f"{w * 1000:.0f}ns"}
    if "no_delayed_ack" in on:
        transport["delayed_ack"] = False
    if cc == "retcp" and retcp_base != "reno":
        transport["retcp"] = {"base": retcp_base}
    host_rate = "40Gbps" if "host_40g" in on else "10Gbps"
    host: dict[str, Any] = {}
    if "tso" in on or "tso_2seg" in on:
        # etalon's send path: TSO/GSO units timed whole by the container's netem rate,
        # then its NIC's frames back to back at the dilated NIC rate (`docs/model.md`).
        host["offload"] = {"rate": host_rate,
                           "max_bytes": f"{GSO_TWO_SEGMENTS_BYTES if 'tso_2seg' in on else GSO_MAX_BYTES}B"}
        host_rate = f"{ETALON_NIC_GBPS}Gbps"
    workloads = [{"kind": "persistent", "senders": [SRC_RACK * HOSTS_PER_RACK + i],
                  "receiver": DST_RACK * HOSTS_PER_RACK + i, "size": "1GB"} for i in range(FLOWS)]
    d: dict[str, Any] = {
        "name": name,
        "run": {"duration": f"{total_us}us", "warmup": f"{warm_us}us", "stop_when_delivered": False},
        "network": {
            "topology": {"kind": "hybrid_racks", "racks": real_racks, "hosts_per_rack": HOSTS_PER_RACK,
                         "packet": {"rate": "10Gbps", "delay": "5us"}, "circuit": {"rate": "80Gbps", "delay": "30us"}},
            "link": {"rate": host_rate},
            "mtu": f"{MTU}B",
            **({"host": host} if host else {}),
            "switch": {"latency": "0ns", "cut_through": False, "buffer": "64MB", "dynamic_thresholds": False},
            "circuit": circuit,
            "voq": voq,
        },
        "metrics": {"window": "100us", "drop_records": False, "probes": False},
        "transport": transport,
        "workload": workloads,
    }
    return d


def measures(summary: dict[str, Any]) -> dict[str, Any]:
    """Circuit utilisation of the 0 → 1 pair and latency percentiles from a run's
    summary (`circuit`)."""
    c = summary["circuit"]
    q = SRC_RACK * c["racks"] + DST_RACK
    up_s = c["circuit_up_ps"][q] * 1e-12
    util = c["circuit_payload_bytes"][q] * 8 / (c["circuit_bps"] * up_s) if up_s > 0 else None
    lat = c["latency_us"]
    allp = lat["all"] or [None] * 4
    span_s = (c["until_ps"] - c["from_ps"]) * 1e-12
    return {
        "util": util,
        "p50_us": allp[0],
        "p99_us": allp[2],
        "circuit_gbps": c["circuit_payload_bytes"][q] * 8 / span_s / 1e9 if span_s > 0 else None,
        "packet_gbps": c["packet_payload_bytes"][q] * 8 / span_s / 1e9 if span_s > 0 else None,
        "voq_drops": c["voq_drops"],
        "frames": lat["frames"],
        "signal_set": c["signal_set"],
        "measured_us": span_s * 1e6,
        # over the whole run (warm-up included), every sender
        "timeouts": (summary.get("tcp") or {}).get("timeouts", 0),
    }
