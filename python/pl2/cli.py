"""The `pl2` command line (typer). Commands: run, validate, show, sweep, plot, plot-sweep,
inspect, pcap, rerun, compare, reproduce. Errors are printed as one `error: ...` line on stderr naming what to fix.

Exit codes: 0 success; 1 a run failed, a sweep had failed runs, a rerun differs, or the
native module is missing; 2 invalid input (scenario, spec, path or option);
130 interrupted (Ctrl-C); 143 terminated (SIGTERM)."""

from __future__ import annotations

import enum
import functools
import signal
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from pl2._units import fmt_num, fmt_time_ps, fmt_us
from pl2.errors import NativeUnavailableError, OutputPathError, ScenarioError, StoreError
from pl2.executors import Executor, LocalExecutor, SerialExecutor, WorkersCannotStart
from pl2.outdir import MANIFEST, check_path_text
from pl2.results import RunResult
from pl2.runner import Terminated, raise_terminated
from pl2.runner import run as run_scenario
from pl2.scenario import Scenario

# polars, matplotlib (`pl2.plots`), DuckDB (`pl2.store`) and the sweep machinery are
# imported by the commands that use them: `pl2 run`, `validate` and `--help` start
# without them (`pl2 --help` takes 0.4 s instead of 1.7 s on the development machine).

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INVALID = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

_FORCE_HELP = ("write into an existing directory beside files pl2 did not write; pl2 still replaces only files it "
               "wrote, and never writes into /, your home, the working directory or its parents")

#: Width `pl2 inspect` prints its tables in, at least: the trace table's columns are not
#: cut in an 80-column terminal or log.
_WIDE_COLUMNS = 240

#: Rows of each table `pl2 inspect` prints.
_INSPECT_ROWS = 50

app = typer.Typer(
    name="pl2",
    help="pl2: packet-level datacenter network simulator.",
    epilog="Exit codes: 0 ok; 1 run failed / rerun differs; 2 invalid input; 130 interrupted; 143 terminated.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
F = TypeVar("F", bound=Callable[..., Any])


def _out() -> Console:
    return Console(highlight=False)


def _error(message: str) -> None:
    typer.echo(f"error: {message}", err=True)


def _exit_codes(fn: F) -> F:
    """Maps pl2's exceptions to one error line and the documented exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Terminated:
            _error("terminated (SIGTERM)")
            raise typer.Exit(EXIT_TERMINATED) from None
        except KeyboardInterrupt:
            _error("interrupted")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except (ScenarioError, OutputPathError, FileNotFoundError, KeyError) as e:
            _error(str(e).strip("'\""))
            raise typer.Exit(EXIT_INVALID) from None
        except (NativeUnavailableError, StoreError, WorkersCannotStart) as e:
            _error(str(e))
            raise typer.Exit(EXIT_FAILED) from None

    return wrapper  # type: ignore[return-value]


class Kind(str, enum.Enum):
    """Plot kinds."""

    latency_cdf = "latency_cdf"
    slowdown = "slowdown"
    goodput = "goodput"
    queue = "queue"
    drops = "drops"
    probes = "probes"


def summary_table(result: RunResult) -> Table:
    """A run's headline figures (latencies in µs, goodput in Gbps), with a caption that
    says how percentiles treat unfinished messages and what each kind of drop means."""
    s = result.summary
    m = s.get("messages") or {}
    lat = m.get("latency_ps") or {}
    sd = m.get("slowdown") or {}
    unfinished = int(m.get("unfinished") or 0)
    t = Table(title=f"run {result.name}", show_header=False)
    t.add_column("figure")
    t.add_column("value", justify="right")

    def both(stats: dict[str, Any], q: str, fmt: Callable[[float | None], str]) -> str:
        """The percentile counting unfinished messages as late, and over the finished
        alone when they differ."""
        if not unfinished:
            return fmt(stats.get(q))
        return f"{fmt(stats.get(q))}  (finished only: {fmt(stats.get(q + '_finished'))})"

    causes = s.get("drop_causes") or {}
    rows = [
        ("stop reason", str(s.get("stop_reason", "–"))),
        ("simulated time", fmt_time_ps(s.get("sim_time_ps"))),
        ("messages (finished / count)", f"{m.get('finished', '–')} / {m.get('count', '–')}" + (f", {unfinished} unfinished" if unfinished else "")),
        ("latency p50 (µs)", both(lat, "p50", fmt_us)),
        ("latency p99 (µs)", both(lat, "p99", fmt_us)),
        ("latency p99.9 (µs)", both(lat, "p999", fmt_us)),
        ("slowdown p99", both(sd, "p99", fmt_num)),
        ("goodput, all hosts (Gbps)", fmt_num(sum((s.get("goodput_gbps") or {}).values()), 4)),
        ("drops: buffer full (frames)", str(causes.get("buffer", sum((s.get("drops") or {}).values())))),
    ]
    if causes.get("program"):
        rows.append(("drops: by a switch program, on purpose (frames)", str(causes["program"])))
    if causes.get("fault"):
        rows.append(("drops: injected faults (frames)", str(causes["fault"])))
    pfc = s.get("pfc")
    if pfc:
        rows.append(("PFC: PAUSE / XON frames sent", f"{pfc.get('pause_frames', 0)} / {pfc.get('xon_frames', 0)}"))
        rows.append(("PFC: time priorities spent paused (µs, summed over ports)", fmt_us(pfc.get("paused_ps"))))
    sfc = s.get("sfc")
    if sfc:
        rows.append(("SFC: signals sent / suppressed / proxied", f"{sfc.get('signals_sent', 0)} / {sfc.get('signals_suppressed', 0)} / {sfc.get('signals_proxied', 0)}"))
    dl = s.get("pause_deadlock")
    if dl:
        rows.insert(1, ("PAUSE DEADLOCK (run stopped)", f"at {fmt_us(dl['at_ps'])} µs, priority {dl['prio']}: {' → '.join(dl['ports'])}"))
    trims = (s.get("counters") or {}).get("trims")
    if trims:
        rows.append(("trims: payload cut, header delivered (frames, not drops)", str(trims)))
    lost = (s.get("counters") or {}).get("messages_lost")
    if lost:
        rows.insert(3, ("messages lost (a frame dropped, never resent)", str(lost)))
    r = s.get("rpcs")
    if r:
        rl = r.get("latency_ps") or {}
        rows += [
            ("RPCs (finished / count)", f"{r.get('finished', '–')} / {r.get('count', '–')}"),
            ("RPC latency p50 (µs)", fmt_us(rl.get("p50"))),
            ("RPC latency p99 (µs)", fmt_us(rl.get("p99"))),
            ("transactions / s", fmt_num(r.get("tps"), 6)),
        ]
    it = s.get("iterations")
    if it:
        tl = it.get("time_ps") or {}
        rows += [
            ("iterations (finished / count)", f"{it.get('finished', '–')} / {it.get('count', '–')}"),
            ("iteration time mean (ms)", fmt_num(tl["mean_finished"] / 1e9 if tl.get("mean_finished") else None, 4)),
            ("iteration time p99 (ms)", fmt_num(tl["p99"] / 1e9 if tl.get("p99") else None, 4)),
            ("iterations total (s)", fmt_num(it.get("total_ps", 0) / 1e12, 4)),
        ]
    for i, d in enumerate(s.get("diagnosis") or []):
        rows.append(("why frames were lost" if i == 0 else "", d))
    for k, v in rows:
        t.add_row(k, v)
    notes = []
    if unfinished:
        notes.append(f"Percentiles count the {unfinished} unfinished messages as infinitely late (– where one falls at the rank); "
                     "'finished only' ranks the finished messages alone.")
    notes.append("Drops: buffer full = congestion loss; by a switch program = deliberate (PL2's rule against unsolicited "
                 "bursts: the sender resends the burst, nothing is lost); injected = fault rules.")
    t.caption = "\n".join(notes)
    t.caption_justify = "left"
    return t


@app.command()
@_exit_codes
def run(
    scenario: Annotated[Path, typer.Argument(help="scenario TOML file")],
    out: Annotated[str, typer.Option("--out", "-o", help="directory to write the run into: new, empty, or an earlier pl2 run (replaced)")],
    seed: Annotated[Optional[int], typer.Option(help="override the scenario's seed")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar and no summary")] = False,
    force: Annotated[bool, typer.Option("--force", help=_FORCE_HELP)] = False,
) -> None:
    """Run one scenario and write its tables (Parquet), summary.json and scenario.toml."""
    result = run_scenario(Scenario.from_file(scenario), progress=not quiet, seed=seed, out=out, force=force)
    if not quiet:
        _out().print(summary_table(result))
        typer.echo(f"written to {out}")


@app.command()
@_exit_codes
def validate(scenario: Annotated[Path, typer.Argument(help="scenario TOML file")]) -> None:
    """Check a scenario; exit 0 if it is valid, else print the error and exit 2."""
    sc = Scenario.from_file(scenario).validate()
    typer.echo(f"ok: {scenario} (scenario hash {sc.hash()})")


@app.command()
@_exit_codes
def show(scenario: Annotated[Path, typer.Argument(help="scenario TOML file")]) -> None:
    """Print the canonical scenario: defaults filled, units normalised, and settings the
    scenario derives shown as fields (Homa's rtt_bytes, unscheduled_levels,
    scheduled_levels and unscheduled_cutoffs under its transport)."""
    typer.echo(Scenario.from_file(scenario).canonical(), nl=False)


def _executor(workers: int | None, ray: bool, ray_address: str | None, serial_when_one: bool = False) -> Executor:
    """The executor the --workers/--ray/--ray-address options ask for: Ray (a local one
    with `workers` CPUs, or the cluster at `ray_address`), else local worker processes
    (one per CPU by default); `serial_when_one`: `--workers 1` runs in this process."""
    if workers is not None and workers < 1:
        raise ScenarioError(f"--workers {workers}: needs at least 1")
    if ray or ray_address is not None:
        from pl2.ray_executor import RayExecutor

        return RayExecutor(address=ray_address, num_cpus=workers)
    if serial_when_one and workers == 1:
        return SerialExecutor()
    return LocalExecutor(workers)


@app.command()
@_exit_codes
def sweep(
    spec: Annotated[Path, typer.Argument(help="sweep spec TOML file")],
    store: Annotated[str, typer.Option("--store", help="results store directory: new, empty, or a pl2 store")],
    workers: Annotated[Optional[int], typer.Option(help="worker processes (default: one per CPU); with --ray, CPUs of the local Ray")] = None,
    ray: Annotated[bool, typer.Option("--ray", help="run on Ray: a local Ray started here, or the cluster at --ray-address")] = False,
    ray_address: Annotated[Optional[str], typer.Option("--ray-address", help="Ray cluster to join, e.g. auto or ray://head:10001 (implies --ray)")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
    force: Annotated[bool, typer.Option("--force", help=_FORCE_HELP)] = False,
) -> None:
    """Run every run of a sweep the store lacks; exit 1 if any run failed."""
    import polars as pl

    from pl2.store import open_store
    from pl2.sweep import Sweep, run_sweep

    sw = Sweep.from_file(spec)
    st = open_store(store, force=force)
    reused = sum(st.has(p.run_id) for p in sw.runs())
    df = run_sweep(sw, st, _executor(workers, ray, ray_address), progress=not quiet)
    failed = df.filter(pl.col("status") == "failed")
    typer.echo(f"sweep {sw.name}: {df.height} runs ({df.height - reused} run now, {reused} reused from the store), "
               f"{df.height - failed.height} done, {failed.height} failed (store {store})")
    for run_id, error in failed.select("run_id", "error").iter_rows():
        typer.echo(f"failed {run_id}: {error}", err=True)
    if failed.height:
        raise typer.Exit(EXIT_FAILED)


@app.command()
@_exit_codes
def plot(
    run_dir: Annotated[Path, typer.Argument(help="run directory")],
    kind: Annotated[Kind, typer.Option(help="which figure")],
    out: Annotated[str, typer.Option("--out", "-o", help="output path; .png or .svg for one format, else both (an existing file is replaced only if pl2 wrote it)")],
    flow: Annotated[Optional[int], typer.Option("--flow", help="flow id (for --kind probes)")] = None,
) -> None:
    """Plot a run: latency CDF, slowdown by size, goodput, queues or drops over time, or
    one flow's probes over time."""
    import polars as pl

    from pl2 import plots

    r = RunResult.load(run_dir)
    if kind is Kind.probes and flow is None:
        raise ScenarioError("--kind probes needs --flow ID (a flow id from probes.parquet)")
    if kind is Kind.probes:
        flows = r.tables["probes"]["flow"].unique().sort() if "probes" in r.tables else pl.Series([], dtype=pl.UInt32)
        if flow not in flows.to_list():
            have = f"flows {flows.min()}..{flows.max()}" if flows.len() else "no probes (metrics.probes = false?)"
            raise ScenarioError(f"--flow {flow}: {run_dir} has no probes for that flow (it has {have})")
    makers = {
        Kind.probes: lambda res: plots.probes_over_time(res, flow=flow or 0),
        Kind.latency_cdf: plots.latency_cdf,
        Kind.slowdown: plots.slowdown_by_size,
        Kind.goodput: plots.goodput_over_time,
        Kind.queue: plots.queue_over_time,
        Kind.drops: plots.drops_over_time,
    }
    target = check_path_text(out)
    fig = makers[kind](r)
    if target.suffix in (".png", ".svg"):
        paths = plots.save(fig, target.with_suffix(""), formats=(target.suffix[1:],))
    else:
        paths = plots.save(fig, target)
    typer.echo("written " + ", ".join(str(p) for p in paths))


@app.command("plot-sweep")
@_exit_codes
def plot_sweep(
    store: Annotated[Path, typer.Argument(help="results store directory")],
    x: Annotated[str, typer.Option("--x", help="the swept parameter on the x axis, e.g. workload.0.load")],
    y: Annotated[str, typer.Option("--y", help="the figure on the y axis: a catalogue column, e.g. latency_p99_ps, slowdown_p99, goodput_gbps_total")],
    out: Annotated[str, typer.Option("--out", "-o", help="output path; .png or .svg for one format, else both")],
    by: Annotated[Optional[str], typer.Option("--by", help="one line per value of this parameter")] = None,
    sweep_name: Annotated[Optional[str], typer.Option("--sweep", help="only the runs of this sweep")] = None,
) -> None:
    """Plot a figure against a swept parameter from a results store: mean and 95%
    confidence interval over seeds, one line per value of --by."""
    import polars as pl

    from pl2 import plots
    from pl2.store import open_store

    if not (store / "catalogue.duckdb").exists():
        raise ScenarioError(f"{store} is not a results store (no catalogue.duckdb); make one with pl2 sweep ... --store {store}")
    rows = open_store(store).load_all()
    if sweep_name is not None:
        rows = rows.filter(pl.col("sweep") == sweep_name)
        if rows.height == 0:
            raise ScenarioError(f"--sweep {sweep_name}: no runs of that sweep in {store}")
    target = check_path_text(out)
    fig = plots.sweep(rows, x, y, by)
    if target.suffix in (".png", ".svg"):
        paths = plots.save(fig, target.with_suffix(""), formats=(target.suffix[1:],))
    else:
        paths = plots.save(fig, target)
    typer.echo("written " + ", ".join(str(p) for p in paths))


@app.command()
@_exit_codes
def inspect(
    run_dir: Annotated[Path, typer.Argument(help="run directory")],
    flow: Annotated[int, typer.Option("--message", "--flow", help="the message's id (column `id` of messages.parquet; --flow is the old name)")],
) -> None:
    """Print one message's row, the drops of its frames, its flow's probes and its
    packet trace (the trace needs a \\[metrics.trace] table in the scenario). Tables are
    printed whole, however wide."""
    import polars as pl

    r = RunResult.load(run_dir)
    msg = r.messages.filter(pl.col("id") == flow)
    if msg.height == 0:
        ids = r.messages["id"]
        have = f"ids {ids.min()}..{ids.max()}" if ids.len() else "no messages"
        raise ScenarioError(f"--message {flow}: no message with that id in {run_dir} (it has {have})")
    t = Table(title=f"message {flow}", show_header=False)
    for k, v in msg.row(0, named=True).items():
        t.add_row(k, str(v))
    console = Console(highlight=False, width=max(_out().width, _WIDE_COLUMNS))
    console.print(t)
    for name, column, what in (("drops", "msg_id", "drops"), ("probes", "flow", "probe values"), ("trace", "flow", "traced frame events")):
        rows = r.tables[name].filter(pl.col(column) == flow) if name in r.tables else pl.DataFrame()
        if rows.height == 0:
            console.print(f"no {what}")
            continue
        shown = rows.head(_INSPECT_ROWS)
        dt = Table(title=f"{rows.height} {what} of flow {flow}" + (f" (first {_INSPECT_ROWS})" if rows.height > _INSPECT_ROWS else ""))
        for c in shown.columns:
            dt.add_column(c)
        for row in shown.iter_rows():
            dt.add_row(*(str(v) for v in row))
        console.print(dt)


@app.command()
@_exit_codes
def pcap(
    run_dir: Annotated[Path, typer.Argument(help="run directory (its scenario needs a \\[metrics.trace] table)")],
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="pcap file to write (must not exist); default RUN_DIR/capture.pcap")] = None,
    node: Annotated[Optional[list[str]], typer.Option("--node", help="only frames leaving this node, e.g. s0 or h3 (repeatable)")] = None,
    port: Annotated[Optional[list[int]], typer.Option("--port", help="only frames leaving this global port id (repeatable)")] = None,
    flow: Annotated[Optional[list[int]], typer.Option("--flow", help="only frames of this flow id (repeatable)")] = None,
) -> None:
    """Write the run's traced frames as a nanosecond pcap file for Wireshark or tcpdump:
    one record per frame leaving a port, stamped when its first bit leaves; Ethernet,
    802.1Q, IPv4 and TCP headers synthesised from the frame records (pl2's TCP sequence,
    ACK and SACK numbers as simulated), UDP plus pl2's 24-byte header for other
    protocols, PAUSE as real MAC control frames; no payload (captured length below the
    frame length). Record the frames first with \\[metrics.trace] (nodes, ports, flows,
    from, until) in the scenario."""
    from pl2.pcap import capture_path, write_pcap

    r = RunResult.load(run_dir)
    dest = capture_path(run_dir, out)
    n = write_pcap(r, dest, nodes=node or (), ports=port or (), flows=flow or ())
    typer.echo(f"wrote {n} frames to {dest}")


@app.command()
@_exit_codes
def rerun(
    run_dir: Annotated[Path, typer.Argument(help="run directory with scenario.toml")],
    out: Annotated[str, typer.Option("--out", "-o", help="directory for the new run: new, empty, or an earlier pl2 run (replaced)")],
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
    force: Annotated[bool, typer.Option("--force", help=_FORCE_HELP)] = False,
) -> None:
    """Re-run a run's scenario.toml; exit 0 if every file is byte-identical, else 1."""
    old = RunResult.load(run_dir)
    new_dir = check_path_text(out)
    if new_dir.resolve() == run_dir.resolve():
        raise ScenarioError("--out must differ from RUN_DIR: the comparison needs both runs")
    new = run_scenario(Scenario.from_file(run_dir / "scenario.toml"), progress=not quiet, out=new_dir, force=force)
    written = sorted(p for p in new_dir.iterdir() if p.is_file() and p.name != MANIFEST)
    t = Table(title=f"rerun of {run_dir}")
    t.add_column("file")
    t.add_column("result")
    same = True
    for p in written:
        before = run_dir / p.name
        verdict = "missing in RUN_DIR" if not before.is_file() else "identical" if before.read_bytes() == p.read_bytes() else "DIFFERS"
        same &= verdict == "identical"
        t.add_row(p.name, verdict)
    _out().print(t)
    old_src, new_src = ((x.summary.get("build") or {}).get("source_hash") for x in (old, new))
    if old_src != new_src:
        typer.echo(f"note: built from different sources ({old_src} then {new_src})")
    typer.echo("identical" if same else "differs")
    if not same:
        raise typer.Exit(EXIT_FAILED)


def _fmt_cell(v: float | None, percent: bool) -> str:
    """A figure for a table: whole numbers with thousands separators, others to 4
    significant digits; a difference in percent with its sign."""
    if v is None:
        return "–"
    if percent:
        return f"{v:+.1f}%"
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:,.0f}" if abs(v) >= 1e4 else f"{v:.4g}"


@app.command()
@_exit_codes
def compare(
    run_dirs: Annotated[list[Path], typer.Argument(metavar="RUN RUN...", help="run directories (the first is the reference)", show_default=False)],
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="also write the overlaid latency CDFs and slowdown-by-size curves here (a new directory, or one pl2 made)")] = None,
    force: Annotated[bool, typer.Option("--force", help=_FORCE_HELP)] = False,
) -> None:
    """Runs side by side: headline figures with each run's difference from the first in
    percent; with --out, their latency CDFs and slowdowns by size overlaid."""
    from pl2 import compare as cmp
    from pl2 import outdir, plots

    if len(run_dirs) < 2:
        raise ScenarioError("pl2 compare needs at least two run directories")
    labels = cmp.labels_for([str(d) for d in run_dirs])
    results = {label: RunResult.load(d) for label, d in zip(labels, run_dirs)}
    target = outdir.prepare(out, "compare", force=force) if out is not None else None
    df = cmp.compare(results)
    t = Table(title="runs compared (Δ%: against " + labels[0] + ")")
    for c in df.columns:
        t.add_column(c, justify="left" if c == "figure" else "right")
    for row in df.iter_rows(named=True):
        t.add_row(row["figure"], *(_fmt_cell(row[c], c.startswith("Δ% ")) for c in df.columns[1:]))
    Console(highlight=False, width=max(_out().width, _WIDE_COLUMNS)).print(t)
    if target is not None:
        figures = {"latency_cdf": plots.latency_cdf(results), "slowdown_by_size": plots.slowdown_by_size(results)}
        for name in figures:
            for fmt in plots.FORMATS:
                target.claim(f"{name}.{fmt}")
        try:
            target.save()
        except OSError as e:
            raise outdir.os_error(target.path, e) from None
        written = [p for name, fig in figures.items() for p in plots.save(fig, target.path / name)]
        target.claim("compare.csv")
        df.write_csv(target.path / "compare.csv")
        target.save()
        typer.echo("written " + ", ".join(str(p) for p in written + [target.path / "compare.csv"]))


@app.command()
@_exit_codes
def reproduce(
    figures: Annotated[list[str], typer.Argument(metavar="LIST|all", help="figures (space- or comma-separated): the PL2 paper's fig1, fig3_4, fig5_6, fig7, fig8, fig9, fig10, k_t; the Polo evaluation's polo-core, polo-edge, polo-queue, polo-ablation, polo-leafspine, polo-large-incast; the receiver-driven transports' homa-slowdown; the reTCP slides' retcp-static, retcp-variants, retcp-dynamic, retcp-dynamic-retcp; the SFC slides' sfc-benefit, sfc-fairness; every design on the same network: compare-rack, compare-microburst, compare-core, compare-pod; a family (paper, polo, receiver-driven, retcp, sfc, compare), a pattern (polo-*), or all", show_default=False)],
    quick: Annotated[bool, typer.Option("--quick", help="short windows, 1 seed, fewer points (the whole set in minutes)")] = False,
    out: Annotated[str, typer.Option("--out", "-o", help="output directory: one folder per family (paper/, polo/, receiver-driven/, retcp/, sfc/, compare/) with its report.md, data and figures, the index report.md and the results store; new, empty, or an earlier reproduction (added to)")] = "out/reproduce",
    seeds: Annotated[Optional[int], typer.Option("--seeds", help="seeds per point (default 5, or 1 with --quick)")] = None,
    workers: Annotated[Optional[int], typer.Option(help="worker processes (default: one per CPU; 1 runs in this process); with --ray, CPUs of the local Ray")] = None,
    ray: Annotated[bool, typer.Option("--ray", help="run on Ray: a local Ray started here, or the cluster at --ray-address")] = False,
    ray_address: Annotated[Optional[str], typer.Option("--ray-address", help="Ray cluster to join, e.g. auto or ray://head:10001 (implies --ray; --out must be on a file system the cluster shares)")] = None,
    force: Annotated[bool, typer.Option("--force", help=_FORCE_HELP)] = False,
    set_: Annotated[Optional[list[str]], typer.Option("--set", help="override every run's scenario, KEY=VALUE with a dotted key and a TOML value, e.g. --set network.host.cpu='\"thread\"' or --set network.host.send_cpu_per_packet=150ns (repeatable; a value that is not TOML is a string); for sensitivity studies, listed in each section's stamp")] = None,
) -> None:
    """Reproduce published evaluations beside their claims (the PL2 paper's figures, the
    Polo slides' experiments, slowdown by message size in the Homa paper's network, the reTCP
    slides' experiments, the SFC slides' simulations, every design on the same networks): writes
    Parquet data, PNG and SVG figures and a report.md per family (stamped with the code
    version, wall time and seeds) into --out/<family>,
    and an index --out/report.md; each family's report opens with a scorecard of the
    published claims its figures check (each figure's claims.json). Each figure's runs run in parallel (local worker
    processes, or Ray with --ray); this process alone writes the results store, as each
    run finishes. Re-running reuses finished runs from the store."""
    from pl2 import reproduce as rep
    from pl2.reproduce.common import RunsFailed

    try:
        names = rep.resolve(figures)
    except rep.UnknownFigure as e:
        raise ScenarioError(str(e)) from None
    if seeds is not None and seeds < 1:
        raise ScenarioError(f"--seeds {seeds}: needs at least 1 seed")
    executor = _executor(workers, ray, ray_address, serial_when_one=True)
    try:
        path = rep.reproduce(names, out=out, quick=quick, seeds=seeds, log=lambda m: typer.echo(m, err=True),
                             executor=executor, progress=True, force=force, overrides=_parse_sets(set_ or []))
    except RunsFailed as e:
        _error(str(e))
        raise typer.Exit(EXIT_FAILED) from None
    typer.echo(f"written {path}")


def _parse_sets(items: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` options as overrides: the value as TOML (`0.5`, `true`,
    `"thread"`, `{ kind = "uniform", ... }`), or the text itself when it is not TOML
    (`150ns`, `thread`)."""
    out: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ScenarioError(f"--set {item!r}: write KEY=VALUE with a dotted scenario key, e.g. --set network.host.cpu=thread")
        try:
            out[key] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            out[key] = value.strip()
    return out


def main() -> None:
    """Entry point of the `pl2` console script. SIGTERM stops it like Ctrl-C: a run in
    progress stops cleanly and writes nothing (exit 143)."""
    signal.signal(signal.SIGTERM, raise_terminated)
    app(prog_name="pl2")
