"""`pl2 reproduce`: the figure registry, its argument handling, and one quick figure
end to end on the real native module."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from pl2 import reproduce as rep
from pl2.cli import EXIT_INVALID, app

runner = CliRunner()


def test_resolve_expands_all_and_lists() -> None:
    assert rep.resolve(["all"]) == rep.known()
    assert rep.resolve(["fig10,fig1", "fig10"]) == ["fig10", "fig1"]
    paper = ["fig1", "fig3_4", "fig5_6", "fig7", "fig8", "fig9", "fig10", "k_t"]
    polo = ["polo-core", "polo-edge", "polo-queue", "polo-ablation", "polo-leafspine", "polo-large-incast"]
    retcp = ["retcp-static", "retcp-variants", "retcp-dynamic", "retcp-dynamic-retcp"]
    compare = ["compare-rack", "compare-microburst", "compare-core", "compare-pod"]
    sfc = ["sfc-benefit", "sfc-fairness"]
    assert list(rep.FIGURES) == paper + polo + ["homa-slowdown"] + retcp + sfc + compare
    assert rep.resolve(["sfc"]) == rep.resolve(["sfc-*"]) == sfc and {rep.family(n) for n in sfc} == {"sfc"}
    assert rep.resolve(["compare"]) == rep.resolve(["compare-*"]) == compare
    assert {rep.family(n) for n in compare} == {"compare"}
    assert rep.resolve(["receiver-driven"]) == ["homa-slowdown"] and rep.family("homa-slowdown") == "receiver-driven"
    assert rep.resolve(["paper"]) == paper
    assert rep.resolve(["polo"]) == rep.resolve(["polo-*"]) == polo
    assert rep.resolve(["retcp"]) == rep.resolve(["retcp-*"]) == retcp
    assert {rep.family(n) for n in paper} == {"paper"} and {rep.family(n) for n in polo} == {"polo"}
    assert {rep.family(n) for n in retcp} == {"retcp"}
    assert rep.NOT_YET == {}


def test_resolve_unknown_names_the_known_ones() -> None:
    with pytest.raises(rep.UnknownFigure, match="unknown figure 'fig99'; known: all, paper, polo, receiver-driven, retcp, sfc, compare, fig1, fig3_4, fig5_6, fig7, fig8, fig9, fig10, k_t, polo-core"):
        rep.resolve(["fig99"])


def test_cli_unknown_figure_exits_2_with_the_list(tmp_path: Path) -> None:
    r = runner.invoke(app, ["reproduce", "fig99", "--quick", "--out", str(tmp_path / "o")])
    assert r.exit_code == EXIT_INVALID, r.output
    assert "unknown figure 'fig99'" in r.output
    for name in rep.known():
        assert name in r.output
    assert not (tmp_path / "o").exists()


def test_cli_bad_seeds_exits_2(tmp_path: Path) -> None:
    r = runner.invoke(app, ["reproduce", "fig10", "--seeds", "0", "--out", str(tmp_path / "o")])
    assert r.exit_code == EXIT_INVALID, r.output
    assert "--seeds 0" in r.output


def test_cli_bad_workers_exits_2(tmp_path: Path) -> None:
    r = runner.invoke(app, ["reproduce", "fig10", "--quick", "--workers", "0", "--out", str(tmp_path / "o")])
    assert r.exit_code == EXIT_INVALID, r.output
    assert "--workers 0" in r.output


@pytest.mark.real_native
def test_cli_workers_1_runs_in_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--workers 1` runs each batch serially in the pl2 process (no worker processes)."""
    from pl2 import executors

    def no_pool(self: executors.LocalExecutor) -> None:
        raise AssertionError("--workers 1 started worker processes")

    monkeypatch.setattr(executors.LocalExecutor, "_pool", no_pool)
    r = runner.invoke(app, ["reproduce", "fig10", "--quick", "--workers", "1", "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert "fig10: 3 runs to do, on this process" in r.output


def test_cli_needs_a_figure() -> None:
    r = runner.invoke(app, ["reproduce"])
    assert r.exit_code == 2


def test_empty_not_yet_writes_no_not_yet_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every figure is reproducible now: the report has no "Not yet reproducible" section
    (a stand-in figure module, so no simulation runs)."""
    from types import SimpleNamespace

    assert rep.NOT_YET == {}
    fake = SimpleNamespace(TITLE="Stand-in figure", run=lambda ctx: "body")
    monkeypatch.setitem(rep.FIGURES, "stand_in", "unused")
    monkeypatch.setattr(rep, "module", lambda name: fake)
    top = rep.reproduce(["stand_in"], out=tmp_path, quick=True, log=lambda *_: None).read_text(encoding="utf-8")
    assert "(paper/report.md): stand_in" in top
    text = (tmp_path / "paper" / "report.md").read_text(encoding="utf-8")
    assert "## Stand-in figure\n\nbody\n" in text
    assert "Not yet reproducible" not in text


def test_scorecard_counts_each_figures_claims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A figure's claims open its section, land in `claims.json`, and the family's report
    opens with a scorecard: every claim holds = matches, some = partly, none = differs,
    no claim = not scored (stand-in figure modules, so no simulation runs)."""
    import json
    from types import SimpleNamespace

    def fig(*claims: tuple[str, bool | None]) -> SimpleNamespace:
        def run(ctx: object) -> str:
            for text, holds in claims:
                ctx.claim(text, "paper value", "our value", holds)  # type: ignore[attr-defined]
            return "body"
        return SimpleNamespace(TITLE="Stand-in", run=run)

    figs = {"s_all": fig(("a holds", True), ("b holds", True)), "s_some": fig(("c holds", True), ("d fails", False)),
            "s_none": fig(("e fails", False), ("f n/a", None)), "s_bare": fig()}
    for name in figs:
        monkeypatch.setitem(rep.FIGURES, name, "unused")
    monkeypatch.setattr(rep, "module", lambda name: figs[name])
    rep.reproduce(list(figs), out=tmp_path, quick=True, log=lambda *_: None)
    text = (tmp_path / "paper" / "report.md").read_text(encoding="utf-8")
    card = text[text.index("## Scorecard"):text.index("## Stand-in")]
    assert "| s_all | matches | 2 of 2 | – |" in card
    assert "| s_some | partly | 1 of 2 | d fails |" in card
    assert "| s_none | differs | 0 of 1 | e fails |" in card
    assert "| s_bare | not scored | – | – |" in card
    some = json.loads((tmp_path / "paper" / "s_some" / "claims.json").read_text(encoding="utf-8"))
    assert some["verdict"] == "partly" and [c["holds"] for c in some["claims"]] == [True, False]
    assert "| d fails | paper value | our value | does not hold |" in (tmp_path / "paper" / "s_some" / "report.md").read_text(encoding="utf-8")


def test_a_figure_that_fails_leaves_its_files_to_the_next_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A figure that raises after writing a table: the error reaches the caller, and the
    files it wrote are in the manifest, so running it again into the same directory
    replaces them instead of refusing them as files pl2 did not write."""
    from types import SimpleNamespace

    import polars as pl

    fail = {"now": True}

    def run(ctx: object) -> str:
        ctx.write_parquet(pl.DataFrame({"x": [1]}), "table")  # type: ignore[attr-defined]
        if fail["now"]:
            raise RuntimeError("figure failed after writing its table")
        return "body"

    monkeypatch.setitem(rep.FIGURES, "s_fails", "unused")
    monkeypatch.setattr(rep, "module", lambda name: SimpleNamespace(TITLE="Stand-in", run=run))
    with pytest.raises(RuntimeError, match="after writing its table"):
        rep.reproduce(["s_fails"], out=tmp_path, quick=True, log=lambda *_: None)
    fail["now"] = False
    rep.reproduce(["s_fails"], out=tmp_path, quick=True, log=lambda *_: None)
    assert (tmp_path / "paper" / "s_fails" / "table.parquet").is_file()
    assert "## Stand-in\n\nbody\n" in (tmp_path / "paper" / "s_fails" / "report.md").read_text(encoding="utf-8")


def test_testbed_profile_is_package_data() -> None:
    from pl2.reproduce.common import testbed

    d = testbed()
    assert d["network"]["switch"]["port_limit"] == "1500000B"
    assert "workload" not in d and "transport" not in d


@pytest.mark.real_native
def test_fig10_quick_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "tmp"
    r = runner.invoke(app, ["reproduce", "fig10", "--quick", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "(paper/report.md): fig10" in (out / "report.md").read_text(encoding="utf-8")
    report = (out / "paper" / "report.md").read_text(encoding="utf-8")
    assert "Code version: git" in report and "Wall time:" in report and "Seeds: 1" in report
    assert "Fig. 10" in report and "≤ 90" in report
    pngs = list(out.rglob("*.png"))
    parquets = [p for p in out.rglob("*.parquet") if "store" not in p.parts]
    assert pngs and list(out.rglob("*.svg"))
    assert parquets
    df = pl.read_parquet(out / "paper" / "fig10" / "fig10.parquet")
    assert df.height >= 1 and (df["goodput_gbps"] > 50).all()
    # a re-run reuses the stored runs
    r2 = runner.invoke(app, ["reproduce", "fig10", "--quick", "--out", str(out)])
    assert r2.exit_code == 0, r2.output
    assert re.search(r"\(0 runs, \d+ reused from the store\)", (out / "paper" / "report.md").read_text(encoding="utf-8"))


COMMITTED = Path(__file__).resolve().parents[2] / "results" / "paper"


def test_fig8_regenerates_from_its_committed_parquet(tmp_path: Path) -> None:
    """The committed report's Fig. 8 section and figure come from the committed Parquet:
    redrawing from that table gives the same claims and Markdown, word for word, and a
    figure."""
    from pl2.reproduce import fig8
    from pl2.reproduce.common import Context, claims_table

    df = pl.read_parquet(COMMITTED / "fig8" / "fig8.parquet")
    ctx = Context(out=tmp_path, store=None, seeds=sorted(set(df["seed"].to_list())), quick=False)  # type: ignore[arg-type]
    body = fig8.plot_and_report(ctx, df)
    report = (COMMITTED / "report.md").read_text(encoding="utf-8")
    assert ctx.claims, "Fig. 8 checks the paper's claims"
    assert f"## {fig8.TITLE}\n\n{claims_table(ctx.claims)}\n\n{body}\n" in report
    assert (tmp_path / "fig8.png").stat().st_size > 10_000
    assert (tmp_path / "fig8.svg").exists()


@pytest.mark.real_native
def test_set_overrides_every_run_and_names_bad_input(tmp_path: Path) -> None:
    """`--set KEY=VALUE` reaches every run's scenario (a new run key, the value in the
    scenario) and a malformed one exits 2 with the form to use."""
    import tomllib

    from pl2.cli import _parse_sets
    from pl2.reproduce.common import Job, _plan, scenario

    assert _parse_sets(["network.host.cpu=thread", "a.b=0.5", "c=\"x\"", "d = 150ns"]) == {
        "network.host.cpu": "thread", "a.b": 0.5, "c": "x", "d": "150ns"}
    sc = scenario("s", {"kind": "pl2"}, [{"kind": "incast", "senders": "0..2", "receiver": 5, "size": "6000B"}],
                  warmup_ms=0.1, until_ms=0.5, duration_ms=0.6)
    job = Job(sc, {}, 1, "t")
    plain_id, _ = _plan(job, "code")
    over_id, over = _plan(job, "code", {"network.host.cpu": "thread", "network.host.send_cpu_per_packet": "150ns"})
    assert plain_id != over_id
    host = tomllib.loads(over.text)["network"]["host"]
    assert host["cpu"] == "thread" and host["send_cpu_per_packet"] == "150ns"
    r = runner.invoke(app, ["reproduce", "fig10", "--quick", "--set", "oops", "--out", str(tmp_path / "o")])
    assert r.exit_code == EXIT_INVALID and "KEY=VALUE" in r.output
    assert not (tmp_path / "o").exists()
