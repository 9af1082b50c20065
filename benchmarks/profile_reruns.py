"""Where one rerun's CPU goes, per page and interaction (issue 18's profile).

    HF_HUB_OFFLINE=1 python benchmarks/profile_reruns.py [--repeats 5] [--corpus cacm]

For each page and interaction (a K change, a page switch, a golden edit) it runs the app under
``streamlit.testing.v1.AppTest`` with :mod:`cProfile` on, and splits the CPU time of the rerun into
the parts a rerun is made of, by the cumulative time of their entry points:

``charts``      Vega-Lite / Altair specs built and marshalled (``st.vega_lite_chart``, ``st.altair_chart``)
``tables``      dataframes and editors marshalled to Arrow (``st.dataframe``, ``st.data_editor``, ``st.table``)
``bootstrap``   confidence intervals (``rag_metrics.evaluation`` bootstrap)
``evaluation``  judging and kernels (``rag_metrics.evaluation.evaluate`` and friends)
``cache keys``  hashing the arguments of ``st.cache_data`` calls
``compile``     reading and compiling page scripts (AppTest recompiles on every run; a real server
                compiles once per process, so this part is AppTest's own)
``state``       the sidebar and session state (``ui.sidebar``, ``ui.state.current`` without the
                evaluation and bootstrap inside it)
``other``       everything else (markdown, metrics, widgets, Streamlit's own script runner)

The corpus is the shipped sample, or with ``--corpus cacm`` the CACM collection of
``../shared/datasets`` (3,204 documents) loaded as a BEIR-like corpus, so the cost on a larger
corpus can be compared.  Writes the table to stdout and appends it to ``results/profile.txt``.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAG_METRICS_WARM", "0")

#: (part, file substring, function name) entry points; a part's time is the largest cumulative
#: time among its entry points' records (nested calls of one entry point are counted once).
PARTS: dict[str, tuple[tuple[str, str], ...]] = {
    "charts": (("streamlit/elements/vega_charts.py", "vega_lite_chart"),
               ("streamlit/elements/vega_charts.py", "altair_chart")),
    "tables": (("streamlit/elements/arrow.py", "dataframe"), ("streamlit/elements/arrow.py", "table"),
               ("streamlit/elements/widgets/data_editor.py", "data_editor")),
    "bootstrap": (("rag_metrics/evaluation.py", "bootstrap_ci"),),
    "evaluation": (("ui/cache.py", "evaluation"), ("ui/cache.py", "evaluated")),
    "cache keys": (("streamlit/runtime/caching/cache_utils.py", "_make_value_key"),),
    "compile": (("streamlit/runtime/scriptrunner/script_cache.py", "get_bytecode"),),
    "state": (("ui/state.py", "current"), ("ui/sidebar.py", "render")),
}
#: Parts measured inside others (their time is taken out of the outer part once).
NESTED = {"state": ("bootstrap", "evaluation")}


def _split(stats: pstats.Stats, total: float) -> dict[str, float]:
    out: dict[str, float] = {}
    raw = stats.stats  # type: ignore[attr-defined]
    for part, entries in PARTS.items():
        t = 0.0
        for (fname, _line, func), (_cc, _nc, _tt, ct, _callers) in raw.items():
            if any(fname.endswith(f) or f in fname for f, fn in entries if fn == func):
                t += ct
        out[part] = t
    for outer, inner in NESTED.items():
        out[outer] = max(0.0, out[outer] - sum(out[i] for i in inner))
    out["other"] = max(0.0, total - sum(out.values()))
    return out


_PROFILE: dict[str, cProfile.Profile | None] = {"current": None}


def _hook_script_thread() -> None:
    """AppTest runs the page script in a thread of its own: profile inside that thread."""
    from streamlit.testing.v1.local_script_runner import LocalScriptRunner

    original = LocalScriptRunner._run_script_thread

    def profiled(self) -> None:  # type: ignore[no-untyped-def]
        prof = _PROFILE["current"]
        if prof is None:
            return original(self)
        t = time.thread_time()
        prof.enable()
        try:
            return original(self)
        finally:
            prof.disable()
            _PROFILE["cpu"] = _PROFILE.get("cpu", 0.0) + time.thread_time() - t  # type: ignore[operator]

    LocalScriptRunner._run_script_thread = profiled  # type: ignore[method-assign]


def _profile(fn) -> tuple[float, dict[str, float]]:
    prof = cProfile.Profile()
    _PROFILE["current"], _PROFILE["cpu"] = prof, 0.0  # type: ignore[assignment]
    try:
        fn()
    finally:
        _PROFILE["current"] = None
    cpu = float(_PROFILE["cpu"] or 0.0)  # type: ignore[arg-type]
    return cpu, _split(pstats.Stats(prof), max(cpu, 1e-9))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--corpus", choices=("sample", "cacm"), default="sample")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    tmp = Path(tempfile.mkdtemp(prefix="profile_reruns_"))
    os.environ.setdefault("RAG_METRICS_CACHE", str(Path.home() / ".cache" / "rag_metrics_bench"))
    os.environ["RAG_METRICS_WORKSPACE"] = str(tmp / "ws")
    from streamlit.testing.v1 import AppTest

    _hook_script_thread()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    if args.corpus == "cacm":
        _load_cacm(at)
    at.run()
    rows: list[tuple[str, float, dict[str, float]]] = []

    def measure(label: str, prepare, act) -> None:
        cpus, parts = [], []
        for i in range(args.repeats):
            prepare(i)
            cpu, split = _profile(lambda i=i: act(i))
            assert not at.exception, [e.value for e in at.exception]
            cpus.append(cpu)
            parts.append(split)
        med = statistics.median(cpus)
        mean_split = {p: statistics.mean(s[p] for s in parts) for p in parts[0]}
        rows.append((label, med, mean_split))

    pages = ["pages/dashboard.py", "pages/failures.py", "pages/compare.py", "pages/systems.py",
             "pages/golden_set.py", "pages/ragas.py", "pages/health.py", "pages/presenter.py", "pages/learn.py"]
    for page in pages:
        at.switch_page(page).run()
        measure(f"K change · {page.split('/')[-1][:-3]}", lambda i: None,
                lambda i: at.slider(key="k").set_value(6 + (i % 20)).run())
        at.slider(key="k").set_value(5).run()
    for page in pages:
        measure(f"page switch → {page.split('/')[-1][:-3]}",
                lambda i: at.switch_page("pages/corpus_explorer.py").run(),
                lambda i, page=page: at.switch_page(page).run())

    def golden_prepare(i: int) -> None:
        at.switch_page("pages/golden_set.py").run()

    def golden_edit(i: int) -> None:
        key = next(k for k in (f"golden_editor_{j}" for j in range(400)) if k in at.session_state)
        at.session_state[key] = {"edited_rows": {0: {"expected_answer": f"profile edit {i}"}},
                                 "added_rows": [], "deleted_rows": []}
        at.run()
    measure("golden edit · golden_set (autosave)", golden_prepare, golden_edit)

    width = max(len(r[0]) for r in rows)
    head = f"{'rerun (' + args.corpus + ')':<{width}}  cpu ms  " + "  ".join(f"{p:>10}" for p in [*PARTS, "other"])
    lines = [time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()) + f"  profile_reruns --corpus {args.corpus} "
             f"--repeats {args.repeats} (median CPU per rerun; parts as % of it, cProfile on)", head, "-" * len(head)]
    for label, cpu, split in rows:
        shares = "  ".join(f"{100 * split[p] / max(cpu, 1e-9):9.0f}%" for p in [*PARTS, "other"])
        lines.append(f"{label:<{width}}  {cpu * 1000:6.0f}  {shares}")
    text = "\n".join(lines)
    print(text)
    out = ROOT / "benchmarks" / "results" / "profile.txt"
    with out.open("a", encoding="utf-8") as f:
        f.write(text + "\n\n")
    return 0


def _load_cacm(at) -> None:  # pragma: no cover - needs ../shared/datasets
    """Open the CACM collection as the current corpus through the Corpus explorer's BEIR folder field
    (document-level labels; the first run embeds its chunks, later runs read the embedding cache)."""
    src = ROOT.parent / "shared" / "datasets" / "cacm"
    if not src.is_dir():
        raise SystemExit(f"{src}: not found; run from a checkout beside ../shared/datasets")
    at.switch_page("pages/corpus_explorer.py").run()
    at.text_input(key="beir_path").set_value(str(src)).run()
    at.button(key="beir_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("pages/dashboard.py").run()


if __name__ == "__main__":
    raise SystemExit(main())
