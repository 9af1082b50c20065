"""The tutor as a student meets it (issue 48): from pressing "Ask" to the first streamed word, to the whole
answer with its citations, and to the answer without a model.

Starts the app (``python -m ui.launch``, as ``./lab app`` does) on a fresh loopback port with an empty
workspace and the operator's ``[lab.judge]`` pointing at the tests' scripted, streaming loopback model
(``tests/tutor_server.py``: no think time, one word per chunk), then in headless Chromium, on the lesson's
hit-rate step:

- first token: "Ask" pressed until the first word of the model's reply is drawn in the tutor's box;
- answer:      until the whole answer and its citations ("From the course:") are drawn;
- no model:    with ``[lab.judge]`` removed from the configuration (the app reads it on every question), "Ask"
               until the course's passages are drawn ("No tutor model is configured").

Each question is new (no reply from the cache).  The first question of a process is reported apart: it is asked
``--typing`` seconds after the page is drawn (a student typing it), while the tutor's index is built in the
background (``ui.tutor._warm_index``; warming on, as a class runs).  Figures are printed, never asserted.  Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_tutor_ui.py [--questions 5]
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
REPLY = ("Look at the line where you add to your count: do you add once per question, or once per relevant chunk? "
         "Try it on a question with two relevant chunks in the top k [1].")
WHERE = "lesson:retrieval:hit_rate"


def _config(path: Path, base_url: str | None) -> None:
    judge = f'[lab.judge]\nbase_url = "{base_url}"\nchat_model = "scripted"\n' if base_url else ""
    path.write_text("[lab]\n" + judge, encoding="utf-8")


def _server(tmp: Path, config: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAG_METRICS_WORKSPACE": str(tmp / "ws"),
           "RAG_METRICS_CONFIG": str(config)}
    env.pop("RAG_METRICS_WARM", None)  # as a class runs: warming on
    log = open(tmp / "server.log", "w")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen([sys.executable, "-m", "ui.launch", "--server.headless", "true", "--server.address",
                             "127.0.0.1", "--server.port", str(port)], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(480):
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).status == 200:
                return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the app did not start: " + (tmp / "server.log").read_text()[-2000:])


def _ask(page, box, question: str, until: str) -> tuple[float, float]:
    """Seconds from "Ask" to the first word of the reply and to ``until`` drawn in the box."""
    box.locator("textarea").fill(question)
    handle = box.element_handle()
    first = REPLY.split()[0]
    t0 = time.perf_counter()
    box.get_by_role("button", name="Ask", exact=True).click()
    page.wait_for_function("([b, w]) => b.innerText.includes(w)", arg=[handle, first if until != "none" else
                                                                        "No tutor model"], timeout=300_000,
                           polling="raf")
    t_first = time.perf_counter() - t0
    page.wait_for_function("([b, w]) => b.innerText.includes(w)", arg=[handle, until if until != "none" else
                                                                        "No tutor model"], timeout=300_000,
                           polling="raf")
    return t_first, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--typing", type=float, default=10.0,
                    help="seconds between the page drawn and the first question (a student typing it)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright
    from tutor_server import TutorServer

    from ui.tutor import _slug

    with tempfile.TemporaryDirectory() as d, TutorServer({}, default=REPLY) as model:
        tmp = Path(d)
        config = tmp / "lab.toml"
        _config(config, model.base_url)
        proc, url = _server(tmp, config)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                page.goto(f"{url}/lesson?lesson=retrieval&step=2")
                box = page.locator(f".st-key-tutor_box_{_slug(WHERE)}")
                box.wait_for(timeout=300_000)
                time.sleep(args.typing)
                cold = _ask(page, box, "Why is my hit rate above 1? (cold)", "From the course:")
                firsts, answers = [], []
                for i in range(args.questions):
                    f, a = _ask(page, box, f"Why is my hit rate above 1? ({i})", "From the course:")
                    firsts.append(f)
                    answers.append(a)
                _config(config, None)
                plain = [_ask(page, box, f"Why is my hit rate above 1? (no model {i})", "none")[1]
                         for i in range(args.questions)]
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    med = statistics.median
    print(f"first question of the process, {args.typing:g} s after the page was drawn: first token {cold[0]:.2f} s, "
          f"answer {cold[1]:.2f} s")
    print(f"Ask -> first streamed token: median {med(firsts):.2f} s (min {min(firsts):.2f}, max {max(firsts):.2f}; "
          f"{len(firsts)} questions, loopback model, no think time)")
    print(f"Ask -> whole answer with citations: median {med(answers):.2f} s (max {max(answers):.2f})")
    print(f"Ask -> answer without a model (passages): median {med(plain):.2f} s (max {max(plain):.2f})")


if __name__ == "__main__":
    main()
