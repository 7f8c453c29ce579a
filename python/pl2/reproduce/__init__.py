"""`pl2 reproduce`: published evaluations reproduced beside their claims, in families: the
PL2 paper's figures (`paper`), the Polo slides' evaluation against Homa, NDP and pHost
(`polo`), slowdown by message size in the Homa paper's network (`receiver-driven`), the
reTCP slides' reconfigurable-network experiments (`retcp`), the SFC slides' simulations
(`sfc`), and every design pl2 has on the same networks (`compare`, issue 26). One module per figure (or experiment), each building its scenarios, running them
into a results store under the output directory (a re-run reuses finished runs), writing
Parquet data and PNG/SVG figures, and returning a Markdown section that sets our numbers
beside the published ones. `reproduce(names, out, quick, seeds, executor)` writes each
family's figures and its `report.md` into `<out>/<family>/` (so `--out results` gives
`results/paper/` and `results/polo/` side by side), one store `<out>/store/` for all, and
an index `<out>/report.md` of the families there. A figure submits its independent runs
as one batch to an executor (local worker processes by default, or Ray); workers only
simulate, and this process alone writes the store."""

from __future__ import annotations

import dataclasses
import fnmatch
import importlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pl2 import _ffi, outdir
from pl2.executors import Executor, LocalExecutor
from pl2.store import open_store

#: Figures pl2 can reproduce: name -> module in this package.
FIGURES: dict[str, str] = {
    "fig1": "pl2.reproduce.fig1",
    "fig3_4": "pl2.reproduce.fig3_4",
    "fig5_6": "pl2.reproduce.fig5_6",
    "fig7": "pl2.reproduce.fig7",
    "fig8": "pl2.reproduce.fig8",
    "fig9": "pl2.reproduce.fig9",
    "fig10": "pl2.reproduce.fig10",
    "k_t": "pl2.reproduce.k_t",
    "polo-core": "pl2.reproduce.polo.core",
    "polo-edge": "pl2.reproduce.polo.edge",
    "polo-queue": "pl2.reproduce.polo.queue",
    "polo-ablation": "pl2.reproduce.polo.ablation",
    "polo-leafspine": "pl2.reproduce.polo.leafspine",
    "polo-large-incast": "pl2.reproduce.polo.large_incast",
    "homa-slowdown": "pl2.reproduce.receiver_driven.homa_slowdown",
    "retcp-static": "pl2.reproduce.retcp.static",
    "retcp-variants": "pl2.reproduce.retcp.variants",
    "retcp-dynamic": "pl2.reproduce.retcp.dynamic",
    "retcp-dynamic-retcp": "pl2.reproduce.retcp.dynamic_retcp",
    "sfc-benefit": "pl2.reproduce.sfc.benefit",
    "sfc-fairness": "pl2.reproduce.sfc.fairness",
    "compare-rack": "pl2.reproduce.compare.rack",
    "compare-microburst": "pl2.reproduce.compare.microburst",
    "compare-core": "pl2.reproduce.compare.core",
    "compare-pod": "pl2.reproduce.compare.pod",
}


@dataclass(frozen=True)
class Family:
    """A published evaluation: its figures are written into `<out>/<name>/`, with an
    index `report.md` there under `title` and the lines `preamble()` returns."""

    name: str
    title: str
    preamble: Callable[[], list[str]]


def _paper_preamble() -> list[str]:
    return [
        "- Profile: the PL2 testbed (`pl2/reproduce/testbed.toml` = `examples/pl2-incast-testbed.toml`): 6 hosts at 100G, "
        "MTU 1500, measured switch latency, 1.5 MB static port limit (120 µs at 100 Gbps), 12 threads per host, host delays "
        "calibrated to the idle RSV-GRT exchange. PL2 K = 4, t = 15 unless a sweep changes them. Nothing is tuned to the paper.",
    ]


def _retcp_preamble() -> list[str]:
    from pl2.reproduce.retcp.common import preamble

    return preamble()


def _sfc_preamble() -> list[str]:
    from pl2.reproduce.sfc.common import preamble

    return preamble()


def _polo_preamble() -> list[str]:
    from pl2.reproduce.polo.common import preamble

    return preamble()


def _receiver_driven_preamble() -> list[str]:
    from pl2.reproduce.receiver_driven.common import preamble

    return preamble()


def _compare_preamble() -> list[str]:
    from pl2.reproduce.compare.designs import preamble

    return preamble()


#: What full mode means in each family, for the sections' stamps.
FULL_MODE: dict[str, str] = {"paper": "≥ 10 ms of steady state per run", "polo": "the settings each section states",
                             "receiver-driven": "the windows the section states",
                             "retcp": "500 measured weeks after 50 warm-up weeks per run",
                             "sfc": "the settings each section states",
                             "compare": "the settings each section states"}

#: The families, in the order of the index.
FAMILIES: dict[str, Family] = {
    "paper": Family("paper", "PL2 paper reproduction (`pl2 reproduce`)", _paper_preamble),
    "polo": Family("polo", "Polo evaluation reproduced: Polo against Homa, NDP and pHost (`pl2 reproduce polo`)", _polo_preamble),
    "receiver-driven": Family("receiver-driven", "Receiver-driven transports: slowdown by message size in the Homa paper's "
                              "network (`pl2 reproduce receiver-driven`)", _receiver_driven_preamble),
    "retcp": Family("retcp", "reTCP (NSDI 2020) reproduced: TCP over a reconfigurable datacenter network (`pl2 reproduce retcp`)", _retcp_preamble),
    "sfc": Family("sfc", "Source Flow Control (IEEE 802.1Qdw) slides reproduced: SFC against PFC under DCQCN (`pl2 reproduce sfc`)",
                  _sfc_preamble),
    "compare": Family("compare", "Every design on the same network (`pl2 reproduce compare`)", _compare_preamble),
}

#: Figure name prefixes of the families other than `paper`.
_PREFIX: dict[str, str] = {"polo-": "polo", "homa-": "receiver-driven", "retcp-": "retcp", "sfc-": "sfc", "compare-": "compare"}


def family(name: str) -> str:
    """The family a figure belongs to, by its name's prefix (`_PREFIX`), else `paper`."""
    return next((f for p, f in _PREFIX.items() if name.startswith(p)), "paper")

#: Figures of the paper that need applications pl2 does not have yet: name -> reason.
NOT_YET: dict[str, str] = {}

QUICK_SEEDS = 1
FULL_SEEDS = 5


class UnknownFigure(ValueError):
    """A figure name that is neither reproducible nor listed as not yet reproducible."""


def known() -> list[str]:
    return list(FIGURES) + list(NOT_YET)


def resolve(names: Sequence[str]) -> list[str]:
    """Expands `all`, family names (`paper`, `polo`), shell patterns (`polo-*`) and
    comma-separated lists; keeps order, drops repeats. Raises UnknownFigure naming the
    known figures."""
    out: list[str] = []
    for raw in names:
        for n in (x.strip() for x in raw.split(",")):
            if not n:
                continue
            if n == "all":
                expanded = known()
            elif n in FAMILIES:
                expanded = [k for k in known() if family(k) == n]
            elif any(c in n for c in "*?["):
                expanded = [k for k in known() if fnmatch.fnmatchcase(k, n)] or [n]
            else:
                expanded = [n]
            for e in expanded:
                if e not in FIGURES and e not in NOT_YET:
                    raise UnknownFigure(f"unknown figure {e!r}; known: all, {', '.join(FAMILIES)}, {', '.join(known())}")
                if e not in out:
                    out.append(e)
    if not out:
        raise UnknownFigure(f"no figure named; known: all, {', '.join(FAMILIES)}, {', '.join(known())}")
    return out


def module(name: str) -> ModuleType:
    return importlib.import_module(FIGURES[name])


def reproduce(
    names: Sequence[str],
    out: str | Path = "out/reproduce",
    quick: bool = False,
    seeds: int | None = None,
    log: Callable[[str], Any] = print,
    executor: Executor | None = None,
    progress: bool = False,
    force: bool = False,
    overrides: Mapping[str, Any] | None = None,
) -> Path:
    """Runs the figures `names` (see `resolve`), writes each figure's section to
    `<out>/<family>/<figure>/report.md`, each family's index `<out>/<family>/report.md`
    (every figure of that family reproduced into `out` so far, each with the code
    version, mode, seeds and wall time of the run that made it) and the index of
    families `<out>/report.md`; returns that index's path. A later run of some figures
    into the same directory replaces only those figures' files. `out` must be new, empty
    or an earlier reproduction (its manifest `.pl2-run` says so); anything else raises
    OutputPathError, unless `force` (write beside the files there, replacing none pl2
    did not write; see `pl2.outdir`). `executor` runs each figure's batch of runs
    (default: `LocalExecutor()`, one worker process per CPU, kept for all the figures;
    `SerialExecutor()` runs them in this process; a `RayExecutor` on Ray). `progress`
    logs how far each batch is (a bar on a terminal). `overrides` (dotted scenario paths
    to values, as `Scenario.with_overrides` takes) apply to every run of every figure:
    a sensitivity study, not the published setting; each section's stamp lists them."""
    from pl2.reproduce.common import Context, claims_table, verdict

    figs = resolve(names)
    n_seeds = seeds if seeds is not None else (QUICK_SEEDS if quick else FULL_SEEDS)
    if n_seeds < 1:
        raise ValueError(f"--seeds {n_seeds}: needs at least 1 seed")
    seed_list = list(range(1, n_seeds + 1))
    target = outdir.prepare(out, "reproduce", force=force, grows=True)
    target.claim(f"{STORE_DIR}/")
    try:
        target.save()
    except OSError as e:
        raise outdir.os_error(target.path, e) from None
    out = target.path
    store = open_store(out / STORE_DIR)
    store.clean_tmp()
    executor = executor if executor is not None else LocalExecutor()
    info = _ffi.call("build_info")
    t_all = time.monotonic()
    with executor if isinstance(executor, AbstractContextManager) else nullcontext():
        for name in [n for n in figs if n not in NOT_YET]:
            mod = module(name)
            fam = family(name)
            ctx = Context(out=out / fam / name, store=store, seeds=seed_list, quick=quick, log=log, executor=executor,
                          progress=progress, target=target, overrides=dict(overrides or {}))
            ctx.out.mkdir(parents=True, exist_ok=True)
            log(f"{name}: running")
            t0 = time.monotonic()
            try:
                body = mod.run(ctx)
            finally:
                # The files the figure wrote are pl2's even if it failed: recorded, a
                # later run into this directory may replace them.
                target.save()
            wall = time.monotonic() - t0
            files = ", ".join(f"`{p.relative_to(out / fam)}`" for p in ctx.figures + ctx.data)
            stamp = _stamp(info, quick, seed_list, f"{wall:.1f} s ({ctx.runs} runs, {ctx.reused} reused from the store)",
                           full=FULL_MODE[fam], overrides=ctx.overrides)
            claims = f"{claims_table(ctx.claims)}\n\n" if ctx.claims else ""
            section = f"## {mod.TITLE}\n\n{claims}{body}\n\nFiles: {files}.\n\n{stamp}\n"
            target.claim(f"{fam}/{name}/{SECTION_FILE}").write_text(section, encoding="utf-8")
            score = {"verdict": verdict(ctx.claims), "claims": [dataclasses.asdict(c) for c in ctx.claims]}
            target.claim(f"{fam}/{name}/{SCORE_FILE}").write_text(json.dumps(score, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            target.save()
            log(f"{name}: {wall:.1f} s, {ctx.runs} runs, {ctx.reused} reused")
    wall_all = time.monotonic() - t_all
    for fam in FAMILIES:
        asked = [n for n in figs if family(n) == fam]
        if asked or _present(out, target, fam):
            target.claim(f"{fam}/{REPORT_FILE}").write_text(_index(out, target, fam, asked), encoding="utf-8")
    path = target.claim(REPORT_FILE)
    path.write_text(_top_index(out, target), encoding="utf-8")
    target.save()
    log(f"wrote {path} in {wall_all:.1f} s")
    return path


#: Each figure's section, in the figure's own directory.
SECTION_FILE = "report.md"
#: The index of every figure of a family reproduced into a directory, and the index of
#: the families.
REPORT_FILE = "report.md"
#: Each figure's claims and verdict (JSON), beside its section.
SCORE_FILE = "claims.json"
#: The results store inside a reproduction's directory.
STORE_DIR = "store"


def _stamp(info: dict[str, Any], quick: bool, seed_list: Sequence[int], wall: str, full: str = "≥ 10 ms of steady state per run",
           overrides: Mapping[str, Any] | None = None) -> str:
    """The lines that say how a figure's section was made."""
    sha = str(info.get("git_sha", "?"))[:12] + (" (dirty)" if info.get("git_dirty") == "true" else "")
    return "\n".join([
        f"- Code version: git `{sha}`, source hash `{info.get('source_hash', '?')}`, pl2 {info.get('version', '?')} "
        f"({info.get('profile', '?')}, {info.get('rustc', '?')}).",
        f"- Mode: {'quick (short windows, fewer points; not the committed numbers)' if quick else f'full ({full})'}.",
        f"- Seeds: {', '.join(map(str, seed_list))}" + (" (statistics are mean ± 95% interval over seeds, Student's t)" if len(seed_list) > 1 else " (one seed: no intervals)") + ".",
        f"- Wall time: {wall}.",
        *([f"- Overrides on every run (`--set`; not the published setting): "
           + ", ".join(f"`{k} = {json.dumps(v, ensure_ascii=False)}`" for k, v in overrides.items()) + "."] if overrides else []),
    ])


def _present(out: Path, target: outdir.Target, fam: str) -> list[str]:
    """The figures of family `fam` whose section pl2 wrote into `out`, in registry order."""
    return [n for n in FIGURES if family(n) == fam and target.manifest.owns(f"{fam}/{n}/{SECTION_FILE}")
            and (out / fam / n / SECTION_FILE).is_file()]


def _index(out: Path, target: outdir.Target, fam: str, asked: Sequence[str]) -> str:
    """A family's index report: every figure of it whose section pl2 wrote into `out`,
    in the family's order, then the figures asked for that cannot be reproduced yet."""
    f = FAMILIES[fam]
    present = _present(out, target, fam)
    head = [
        f"# {f.title}",
        "",
        *f.preamble(),
        "- Runs are in the results store `../store/` (open with `pl2.open_store`); re-running reuses them.",
        f"- Figures here: {', '.join(present) or 'none'}. Each section below is `<figure>/report.md`, stamped with the code "
        "version, mode, seeds and wall time of the run that made it; reproducing some figures again replaces only theirs.",
        "",
    ]
    sections = [(out / fam / n / SECTION_FILE).read_text(encoding="utf-8") for n in present]
    missing = [n for n in asked if n in NOT_YET]
    tail = ["## Not yet reproducible", "", table_missing(missing), ""] if missing else []
    return "\n".join(head + _scorecard(out, fam, present) + sections + tail)


def _scorecard(out: Path, fam: str, present: Sequence[str]) -> list[str]:
    """The family's scorecard: per figure its verdict (every published claim it checks
    holds: matches; some: partly; none: differs) and the claims that do not hold."""
    from pl2.reproduce.common import table

    rows = []
    for n in present:
        p = out / fam / n / SCORE_FILE
        score = json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {"verdict": "not scored", "claims": []}
        claims = score["claims"]
        judged = [c for c in claims if c["holds"] is not None]
        held = sum(1 for c in judged if c["holds"])
        failing = "; ".join(c["text"] for c in judged if not c["holds"])
        rows.append([n, score["verdict"], f"{held} of {len(judged)}" if judged else "–", failing or "–"])
    if not rows:
        return []
    return ["## Scorecard", "",
            "Each figure's published claims, checked against our measurements (the tables in each section give the "
            "numbers and tolerances): matches = every claim holds, partly = some do, differs = none does.", "",
            table(["figure", "verdict", "claims holding", "claims that do not hold"], rows), ""]


def _top_index(out: Path, target: outdir.Target) -> str:
    """The index of the families reproduced into `out`."""
    lines = ["# Reproductions (`pl2 reproduce`)", ""]
    for fam, f in FAMILIES.items():
        present = _present(out, target, fam)
        if present:
            lines.append(f"- [{f.title}]({fam}/{REPORT_FILE}): {', '.join(present)}.")
    lines += ["", f"The results store of every run is `{STORE_DIR}/`.", ""]
    return "\n".join(lines)


def table_missing(names: Sequence[str]) -> str:
    from pl2.reproduce.common import table

    return table(["figure", "why not yet"], [[n, NOT_YET[n]] for n in names])


__all__ = ["FAMILIES", "FIGURES", "NOT_YET", "family", "UnknownFigure", "known", "reproduce", "resolve"]

