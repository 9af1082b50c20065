"""The operator's configuration: teacher key, named connections with their secrets, the judge,
the outbound allowlist and the data roots.  Read from one TOML table, ``[lab]``.

Where it is read
----------------
``$RAG_METRICS_CONFIG`` (a TOML file) when set, else ``.streamlit/secrets.toml`` in the working
folder (Streamlit's own secrets file, git-ignored), else nothing: single-user mode needs no
configuration.  Only the ``[lab]`` table is read; the teacher key may also come from the
environment variable ``RAG_METRICS_TEACHER_KEY``.

Example
-------
.. code-block:: toml

    [lab]
    teacher_key = "a long random phrase"          # or export RAG_METRICS_TEACHER_KEY
    max_private_spaces = 200
    data_roots = ["/srv/lab-data"]                # BEIR folders and Qdrant local folders live here
    allow = ["search.internal:443", "10.0.0.7:6333"]   # extra outbound destinations (host:port)
    state = "postgresql://lab:${LAB_PG_PASSWORD}@10.0.0.8/lab"   # a class on several hosts (rag_metrics.io.state)

    [lab.budgets]                                 # what one seat may spend (rag_metrics.server.budgets)
    judge_calls_per_seat = 2000
    golden_questions = 1000

    [lab.encoders]                                # the embedding model by text language (rag_metrics.retrieval.choice)
    da = "multilingual-e5-small"                  # default = "..." for any language not listed

    [lab.judge]                                   # the class's LLM judge (OpenAI-compatible)
    base_url = "http://127.0.0.1:8080/v1"
    chat_model = "llama3.1:8b"
    embed_model = "nomic-embed-text"
    api_key = "sk-..."                            # sent only to base_url

    [lab.connections.course-search]               # a named connection students may use by name
    kind = "http"
    url = "https://search.internal/api/search"
    headers = { Authorization = "Bearer sk-..." } # sent only to this url

    [lab.connections.course-pg]
    kind = "pgvector"
    dsn = "postgresql://lab:secret@10.0.0.8:5432/rag"
    table = "chunks"

A named connection's (and the judge's) destination is on the allowlist by being declared.  The
secrets written here are bound to their destination: they are sent nowhere else, never shown, and
never stored in a workspace.
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the tomli backport, when installed (else a clear message when a file is read)
    try:
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        tomllib = None

from rag_metrics.errors import InputError
from rag_metrics.limits import parse_int

__all__ = ["CONFIG_ENV", "REFERENCE", "SETTINGS", "TEACHER_KEY_ENV", "NamedConnection", "ServerConfig", "Setting",
           "class_mode_on", "environment", "expand", "load_server_config", "setting", "variable"]

CONFIG_ENV = "RAG_METRICS_CONFIG"
TEACHER_KEY_ENV = "RAG_METRICS_TEACHER_KEY"
DEFAULT_MAX_PRIVATE_SPACES = 200
CONNECTION_KINDS = ("http", "pgvector", "qdrant")
_MIN_TEACHER_KEY = 12


# ---- the environment: every variable the lab reads, read here --------------------------------------
# ---- the budgets' table (folded in from rag_metrics.budget_limits, issue 51) ------------------------------
_MAX = 10**12
#: Budgets whose range is not 1 to _MAX: ``seat_proof_bits`` is 0 (no proof) to 28 (minutes in a browser).
_RANGES = {"seat_proof_bits": (0, 28)}


@dataclass(frozen=True)
class Budgets:
    """The per-seat and per-server limits (module docstring); each field is a whole number."""

    seats_per_address: int = 8
    seats_per_server: int = 300
    seat_window_s: int = 600
    seat_proof_bits: int = 16
    guesses_per_address: int = 10
    guesses_per_server: int = 40
    guess_window_s: int = 600
    upload_files_per_session: int = 30
    upload_mb_per_session: int = 60
    corpus_mb: int = 2
    corpora_per_seat: int = 5
    corpora_mb_per_seat: int = 4
    embed_texts_per_seat: int = 1500
    embed_texts_per_class: int = 15000
    embed_window_s: int = 3600
    golden_questions: int = 1000
    judge_calls_per_seat: int = 2000
    judge_tokens_per_seat: int = 1_000_000
    judge_confirm_over: int = 100
    tutor_questions_per_seat: int = 20
    tutor_tokens_per_seat: int = 40_000
    sweep_configs: int = 12
    workers: int = 2
    process_memory_mb: int = 3072

    def rows(self) -> list[tuple[str, int]]:
        """``(setting, value)`` for the teacher's Class page."""
        return [(f.name, int(getattr(self, f.name))) for f in fields(self)]


def parse_budgets(raw: Any, source: str = "config") -> Budgets:
    """:class:`Budgets` from the ``[lab.budgets]`` table (missing keys keep their defaults)."""
    if raw is None:
        return Budgets()
    if not isinstance(raw, Mapping):
        raise InputError(f"{source}: lab.budgets must be a table ([lab.budgets])")
    known = {f.name for f in fields(Budgets)}
    unknown = sorted(set(map(str, raw)) - known)
    if unknown:
        raise InputError(f"{source}: lab.budgets.{unknown[0]} is not a budget; use one of {', '.join(sorted(known))}")
    values: dict[str, int] = {}
    for key, value in raw.items():
        low, high = _RANGES.get(str(key), (1, _MAX))
        n, msg = parse_int(value, low, high, f"{source}: lab.budgets.{key}")
        if msg is not None:
            raise InputError(msg)
        assert n is not None
        values[str(key)] = n
    return Budgets(**values)


@dataclass(frozen=True)
class Setting:
    """One environment variable the lab reads: its name, the value when unset, and what it does."""

    env: str
    default: str
    help: str


#: Every setting read from the environment (Datasette's ``SETTINGS`` table): the one list, from which
#: docs/class-day.md is written.  Nothing else in the project reads ``os.environ`` for its own settings;
#: it calls :func:`setting` (or :func:`variable` for a name the user chose, such as ``${VAR}``).
SETTINGS: dict[str, Setting] = {
    "class_mode": Setting("RAG_METRICS_CLASS_MODE", "", "1/true/yes/on: class mode (``./lab class`` sets it)"),
    "config": Setting(CONFIG_ENV, "", "the operator's TOML file with the [lab] table"),
    "teacher_key": Setting(TEACHER_KEY_ENV, "", "the teacher key (else lab.teacher_key)"),
    "workspace": Setting("RAG_METRICS_WORKSPACE", "", "the workspace root (default ~/.rag_metrics/workspace)"),
    "sample_dir": Setting("RAG_METRICS_SAMPLE_DIR", "", "a folder with the sample corpus to use instead"),
    "sample_dir_da": Setting("RAG_METRICS_SAMPLE_DA_DIR", "", "a folder with the Danish sample corpus to use instead"),
    "encoder": Setting("RAG_METRICS_ENCODER", "", "the embedding model for every corpus and text, whatever its "
                       "language (else lab.encoders, else English -> all-MiniLM-L6-v2, other languages -> "
                       "multilingual-e5-small)"),
    "cache": Setting("RAG_METRICS_CACHE", "", "the retrieval cache folder (default ~/.cache/rag_metrics)"),
    "cache_mb": Setting("RAG_METRICS_CACHE_MB", "", "the app's in-memory cache budget in MB (default 512)"),
    "warm": Setting("RAG_METRICS_WARM", "1", "0/false/no: do not warm the sample at start"),
    "max_file_bytes": Setting("RAG_METRICS_MAX_FILE_BYTES", "", "largest corpus file read (bytes)"),
    "judge_key": Setting("RAG_METRICS_JUDGE_KEY", "", "the LLM judge's API key (single-user mode)"),
    "run_as": Setting("RAG_METRICS_RUN_AS", "", "./lab class started as root: the user the app processes run as "
                      "(default: the system user rag-metrics)"),
    "state": Setting("RAG_METRICS_STATE", "", "the class's shared state: a postgresql:// URL (./lab class --state "
                     "sets it; its password a ${VAR} reference), else lab.state, else files in the workspace"),
    "debug": Setting("RAG_METRICS_DEBUG", "", "set: the CLI prints tracebacks"),
    "progress": Setting("RAG_METRICS_PROGRESS", "", "1: the CLI prints progress"),
    "teacher_link": Setting("RAG_METRICS_TEACHER_LINK", "", "set by ./lab class for its app processes: the hash and "
                            "expiry of the one-time teacher sign-in link it printed (never the token)"),
}


def environment() -> Mapping[str, str]:
    """A copy of the process environment (what ``${VAR}`` resolves against for the operator)."""
    return dict(os.environ)


def variable(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """An environment variable whose name the user chose (``${VAR}``, a judge's ``api_key_env``)."""
    return (os.environ if env is None else env).get(name)


#: A ``${VAR}`` reference in a setting: how a secret is written (rag_metrics.server.secrets).
REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand(template: str, setting_name: str, source: Mapping[str, str], *, environment_too: bool = False) -> str:
    """``template`` with every ``${VAR}`` replaced by its value in ``source`` (``environment_too``: else
    the process's environment); InputError names the setting and the variable that is not set.  The one
    substitution rule: :func:`rag_metrics.server.secrets.resolve` adds class mode's refusal on top."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        value = source.get(name)
        if value is None and environment_too:
            value = variable(name)
        if value is None:
            raise InputError(f"{setting_name} refers to ${{{name}}}, which is not set; export {name}=... before "
                             "starting (or add it to .streamlit/secrets.toml for the app)")
        return str(value)

    return REFERENCE.sub(sub, template)


def setting(name: str, env: Mapping[str, str] | None = None) -> str:
    """The value of one of :data:`SETTINGS` (its default when unset), stripped."""
    spec = SETTINGS[name]
    return str((os.environ if env is None else env).get(spec.env, spec.default)).strip()


def class_mode_on(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> bool:
    """True when the server runs in class mode: ``RAG_METRICS_CLASS_MODE=1`` (or true/yes/on) or
    ``--class-mode`` among the script arguments (``streamlit run app.py -- --class-mode``)."""
    argv = sys.argv[1:] if argv is None else argv
    return setting("class_mode", env).lower() in ("1", "true", "yes", "on") or "--class-mode" in argv


@dataclass(frozen=True)
class NamedConnection:
    """A connection the operator declared: ``kind`` and its settings (secrets included, resolved).

    ``settings`` are the keyword arguments of the kind's config (``HttpConfig``, ``PgvectorConfig``,
    ``QdrantConfig``); they never leave the server process."""

    name: str
    kind: str
    settings: Mapping[str, Any]

    def __repr__(self) -> str:  # never print the secrets
        return f"NamedConnection({self.name!r}, kind={self.kind!r})"


@dataclass(frozen=True)
class ServerConfig:
    """What the operator configured (empty in single-user mode without a file)."""

    source: str = ""                                  # the file read ("" when none)
    teacher_key: str | None = None
    max_private_spaces: int = DEFAULT_MAX_PRIVATE_SPACES
    data_roots: tuple[Path, ...] = ()
    allow: tuple[str, ...] = ()                       # "host:port" entries (host may be an IP or CIDR)
    judge: Mapping[str, Any] | None = None            # JudgeConfig keyword arguments + "api_key"
    connections: Mapping[str, NamedConnection] = field(default_factory=dict)
    budgets: Budgets = field(default_factory=Budgets)  # [lab.budgets]: see rag_metrics.server.budgets
    encoders: Mapping[str, str] = field(default_factory=dict)  # [lab.encoders]: language -> model
    state: str = ""                                   # lab.state: the class's shared state (rag_metrics.io.state)

    def __repr__(self) -> str:  # never print the secrets
        return (f"ServerConfig(source={self.source!r}, teacher_key={'set' if self.teacher_key else 'unset'}, "
                f"connections={sorted(self.connections)}, data_roots={[str(p) for p in self.data_roots]})")


def _config_path(env: Mapping[str, str]) -> Path | None:
    p = setting("config", env)
    if p:
        return Path(p).expanduser()
    default = Path(".streamlit") / "secrets.toml"
    return default if default.is_file() else None


def parse_server_config(data: Mapping[str, Any], source: str = "config",
                        env: Mapping[str, str] | None = None) -> ServerConfig:
    """A :class:`ServerConfig` from the parsed TOML document (``[lab]`` table); InputError names
    the file, the setting and the fix."""
    env = os.environ if env is None else env
    lab = data.get("lab", {})
    if not isinstance(lab, Mapping):
        raise InputError(f"{source}: [lab] must be a table")

    def where(key: str) -> str:
        return f"{source}: lab.{key}"

    key = setting("teacher_key", env) or lab.get("teacher_key")
    if key is not None:
        if not isinstance(key, str):
            raise InputError(f"{where('teacher_key')} must be a string")
        key = key.strip() or None
        if key is not None and len(key) < _MIN_TEACHER_KEY:
            raise InputError(f"the teacher key ({TEACHER_KEY_ENV} or lab.teacher_key in {source}) is "
                             f"{len(key)} characters; use at least {_MIN_TEACHER_KEY} (a long random phrase)")
    cap = lab.get("max_private_spaces", DEFAULT_MAX_PRIVATE_SPACES)
    if isinstance(cap, bool) or not isinstance(cap, int) or not 1 <= cap <= 100_000:
        raise InputError(f"{where('max_private_spaces')} must be a whole number from 1 to 100000, got {cap!r}")
    roots_raw = lab.get("data_roots", [])
    if not isinstance(roots_raw, list) or not all(isinstance(r, str) and r.strip() for r in roots_raw):
        raise InputError(f"{where('data_roots')} must be a list of folder paths, e.g. [\"/srv/lab-data\"]")
    roots = tuple(Path(os.path.realpath(Path(r).expanduser())) for r in roots_raw)
    allow = lab.get("allow", [])
    if not isinstance(allow, list) or not all(isinstance(a, str) and a.strip() for a in allow):
        raise InputError(f"{where('allow')} must be a list of \"host:port\" strings, e.g. [\"10.0.0.7:6333\"]")
    judge = lab.get("judge")
    if judge is not None:
        if not isinstance(judge, Mapping) or not isinstance(judge.get("base_url"), str) \
                or not isinstance(judge.get("chat_model"), str):
            raise InputError(f"{where('judge')} must be a table with base_url and chat_model (and optionally "
                             "embed_model, api_key)")
        judge = dict(judge)
    conns: dict[str, NamedConnection] = {}
    raw_conns = lab.get("connections", {})
    if not isinstance(raw_conns, Mapping):
        raise InputError(f"{where('connections')} must be a table of tables ([lab.connections.<name>])")
    for name, spec in raw_conns.items():
        if not isinstance(spec, Mapping) or spec.get("kind") not in CONNECTION_KINDS:
            raise InputError(f"{where('connections.' + str(name))}: kind must be one of "
                             f"{', '.join(CONNECTION_KINDS)}")
        settings = {k: v for k, v in spec.items() if k != "kind"}
        conns[str(name)] = NamedConnection(str(name), str(spec["kind"]), settings)
    budgets = parse_budgets(lab.get("budgets"), source)
    encoders = lab.get("encoders", {})
    if not isinstance(encoders, Mapping) or not all(isinstance(k, str) and isinstance(v, str) and k.strip()
                                                    and v.strip() for k, v in encoders.items()):
        raise InputError(f"{where('encoders')} must be a table of language = \"model name\" strings, e.g. "
                         "[lab.encoders] da = \"multilingual-e5-small\" (and default = \"...\" for any other language)")
    encoders = {k.strip().lower(): v.strip() for k, v in encoders.items()}
    state = lab.get("state", "")
    if not isinstance(state, str) or (state.strip() and not state.strip().startswith(("postgresql://", "postgres://"))):
        raise InputError(f"{where('state')} must be a postgresql://user@host/database URL (its password written as "
                         "${VAR}, read from the environment), or left out for files in the workspace")
    return ServerConfig(source, key, cap, roots, tuple(a.strip() for a in allow), judge, conns, budgets, encoders,
                        state.strip())


def load_server_config(env: Mapping[str, str] | None = None) -> ServerConfig:
    """The operator's configuration (see the module docstring for where it is read).

    Raises
    ------
    InputError
        When the file cannot be read or is not valid TOML, naming the file and the line.
    """
    env = os.environ if env is None else env
    path = _config_path(env)
    if path is None:
        return parse_server_config({}, "environment", env)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot read the server configuration ({e.strerror}); check "
                         f"{CONFIG_ENV}") from None
    if tomllib is None:
        raise InputError(f"{path}: reading the server configuration needs Python 3.11+ (or `pip install tomli`)")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not valid TOML ({e}); fix the line it names") from None
    return parse_server_config(data, str(path), env)


def class_start_problem(env: Mapping[str, str] | None = None) -> str | None:
    """Why ``./lab class`` must not start (``None`` when it may): the configuration cannot be read,
    or no teacher key is set, so nobody could manage the class."""
    try:
        cfg = load_server_config(env)
    except InputError as e:
        return str(e)
    if not cfg.teacher_key:
        return ("no teacher key, so nobody could manage the class. Set one, e.g.\n"
                f"    export {TEACHER_KEY_ENV}=\"$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')\"\n"
                f"or write teacher_key = \"...\" in the [lab] table of ${CONFIG_ENV} (or .streamlit/secrets.toml)")
    return None


if __name__ == "__main__":  # ./lab class: python -m rag_metrics.config check-class
    import sys

    problem = class_start_problem() if sys.argv[1:] == ["check-class"] else "usage: check-class"
    if problem:
        sys.exit(f"lab class: {problem}")
