"""CSV exports neutralise cells a spreadsheet would run (issue 27: a seat named =HYPERLINK(...)
became a live formula in the teacher's CSV), and the class table's quiz columns read right."""
from __future__ import annotations

import csv
import io

import pandas as pd

from rag_metrics.io.files import csv_cell
from rag_metrics.lesson.teacher import class_progress, progress_csv, quiz_column


def test_formula_cells_become_text():
    table = pd.DataFrame([{"seat": '=HYPERLINK("http://evil","x")', "a": "+1", "b": "-x", "c": "@SUM(A1)",
                           "steps": 3, "score": -0.5, "name": "Ada"}])
    rows = list(csv.DictReader(io.StringIO(progress_csv(table))))
    assert rows[0]["seat"].startswith("'=") and rows[0]["a"] == "'+1" and rows[0]["b"] == "'-x"
    assert rows[0]["c"] == "'@SUM(A1)" and rows[0]["name"] == "Ada"
    assert rows[0]["steps"] == "3" and rows[0]["score"] == "-0.5"  # numbers stay numbers
    assert csv_cell(None) is None


def test_quiz_columns_name_the_task_once(tmp_path):
    assert quiz_column("quiz_mrr") == "quiz mrr"
    table = class_progress([("=cmd|' /C calc'!A0", "seat-x")], root=tmp_path)
    assert "quiz mrr" in table.columns and not any(c.startswith("quiz quiz_") for c in table.columns)
    assert progress_csv(table).splitlines()[1].startswith("'=cmd")
