"""Per-run overhead of the Python front: 1,000 tiny runs (two hosts, one 1 KiB message)
through `pl2.run`, timed end to end (parse and validate the scenario, build the model,
run, hand the tables over by the Arrow C data interface, wrap them as polars frames).

Run: python bench/python_overhead.py [N]
"""
from __future__ import annotations

import sys
import time

import pl2

TINY = """
[run]
duration = "1ms"
[network.topology]
kind = "single_rack"
hosts = 2
[[workload]]
kind = "incast"
senders = [0]
receiver = 1
size = "1KiB"
"""


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    sc = pl2.Scenario.from_toml(TINY)
    pl2.run(sc, progress=False)  # warm up imports and caches
    t0 = time.perf_counter()
    for _ in range(n):
        r = pl2.run(sc, progress=False)
        assert r.messages.height == 1
    per_run = (time.perf_counter() - t0) / n
    print(f"{n} tiny runs: {per_run * 1e3:.3f} ms per run (end to end, including table hand-over)")


if __name__ == "__main__":
    main()
