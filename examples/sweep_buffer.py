"""A notebook-style sweep: how the incast's tail latency and drops depend on the switch
buffer, over three seeds, then one plot.

Run: python examples/sweep_buffer.py   (writes out/sweep-buffer/)
"""
from __future__ import annotations

from pathlib import Path

import pl2
from pl2 import plots
from pl2.sweep import Sweep, run_sweep, summarise

here = Path(__file__).parent
out = Path("out/sweep-buffer")


def main() -> None:
    base = pl2.Scenario.from_file(here / "incast-6host.toml")
    sweep = Sweep(
        base,
        grid={"network.switch.buffer": ["256KiB", "512KiB", "1MiB", "2MiB"]},
        seeds=[1, 2, 3],
        name="buffer",
    )
    store = pl2.open_store(out / "store")
    rows = run_sweep(sweep, store)
    print(summarise(rows, by=["network.switch.buffer"]))

    # One run per buffer size, latency CDFs side by side.
    results = {b: pl2.run(base.with_overrides({"network.switch.buffer": b}), progress=False) for b in ["256KiB", "2MiB"]}
    plots.save(plots.latency_cdf(results), out / "latency_cdf")
    print(f"wrote {out / 'latency_cdf.png'}")


# Sweep workers are separate processes that import this file: keep the work under main().
if __name__ == "__main__":
    main()
