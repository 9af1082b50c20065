"""Class-mode forms (AppTest, ``RAG_METRICS_CLASS_MODE=1`` and ``RAG_METRICS_CONFIG`` pointing to a
temporary TOML): the connection form offers the class's connections and stores only their name,
typed settings never resolve a server variable, no field names a variable, the judge is the
operator's (its key sent only to it), the BEIR field is a select of the class's datasets.  Dummy
secrets sit in the environment and the TOML; recording listeners show none leaves."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from answers_server import JudgeServer, Scenario, _Handler
from loopback import PgRecorder, RawServer

from app_helpers import no_exception

ROOT = Path(__file__).resolve().parents[1]
ENV_SECRETS = {"RAG_METRICS_JUDGE_KEY": "env-judge-key-A1", "PGPASSWORD": "env-pg-A2", "MY_TOKEN": "env-token-A3"}
TOML_TOKEN, JUDGE_KEY, CONN_KEY = "toml-token-A4", "toml-judge-key-A5", "toml-conn-key-A6"
ALL = [*ENV_SECRETS.values(), TOML_TOKEN, JUDGE_KEY, CONN_KEY]


def _ranking_reply(conn, request):
    body = json.dumps([{"id": "pricing#0", "score": 1.0}]).encode()
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))


def _beir(folder: Path) -> None:
    folder.mkdir(parents=True)
    docs = [{"_id": f"d{i}", "title": f"T{i}", "text": f"Doc {i} text."} for i in range(3)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "doc one?"}) + "\n")
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")


@pytest.fixture
def judge():
    auth: list[str] = []
    orig = _Handler.do_POST

    def recording(self):
        auth.append(str(self.headers.get("Authorization")))
        orig(self)

    _Handler.do_POST = recording
    try:
        with JudgeServer(Scenario()) as srv:
            srv.auth = auth
            yield srv
    finally:
        _Handler.do_POST = orig


@pytest.fixture
def lab(app_env, tmp_path, monkeypatch, judge, proven_browser):
    for k, v in ENV_SECRETS.items():
        monkeypatch.setenv(k, v)
    conn = RawServer(_ranking_reply)
    typed = RawServer(_ranking_reply)
    pg = PgRecorder(5)
    data = tmp_path / "data"
    _beir(data / "mini-beir")
    _beir(tmp_path / "outside-beir")
    toml = tmp_path / "lab.toml"
    toml.write_text(f"""
MY_TOKEN = "{TOML_TOKEN}"

[lab]
allow = ["127.0.0.1:{typed.port}", "127.0.0.1:{pg.port}"]
data_roots = ["{data}"]

[lab.judge]
base_url = "{judge.base_url}"
chat_model = "class-chat"
api_key = "{JUDGE_KEY}"

[lab.connections.course]
kind = "http"
url = "http://127.0.0.1:{conn.port}/search"
headers = {{ Authorization = "Bearer {CONN_KEY}" }}
""")
    monkeypatch.setenv("RAG_METRICS_CONFIG", str(toml))
    monkeypatch.setenv("RAG_METRICS_CLASS_MODE", "1")
    yield {"conn": conn, "typed": typed, "judge": judge, "tmp": tmp_path, "pg": pg}
    conn.close()
    typed.close()
    pg.close()


def _open(page):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page(page).run()
    no_exception(at)
    return at


def _labels(at):
    return [w.label for w in [*at.text_input, *at.text_area, *at.selectbox, *at.number_input]]


def test_the_connection_form_offers_the_class_connections_and_stores_only_the_name(lab, app_env):
    at = _open("pages/systems.py")
    kind = at.radio(key="systems_kind")
    assert kind.options[0] == "Class connection" and kind.value == "connection"
    assert at.selectbox(key="systems_named").options == ["course (HTTP endpoint)"]
    assert not any("${" in (lbl or "") or "variable" in (lbl or "").lower() for lbl in _labels(at))
    at.text_input(key="systems_conn_name").input("course search").run()
    at.button(key="systems_add").click().run()
    no_exception(at)
    saved = list(Path(app_env).rglob("systems.json"))
    assert saved, "the system was kept"
    text = saved[0].read_text()
    spec = json.loads(text)["systems"][0]
    assert spec["kind"] == "connection" and spec["settings"] == {"connection": "course"}
    assert CONN_KEY not in text and str(lab["conn"].port) not in text
    sent = lab["conn"].all_bytes()  # the page evaluated it: the bound key went to its URL only
    assert sent and f"Bearer {CONN_KEY}".encode() in sent
    assert not any(s.encode() in sent for s in ALL if s != CONN_KEY)
    assert all(s.encode() not in lab["typed"].all_bytes() for s in ALL)


@pytest.mark.parametrize("url,header,words", [
    ("http://127.0.0.1:{typed}/search?t=${{MY_TOKEN}}", "", "url: server variables are not available in class mode"),
    ("${{MY_TOKEN}}", "", "server variables are not available in class mode"),
    ("http://127.0.0.1:{typed}/search", "Authorization: Bearer ${{RAG_METRICS_JUDGE_KEY}}",
     "header 'Authorization': server variables are not available"),
    ("http://127.0.0.1:{judge}/v1", "", "HTTP 404 from"),  # a declared host: reachable, without any key
    ("http://169.254.169.254/latest/meta-data/", "", "not allowed by the class's policy"),
    ("http://10.0.0.1:{typed}/search", "", "not allowed by the class's policy"),
    ("http://2130706434:{typed}/search", "", "not allowed by the class's policy"),
])
def test_typed_http_settings_in_class_mode(lab, url, header, words):
    at = _open("pages/systems.py")
    at.radio(key="systems_kind").set_value("http").run()
    labels = _labels(at)
    assert "Headers (one 'Name: value' per line)" in labels and not any("${" in (lbl or "") for lbl in labels)
    judge_port = lab["judge"].base_url.split(":")[2].split("/")[0]
    next(t for t in at.text_input if t.label == "URL").input(url.format(typed=lab["typed"].port, judge=judge_port))
    if header:
        at.text_area[0].input(header.format())
    at.run()
    at.button(key="systems_test").click().run()
    no_exception(at)
    shown = " ".join(e.value for e in [*at.error, *at.success, *at.warning]).replace("\\", "")
    assert words in shown, shown
    for s in ALL:
        assert s not in shown
    assert all(s.encode() not in lab["typed"].all_bytes() for s in ALL)
    assert all(a in ("None", "Bearer not-needed") for a in lab["judge"].auth)


@pytest.mark.parametrize("dsn,words", [
    ("postgresql://me@127.0.0.1:{pg}/rag", "no password supplied"),
    ("host=127.0.0.1 port={pg} user=me dbname=rag", "no password supplied"),
    ("postgresql://me:${{PGPASSWORD}}@127.0.0.1:{pg}/rag", "dsn: server variables are not available in class mode"),
    ("host=127.0.0.1 port={pg} user=me passfile=/root/.pgpass", "passfile cannot be set in class mode"),
    ("host=/var/run/postgresql user=me", "unix sockets"),
    ("postgresql://me@127.0.0.1:5432/rag", "not allowed by the class's policy"),
])
def test_typed_dsn_in_class_mode_never_uses_the_servers_password(lab, dsn, words):
    at = _open("pages/systems.py")
    at.radio(key="systems_kind").set_value("pgvector").run()
    assert not any("${" in (lbl or "") or "PGPASSWORD" in (lbl or "") for lbl in _labels(at))
    next(t for t in at.text_input if t.label.startswith("DSN")).input(dsn.format(pg=lab["pg"].port))
    next(t for t in at.text_input if t.label == "Table").input("chunks")
    at.run()
    at.button(key="systems_test").click().run()
    no_exception(at)
    shown = " ".join(e.value for e in at.error).replace("\\", "")
    assert words in shown, shown
    assert all(s.encode() not in lab["pg"].all_bytes() for s in ALL)


def test_qdrant_form_has_no_key_field_in_class_mode(lab):
    at = _open("pages/systems.py")
    at.radio(key="systems_kind").set_value("qdrant").run()
    assert not any("API key" in (lbl or "") for lbl in _labels(at))
    for url, words in [(f"http://127.0.0.1:{lab['typed'].port}", "cannot reach Qdrant"),
                       ("http://127.0.0.1:6333", "not allowed by the class's policy"),
                       ("http://169.254.169.254", "not allowed by the class's policy")]:
        next(t for t in at.text_input if t.label == "URL").input(url)
        next(t for t in at.text_input if t.label == "Collection").input("chunks")
        at.run()
        at.button(key="systems_test").click().run()
        no_exception(at)
        shown = " ".join(e.value for e in at.error).replace("\\", "")
        assert words in shown, shown
    assert lab["typed"].received and all(s.encode() not in lab["typed"].all_bytes() for s in ALL)


def test_the_answers_page_offers_only_the_class_judge_and_its_key_goes_only_there(lab, monkeypatch, tmp_path):
    monkeypatch.setattr("rag_metrics.answers.llm.default_judge_cache_path", lambda: tmp_path / "judge.sqlite3")
    at = _open("pages/answers.py")
    keys = [t.key for t in at.text_input]
    assert "answers_judge_url" not in keys and "answers_judge_keyvar" not in keys
    assert not any("variable" in (lbl or "").lower() or "base url" in (lbl or "").lower() for lbl in _labels(at))
    assert "class-chat" in " ".join(m.value for m in at.markdown).replace("\\", "")
    at.number_input(key="answers_judge_nq").set_value(1)
    at.button[[b.label for b in at.button].index("Run the LLM judge")].click().run()
    no_exception(at)
    srv = lab["judge"]
    # issue 27: a run over lab.budgets.judge_confirm_over planned calls asks first, and sends nothing
    assert srv.chat_requests() == 0 and any("Nothing was sent to the judge" in c.value for c in at.caption)
    at.checkbox(key="judge_confirm_answers").check().run()
    at.button[[b.label for b in at.button].index("Run the LLM judge")].click().run()
    no_exception(at)
    assert srv.chat_requests() > 0
    assert set(srv.auth) == {f"Bearer {JUDGE_KEY}"}
    assert any("LLM judge llm:class-chat@" in c.value.replace("\\", "") for c in at.caption)


def test_single_user_judge_form_is_unchanged(app_env, monkeypatch):
    monkeypatch.delenv("RAG_METRICS_CLASS_MODE", raising=False)
    monkeypatch.setenv("RAG_METRICS_CONFIG", os.devnull)
    at = _open("pages/answers.py")
    keys = [t.key for t in at.text_input]
    assert "answers_judge_url" in keys and "answers_judge_keyvar" in keys


def test_the_beir_field_is_a_select_of_the_class_datasets(lab):
    at = _open("pages/corpus_explorer.py")
    box = at.selectbox(key="beir_path")
    assert box.options == ["mini-beir"]
    assert "beir_path" not in [t.key for t in at.text_input]
    at.button(key="beir_go").click().run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    shown = " ".join(x.value for x in [*at.success, *at.info, *at.markdown, *at.caption]).replace("\\", "")
    assert "judged queries from mini-beir" in shown, shown[:500]


def test_single_user_with_data_roots_confines_the_beir_path(lab, monkeypatch):
    monkeypatch.delenv("RAG_METRICS_CLASS_MODE", raising=False)
    at = _open("pages/corpus_explorer.py")
    for path in [lab["tmp"] / "outside-beir", "/etc", lab["tmp"] / "data" / ".." / "outside-beir"]:
        at.text_input(key="beir_path").input(str(path)).run()
        at.button(key="beir_go").click().run()
        no_exception(at)
        errors = " ".join(e.value for e in at.error).replace("\\", "")
        assert "only folders inside the lab's data folders can be opened" in errors, errors
