"""Blinding the owner controls, on the REAL AITA seed: its titles carry the reference verdicts
("R: NTA AI: NTA": Reddit's and the model's). Set up as the README's recipe does (title hidden),
no rater view of any of its 300 items shows a verdict string; with the title shown (the default)
the same views do, which proves the check can fail. Also: the agreement figures of the real
export through the store, unchanged by corrections support (ratings in force)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.labeling import assignment, items, reports
from core.labeling.agreement import agreement_report
from core.labeling.store import LabelStore

ROOT = Path(__file__).resolve().parents[2]
VERDICT = re.compile(r"\b(R|AI): (NTA|YTA|ESH|NAH)\b")
pytestmark = pytest.mark.fixtures


def _cli(workspace: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "core", "--workspace", str(workspace), "--no-progress", *args],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def aita_store(fixtures_dir, tmp_path_factory):
    """The README's AITA recipe, run through the CLI: title hidden, scale labels and guidelines set."""
    ws = tmp_path_factory.mktemp("aita-blind") / "ws"
    _cli(ws, "labels", "init", "aita", "--labels", "Against the poster", "Balanced", "Sides with the poster",
         "--guidelines", str(ROOT / "core/labeling/data/aita_guidelines.md"), "--hide", "prompt_title")
    _cli(ws, "labels", "import-items", str(fixtures_dir / "aita/seeds/aita_seed.jsonl"), "--project", "aita")
    store = LabelStore(f"sqlite:///{ws / 'labels.sqlite'}")
    yield store, ws
    store.dispose()


def _every_view(store: LabelStore, project: items.Project) -> list[assignment.ItemView]:
    """One rater walks every item: each view as the Labeling page gets it."""
    views, view = [], assignment.next_item(store, project, "blind_check")
    while view is not None and not view.is_repeat:
        views.append(view)
        view = assignment.submit_rating(store, project, "blind_check", view.item_id, 0.0, token=view.token).next
    return views


def _shown_text(view: assignment.ItemView) -> str:
    return "\n".join([view.prompt_title, view.prompt_body, view.response_text,
                      *(f"{k}: {v}" for k, v in view.fields.items())])


def test_no_rater_view_of_the_real_aita_seed_shows_a_verdict(aita_store):
    store, _ = aita_store
    project = items.update_project(store, "aita", target_raters=1)  # one pass visits every item once
    assert "prompt_title" not in project.visible_fields
    assert project.scale_labels == ("Against the poster", "Balanced", "Sides with the poster")
    assert "sides with the poster" in project.guidelines
    views = _every_view(store, project)
    assert len(views) == 300
    leaks = [(v.item_id, m.group(0)) for v in views if (m := VERDICT.search(_shown_text(v)))]
    assert leaks == []
    assert all(v.prompt_title == "" for v in views)
    titles = reports.items_frame(store, project)["prompt_title"].to_list()
    assert sum(bool(VERDICT.search(t)) for t in titles) == 300  # the store keeps them, for owners only


def test_showing_the_title_shows_the_verdicts(aita_store, tmp_path):
    store, _ = aita_store
    project = items.get_project(store, "aita")
    shown = items.create_project(store, "aita-titled", target_raters=1)  # default: the title is shown
    assert shown.visible_fields == ("prompt_title",)
    first = reports.items_frame(store, project, None).row(0, named=True)
    items.add_items(store, shown, [{"dataset": "aita-copy", "identifier": first["identifier"],
                                    "prompt_title": first["prompt_title"], "prompt_body": first["prompt_body"],
                                    "response_text": first["response_text"]}])
    view = assignment.next_item(store, shown, "someone")
    assert VERDICT.search(_shown_text(view))  # the check above would catch a leak


def test_agreement_on_the_real_export_through_the_store(fixtures_dir, tmp_path):
    ws = tmp_path / "ws"
    _cli(ws, "labels", "init", "aita", "--hide", "prompt_title")
    _cli(ws, "labels", "import-items", str(fixtures_dir / "aita/seeds/aita_seed.jsonl"), "--project", "aita")
    _cli(ws, "labels", "import-reviews", str(fixtures_dir / "aita/reviews/aita_reviews_slim.jsonl"),
         "--project", "aita")
    store = LabelStore(f"sqlite:///{ws / 'labels.sqlite'}")
    project = items.get_project(store, "aita")
    everyone = agreement_report(reports.ratings_frame(store, project, include_models=True), n_boot=50)
    humans = agreement_report(reports.ratings_frame(store, project), n_boot=50)
    mean_r = sum(p["pearson"] for p in everyone["pairwise"]) / len(everyone["pairwise"])
    # The figures of the workbench before corrections existed (main at 3610e52), to four places.
    assert (round(everyone["alpha"]["value"], 4), round(mean_r, 4)) == (0.6530, 0.6608)
    assert round(humans["alpha"]["value"], 4) == 0.5267 and round(humans["pairwise"][0]["pearson"], 4) == 0.5273
    store.dispose()
