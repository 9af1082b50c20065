"""Every ``st.session_state`` key of the app, in one place (no Streamlit, no logic).

A module that keeps something in the session, or reads a widget's value back from it, imports the key's name
from here (often under its old local name: ``from ui.keys import IDENTITY_SEAT as _SEAT``); no other module of
``ui/`` or ``pages/`` spells a session key as a string (``tests/test_session_keys.py`` checks).  Keys made per
item (a draft, a question, a chunk) are built by the functions at the end.

Naming: ``_name`` keys are the app's own (never a widget); the others are widget keys, whose value Streamlit
keeps while the widget is drawn.
"""
from __future__ import annotations

import hashlib

# ---- the shared sidebar (ui.state, ui.sidebar; defaults in ui.context.DEFAULTS) ----------------------------
KEY_CORPUS = "corpus"
KEY_RETRIEVER = "retriever"    # the bundled retriever behind live searches (the last bundled system chosen)
KEY_SYSTEM = "system"          # the sidebar's system: a bundled retriever kind or a stored system's name
KEY_K = "k"
KEY_LEVEL = "relevance_level"
KEY_OOS = "out_of_scope"
KEY_RECALL = "recall_denominator"
KEY_GAIN = "ndcg_gain"
KEY_MISSING = "missing_queries"
KEY_GAINS = "ndcg_gains"          # text "1=1,2=3" (trec_eval gain parameters, ir_measures nDCG(gains=...))
KEY_JUDGED_ONLY = "judged_only"   # trec_eval -J
KEY_MRR = "mrr_rule"              # "first" (trec_eval) or "granular" (LlamaIndex)
KEY_NONPOS = "nonpositive_scores"  # "retrieved" (trec_eval) or "not_retrieved" (torchmetrics)
KEY_NDCG_REL = "ndcg_relevance"
KEY_RECALL_EMPTY = "recall_empty"  # no sidebar widget: set by the conventions presets
KEY_PRESET = "conventions_preset"   # the sidebar's one switch: trec_eval / as in the lesson (metrics.presets)

# ---- the session's lab (ui.state, ui.session, ui.spaces, ui.corpora, ui.golden) ----------------------------
CORPORA = "_corpora"            # {name: CorpusEntry} loaded in this session
GOLDEN = "_golden"              # {corpus name: GoldenSession}
CHUNKING = "_chunking"          # {corpus name: (size, overlap)}
TOKEN = "_session_token"
NOTICE = "_notice"              # (kind, message): shown once after a rerun
PENDING = "_pending_widgets"    # sidebar widget values set by a page, applied at the start of the next run
SPACE = "_space"                # the workspace this session saves to
LABEL_QUEUE = "_label_queue"    # {corpus name: LabelQueue} (ui.label_session; dropped with the golden sessions)
EDITOR_PREFIX = "golden_editor_"   # the golden editor's widget key: EDITOR_PREFIX + table id

# ---- class mode: who this browser is (ui.identity) ------------------------------------------------------
IDENTITY_TEACHER = "_identity_teacher"     # the teacher session's token once signed in (checked on every run)
IDENTITY_SEAT = "_identity_seat"           # this session's seat id
IDENTITY_NEW_SEAT = "_identity_new_seat"   # the seat was created in this session (an empty one is dropped on rejoin)
IDENTITY_COOKIES = "_identity_cookies"     # {cookie name: (value, max-age)} to (re)write into the browser
IDENTITY_SIGNED_OUT = "_identity_signed_out"  # the teacher signed out in this session: ignore the teacher cookie
IDENTITY_CALLER = "_identity_caller"       # the caller of the current run (set by gate)
IDENTITY_FULL = "_identity_full"           # the class-full message of this run
IDENTITY_CHALLENGE = "_identity_challenge"  # the proof-of-browser challenge this run asks for (no seat until solved)
IDENTITY_PROVEN = "_identity_proven"  # proved a browser (or the teacher key): a new seat needs no new proof
IDENTITY_SHOWN_CODE = "_identity_code"     # a rejoin code just made, shown to this student once
IDENTITY_WRITTEN = "_identity_teacher_written"  # the teacher cookie (value, max-age) last written to this browser
IDENTITY_MSG = "_identity_message"         # (kind, text): the outcome of the last identity action, shown once
IDENTITY_NAME = "identity_name"
IDENTITY_CODE = "identity_rejoin_code"
IDENTITY_TEACHER_KEY = "identity_teacher_key"

# ---- the URL (ui.url_state) and the workspace picker (ui.workspace_ui) -------------------------------------
URL_APPLIED = "_url_applied"        # session flag: the URL was read into the state
URL_WARNINGS = "_url_warnings"      # messages shown once, on the page the link opened
WORKSPACE_PICK = "workspace_pick"
WORKSPACE_NEW = "workspace_new"
WORKSPACE_CHECKS = "_workspace_checks"      # {path: (stat, WorkspaceCheck)}: one check per version of the files

# ---- golden set page: drafting, labelling, evidence review, label detail (ui.drafting, ui.labelling, ...) ----
GOLDEN_VIEW = "golden_view"
CONFIRM_RESET = "_confirm_reset"
EXPORT_FORMAT = "golden_export_format"
DRAFT_REVIEW = "_draft_review"            # {corpus: DraftReview}
SUGGESTIONS = "_relevance_suggestions"    # {corpus: {(query id, chunk id): RelevanceSuggestion}}
AGREEMENT = "_judge_vs_people"            # {corpus: (pairs key, suggestions list)}
LAST_COST = "_judge_last_cost"            # {view: text}
JUDGE_SAMPLES = "judge_samples"
JUDGE_URL = "judge_url"
JUDGE_MODEL = "judge_model"
LABEL_N = "label_n"
LABEL_LIVE = "label_live_q"
LABEL_GO = "label_go"
LABEL_DETAIL_PICK = "label_detail_pick"
LABEL_DETAIL_SAVE = "label_detail_save"
EVIDENCE_POS = "_evidence_review_pos"     # {corpus name: position in the queue}
LABEL_REPORT = "_label_report"            # rows of the last re-chunking's label carry-over report

# ---- Compare, History, Failures, Corpus map, Health (ui.compare_views, ui.history, pages) -------------------
CMP_SAVED = "_cmp_saved"
CMP_LEVEL = "cmp_level"
CMP_METRIC = "cmp_metric"
CMP_DISAGREE = "cmp_disagree_query"
CMP_CANCEL = "cancel_compare"             # the Cancel button shown while a configuration is being computed
HISTORY_NAME = "history_name"
HISTORY_METRIC = "history_metric"
HISTORY_A = "history_a"
HISTORY_B = "history_b"
HISTORY_UPLOAD = "history_upload"
HISTORY_ADDED = "_history_added"
DRILL = "drill_query"                     # the failures page's query selector (pages/failures.py, pages/compare.py)
FAIL_INSPECT = "fail_inspect"
MAP_QUERY = "map_query"
MAP_COLOR = "map_color"
MAP_METHOD = "map_method"
MAP_CHART = "map_chart"
HEALTH_GRADE = "health_grade"
HEALTH_MIN_Q = "health_min_queries"
HEALTH_SHOW = "health_show"
HEALTH_NEAR = "health_near_threshold"
HEALTH_NEAR_MODEL = "health_near_model"   # the model HEALTH_NEAR's default was taken from (a new model: its own)
HEALTH_EASY = "health_easy_threshold"
HEALTH_METRIC = "health_ci_metric"
HEALTH_TARGET = "health_ci_target"
CANCEL_RECHUNK = "cancel_rechunk"
CANCEL_LOAD = "cancel_load"
BROWSE_PAGE = "browse_page"
MAP_UNCOVERED_PAGE = "map_uncovered_page"

# ---- answers (ui.answers, ui.answer_views) and the report (ui.report_ui) ----------------------------------
ANSWERS_PUBLISHED = "_answers_published"
ANSWERS_CMP_A = "cmp_answers_a"
ANSWERS_CMP_B = "cmp_answers_b"
ANSWERS_URL = "answers_judge_url"
ANSWERS_MODEL = "answers_judge_model"
ANSWERS_EMBED = "answers_judge_embed"
ANSWERS_KEYVAR = "answers_judge_keyvar"
ANSWERS_NQ = "answers_judge_nq"
ANSWERS_CONC = "answers_judge_concurrency"
ANSWERS_JSON = "answers_judge_json"
ANSWERS_RESULT = "_answers_llm_result"
ANSWERS_SOURCE = "answers_source"
ANSWERS_SYSTEM = "answers_system"
REPORT_COMPARISON = "report_comparison"

# ---- systems (ui.systems, ui.bring) ----------------------------------------------------------------------
SYSTEMS_UPLOAD = "systems_upload"
SYSTEMS_UPLOAD_NAME = "systems_upload_name"
SYSTEMS_KIND = "systems_kind"
SYSTEMS_CONN_NAME = "systems_conn_name"
SYSTEMS_NAMED = "systems_named"
SYSTEMS_POOL_K = "systems_pool_k"
BRING_FILES = "bring_files"
BRING_NAME = "bring_name"
BRING_GO = "bring_go"
BRING_SYSTEM = "bring_system"      # the system brought in last: the verdict is shown for it
BRING_PENDING = "bring_pending"    # what is left to bring in after a new corpus was selected (one rerun)
BRING_FROM_LOG = "bring_golden_from_log"
BRING_READ = "_bring_read"
BRING_PAIR = "bring_pair"          # qrels and runs dropped together: evaluated against each other
BRING_MAPS = "_bring_maps"        # the column mapping given for a dropped file, by name and hash

# ---- Tune (ui.tune) -------------------------------------------------------------------------------------
TUNE_RESULT = "_tune_result"        # the SweepResult shown (partial while running)
TUNE_PICK = "tune_pick"             # the configuration picked (its label)
TUNE_COST = "tune_cost"
TUNE_CHART = "tune_chart"
TUNE_UPLOAD = "tune_upload"
TUNE_UPLOAD_READ = "_tune_upload_read"  # (sha256 of the uploaded sweep.json, its SweepResult): read once
TUNE_CANCEL = "tune_cancel"

# ---- the lesson, the Learn sandbox, the exercises (ui.lesson, ui.learn, ui.exercises) ----------------------
LESSON_PROGRESS = "_lesson_progress"   # (space, Progress)
LESSON_GENERATION = "_lesson_generation"  # (space, the teacher's generation of the progress loaded)
LESSON_LAST = "_lesson_last"           # task key -> the last check's verdict in this session
LESSON_SANDBOX = "_lesson_sandbox"     # the MRR task's list (grades, rank 1 first)
LESSON_LANG = "lesson_lang"
LESSON_STEP_PICK = "lesson_step_pick"
LESSON_KEY = "_lesson_key"             # the course's lesson shown (rag_metrics.lesson.course; ?lesson=<key>)
LESSON_QP_SEEN = "_lesson_qp_seen"     # (lesson, step) of the URL last applied (a new link applies again)
LEARN_SANDBOX = "learn_sandbox"
LEARN_VERSION = "learn_version"
LEARN_K = "learn_k"
LEARN_K_VALUE = LEARN_K + "_value"     # the K slider's value, kept while the page is not shown
LEARN_SCENARIO = "learn_scenario"
LEARN_SIDE = "learn_scenario_side"
LEARN_SOURCE = "learn_source"
LEARN_QUESTION = "learn_question"
LEARN_CONV_GAIN = "learn_conv_gain"
LEARN_CONV_OOS = "learn_conv_oos"
LEARN_CONV_RECALL = "learn_conv_recall"
LEARN_CONV_LEVEL = "learn_conv_level"
EX_PICK = "ex_pick"
EX_PICK_KEPT = "_ex_pick_kept"  # the exercise last picked, kept while the picker is not drawn
EX_LESSON = "ex_lesson"        # the course's lesson whose exercises the picker lists (shown when 2+ lessons have some)
EX_LANG = "ex_lang"
EX_CHECKS = "_ex_checks"      # (exercise, (evaluation key, language), checks): the checks the payload was built from
EX_VERDICT = "_ex_verdict"    # exercise -> {"verdict": Verdict | None, "status": str, "message": str}
EX_HINTS = "_ex_hints"        # exercise -> number of hints shown
EX_RESET = "_ex_reset"        # exercise -> reset counter (a new counter loads the starter into the editor)
EX_NONCE = "_ex_nonce"        # the last report handled (a report is graded once)
EX_QP_SEEN = "_ex_qp_seen"    # the last ?exercise= this session followed
EX_REPORT = "_ex_report"      # the exercise editor's report (set by the component, or by a test)
EX_DRAFT = "_ex_draft"        # the editor's last draft (a dict: doc, code), kept by the page in the student's space
EX_EDITOR = "ex_editor"       # the exercise editor component (its trigger value carries the report)
#: the teacher's editor on Class progress: re-runs a student's code in the teacher's own browser
EX_RERUN_EDITOR = "ex_rerun_editor"
EX_RERUNS = "_ex_reruns"      # (space, exercise, sha256 of code) -> the teacher's re-run {"passed", "total", "text"}

# ---- the tutor (ui.tutor) ------------------------------------------------------------------------------------
TUTOR_REPLIES = "_tutor_replies"  # where ("lesson:<lesson>:<step>", "exercise:<name>") -> the last answer shown
TUTOR_SAVED = "_tutor_saved"      # the teacher's saved tutor settings: the message shown once

# ---- the shell (ui.rerun_rate) ---------------------------------------------------------------------------
RERUN_TIMES = "_rerun_times"  # when this session's last reruns started (a deque: the rerun rate)


# ---- keys made per item ------------------------------------------------------------------------------------
def draft_text(draft_id: str) -> str:
    """The drafting review's question text of one draft."""
    return f"draft_text_{draft_id}"


def draft_reason(draft_id: str) -> str:
    """The drafting review's reason to reject one draft."""
    return f"draft_reason_{draft_id}"


def label_widget(kind: str, item_key: str, chunk_id: str) -> str:
    """A labelling queue widget (``kind``: tick, grade, accept, accept_all) of one question and chunk."""
    h = hashlib.sha1(f"{item_key}\x00{chunk_id}".encode()).hexdigest()[:12]
    return f"lq_{kind}_{h}"


def evidence_decision(qid: str, i: int) -> str:
    """The evidence review's decision on the ``i``-th proposed evidence of question ``qid``."""
    return "ev_" + hashlib.sha1(f"{qid}\x00{i}".encode()).hexdigest()[:12]


def compare_field(side: str, field: str) -> str:
    """A Compare page configuration field (``side`` A or B)."""
    return f"cmp_{side.lower()}_{field}"


def kept(key: str) -> str:
    """Where a widget's value is remembered while its page is not shown (:func:`ui.answers.remembered`)."""
    return f"_kept_{key}"


def lesson_answer(task_key: str) -> str:
    """The lesson's answer widget of one task."""
    return f"lesson_ans_{task_key}"


def learn_grade(version: int, item_id: str) -> str:
    """The Learn sandbox's grade widget of one item (a new ``version`` of the list, new widgets)."""
    return f"learn_g_{version}_{item_id}"


def learn_unretrieved(version: int) -> str:
    """The Learn sandbox's count of relevant items never retrieved."""
    return f"learn_unret_{version}"


def tutor_widget(kind: str, item: str) -> str:
    """A widget of the tutor (``kind``: form, question; on Class progress: on, questions, tokens, seat) of one
    box (``item``: a digest of where it is) or of the teacher's part (``item`` = "class")."""
    return f"tutor_{kind}_{item}"
