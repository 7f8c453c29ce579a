"""A fluid model of messages sharing the hosts' links, to test an explanation of a
design's tail against the design's own run: what would the same messages' slowdowns be if
each host link were shared among its open messages exactly as a discipline says, with no
queueing, no control loop and no loss?

Each message is served twice, independently: on its sender's link and on its receiver's,
each a server of rate 1 whose work for the message is the message's line-rate transfer
time. Its model latency is the slower of the two plus the fixed part of its ideal time;
its model slowdown, that over its ideal time. A message's transfer time and the fixed part
are read off the run itself: a straight line fitted to the ideal times of the run's
messages against their sizes (the intercept is the fixed part, the slope the wire time
per payload byte with the transport's framing), so the model uses the same links and
frames as the run it is compared with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

#: The disciplines `finish_times` knows: every open message served at an equal share
#: (processor sharing, what per-flow fairness gives at best), or the one with the least
#: remaining work served alone (SRPT, what a size-aware receiver such as Homa's aims at).
DISCIPLINES = ("fair", "srpt")


def finish_times(jobs: Sequence[tuple[float, float]], discipline: str) -> list[float]:
    """Completion time of each (arrival, work) job on one server of rate 1, in the jobs'
    order. "fair": the open jobs share the server equally; "srpt": the open job with the
    least remaining work is served alone (ties: the earlier arrival, then the earlier job)."""
    if discipline not in DISCIPLINES:
        raise ValueError(f"discipline {discipline!r}: one of {', '.join(DISCIPLINES)}")
    order = sorted(range(len(jobs)), key=lambda i: (jobs[i][0], i))
    done = [math.nan] * len(jobs)
    left: dict[int, float] = {}
    t, k = 0.0, 0
    while k < len(order) or left:
        if not left:
            t = max(t, jobs[order[k]][0])
        while k < len(order) and jobs[order[k]][0] <= t:
            left[order[k]] = jobs[order[k]][1]
            k += 1
        nxt = jobs[order[k]][0] if k < len(order) else math.inf
        if discipline == "fair":
            n, least = len(left), min(left.values())
            step = min(least * n, nxt - t)
            for i in left:
                left[i] -= step / n
            t += step
        else:
            i = min(left, key=lambda j: (left[j], jobs[j][0], j))
            step = min(left[i], nxt - t)
            left[i] -= step
            t += step
        for i in [i for i, w in left.items() if w <= 1e-9 * max(1.0, jobs[i][1])]:
            done[i] = t
            del left[i]
    return done


def line_fit(sizes: Sequence[float], ideals: Sequence[float]) -> tuple[float, float]:
    """Least-squares (intercept, slope) of ideal time against size."""
    n = len(sizes)
    mx, my = sum(sizes) / n, sum(ideals) / n
    sxx = sum((x - mx) ** 2 for x in sizes)
    slope = sum((x - mx) * (y - my) for x, y in zip(sizes, ideals, strict=True)) / sxx if sxx else 0.0
    return my - slope * mx, slope


def slowdowns(messages: Any, discipline: str) -> dict[int, float]:
    """Model slowdown of every message of a run (a messages table: id, src, dst,
    size_bytes, start_ps, ideal_ps), by message id."""
    rows = messages.select("id", "src", "dst", "size_bytes", "start_ps", "ideal_ps").rows()
    fixed, per_byte = line_fit([r[3] for r in rows], [r[5] for r in rows])
    work = [per_byte * r[3] for r in rows]
    slowest = [0.0] * len(rows)
    for end in (1, 2):
        by_host: dict[int, list[int]] = {}
        for i, r in enumerate(rows):
            by_host.setdefault(r[end], []).append(i)
        for idx in by_host.values():
            fin = finish_times([(rows[i][4], work[i]) for i in idx], discipline)
            for i, f in zip(idx, fin, strict=True):
                slowest[i] = max(slowest[i], f - rows[i][4])
    return {r[0]: (slowest[i] + fixed) / r[5] for i, r in enumerate(rows)}
