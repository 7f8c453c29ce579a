"""Polo variants side by side on the Polo family's settings (issue 20 follow-up; the numbers
in docs/model.md, "Polo", come from it). A diagnostic, not a figure.

Usage: PYTHONPATH=python python3 scripts/polo-variants.py <experiment> <design>...
  experiment: queue (N=16 senders, env N), edge / core (env NS="8,32", ROUNDS=2),
              large (env NS="100,250,500,1000"), leafspine (quick windows; env UNTIL ms of arrivals)
  design: a family design ("Polo", "Polo receiver D", "Polo^c", ...) or an ad-hoc Polo variant
          "name=key:value,key:value" (e.g. "Flow D finish=d_scope:flow,pause_end:flow_finish")
  env ECN=packets marks at 5 packets (`step_packets`); the family does already.
Seeds: whitespace-separated in /tmp/polo20/seeds (default 1). Runs are stored in
/tmp/polo20/store and reused."""
import math, sys, time
from pathlib import Path
import polars as pl
from pl2.store import open_store
from pl2.executors import LocalExecutor
from pl2.reproduce.common import Context, Job
from pl2.reproduce.polo import incast, leafspine
from pl2.reproduce.polo.common import FLOW_B, build, counters, pct, VARIANTS

def polo_c(s):
    t = s.get("polo") or {}
    return {k: int(t.get(k, 0)) for k in ("timeouts", "duplicates", "retransmissions", "pauses", "resumes", "marked_packets", "gap_losses", "idle_losses")}

def main():
    import os
    from pl2.reproduce.polo import common as pc
    if os.environ.get("ECN") == "packets":
        orig = pc.switch
        def sw(design):
            d = orig(design)
            d["ecn"] = {"kind": "step_packets", "threshold_packets": 5}
            return d
        pc.switch = sw
    exp, designs = sys.argv[1], sys.argv[2:]
    extra = {}
    for d in designs:  # "name=key:val,key:val" defines an ad-hoc variant
        if "=" in d:
            name, kv = d.split("=", 1)
            t = {"kind": "polo"}
            for item in kv.split(","):
                k, v = item.split(":", 1)
                t[k] = {"true": True, "false": False}.get(v, int(v) if v.isdigit() else v)
            VARIANTS[name] = t
    designs = [d.split("=", 1)[0] for d in designs]
    seeds = [int(x) for x in (Path("/tmp/polo20/seeds").read_text().split() if Path("/tmp/polo20/seeds").exists() else ["1"])]
    ctx = Context(out=Path("/tmp/polo20/out"), store=open_store("/tmp/polo20/store"), seeds=seeds, quick=True, executor=LocalExecutor(workers=2))
    ctx.out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()

    if exp in ("edge", "core"):
        ns = [int(x) for x in __import__("os").environ.get("NS", "8,32").split(",")]
        js = incast.jobs(ctx, "m", exp, designs, ns, int(__import__("os").environ.get("ROUNDS", "2")))
        rows = []
        for job, res in zip(js, ctx.run_many(js)):
            p = job.params
            _, recv, _ = incast.topology(exp, p["senders"])
            it = res.iterations
            done = it.filter(pl.col("finish_ps").is_not_null())
            t = float(done["time_ps"].sum()) if done.height else 0
            good = float(done["bytes"].sum()) * 8 / (t * 1e-12) / 1e6 if t else 0
            m = res.messages.filter(pl.col("dst") == recv)
            lat = [x / 1e6 if x is not None else math.inf for x in m["latency_ps"].to_list()]
            rows.append({"design": p["design"], "N": p["senders"], "seed": job.seed, "goodput": round(good, 1), "p99_us": pct(lat, .99), **polo_c(res.summary)})
        df = pl.DataFrame(rows)
    elif exp == "queue":
        n = int(__import__("os").environ.get("N", "16"))
        rows = []
        jobs = []
        for d in designs:
            wl = {"kind": "incast", "senders": f"0..{n}", "receiver": n, "size": f"{FLOW_B}B", "count": 1, "start": "100ms"}
            sc = build(f"m-queue-{d}-{n}", d, {"kind": "single_rack", "hosts": n + 1}, [wl], duration_ms=100 + n * 8 + 20, link_delay="12500ns")
            jobs += [Job(sc, {"design": d}, s, "m") for s in seeds]
        for job, res in zip(jobs, ctx.run_many(jobs)):
            m = res.messages.filter(pl.col("dst") == n)
            lat = [x / 1e6 if x is not None else math.inf for x in m["latency_ps"].to_list()]
            last = m["finish_ps"].max()
            comp = (last / 1e9 - 100) if last is not None else None
            good = m.height * FLOW_B * 8 / (comp * 1e-3) / 1e6 if comp else 0
            q = res.ports.filter((pl.col("node") == "s0") & (pl.col("peer") == f"h{n}"))
            act = q.filter((pl.col("window_start_ps") >= int(100e9)) & (pl.col("window_start_ps") <= (last or 0)))
            rows.append({"design": job.params["design"], "seed": job.seed, "q_med_kb": round(float(act["max_queue_bytes"].median() or 0) / 1000, 1),
                         "q_mean_kb": round(float(act["max_queue_bytes"].mean() or 0) / 1000, 1), "completion_ms": comp, "goodput": round(good, 1), "p99_us": pct(lat, .99), "unfinished": m["finish_ps"].null_count(), **polo_c(res.summary)})
        df = pl.DataFrame(rows)
    elif exp == "large":
        from pl2.reproduce.polo import large_incast
        ns = [int(x) for x in __import__("os").environ.get("NS", "100,250,500,1000").split(",")]
        jobs = [Job(large_incast.scenario(d, n, trace=False), {"design": d, "senders": n}, s, "m") for n in ns for d in designs for s in seeds]
        rows = []
        for job, res in zip(jobs, ctx.run_many(jobs)):
            n = job.params["senders"]
            m = res.messages.filter(pl.col("dst") == n)
            fin = m.filter(pl.col("finish_ps").is_not_null())
            start = int(m["start_ps"].min()); last = int(fin["finish_ps"].max()) if fin.height else start
            good = float(fin["size_bytes"].sum()) * 8 / ((last - start) * 1e-12) / 1e6 if last > start else 0.0
            lat = [x / 1e6 for x in fin["latency_ps"].to_list()] + [math.inf] * (m.height - fin.height)
            rows.append({"design": job.params["design"], "N": n, "seed": job.seed, "goodput": round(good, 1), "completion_ms": (last - start) / 1e9,
                         "unfinished": m.height - fin.height, "p99_us": pct(lat, .99), "drops": counters(res.summary, "Polo")["drops"], **polo_c(res.summary)})
        df = pl.DataFrame(rows)
    elif exp == "leafspine":
        warm, until, dur = leafspine.windows(True)
        until = float(__import__("os").environ.get("UNTIL", until))
        workloads = {"web search": {"sizes": "w5"}, "data mining": {"sizes": leafspine.vl2_path(), "sizes_format": "homa"}}
        jobs = []
        for wname, w in workloads.items():
            for d in designs:
                wl = {"kind": "poisson", "load": 0.5, **w, "stop": f"{until:g}ms"}
                sc = build(f"m-ls-{wname.replace(' ', '')}-{d.replace(' ', '')}", d, leafspine.topo(), [wl], duration_ms=dur, link_delay="6250ns",
                           warmup_ms=warm, until_ms=until, stop_when_delivered=True, window="1ms", threads=leafspine.THREADS)
                jobs += [Job(sc, {"workload": wname, "design": d}, s, "m") for s in seeds]
        rows = []
        for job, res in zip(jobs, ctx.run_many(jobs)):
            m = res.messages.filter(pl.col("in_window"))
            sl = [float(x) if x is not None else math.inf for x in m["slowdown"].to_list()]
            small = m.filter(pl.col("size_bytes") <= 100_000)
            ss = [float(x) if x is not None else math.inf for x in small["slowdown"].to_list()]
            lat = [x / 1e6 if x is not None else math.inf for x in m["latency_ps"].to_list()]
            rows.append({"workload": job.params["workload"], "design": job.params["design"], "seed": job.seed, "flows": m.height,
                         "unfinished": m["finish_ps"].null_count(), "p50_sd": round(pct(sl, .5), 2), "p99_sd": round(pct(sl, .99), 2),
                         "p99_sd_small": round(pct(ss, .99), 2), "p99_fct_us": round(pct(lat, .99)), "drops": counters(res.summary, "Polo")["drops"], **polo_c(res.summary)})
        df = pl.DataFrame(rows)
    pl.Config.set_tbl_rows(100); pl.Config.set_tbl_cols(30); pl.Config.set_tbl_width_chars(250)
    print(df)
    print(f"wall {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    main()
