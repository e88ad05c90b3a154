"""AppTest helpers of the Ground truth and Trace pages: open them on a workspace, find their
tables by their columns, read their metrics, links and download buttons."""

from __future__ import annotations

from tests.helpers.gt_workspace import DATASET, TASK

GT, TRACE = "app_pages/ground_truth.py", "app_pages/trace.py"
ALLOWED_TAGS = {"div", "span", "mark", "style"}


def _gt(app_factory, root):
    at = app_factory(root).run()
    at.switch_page(GT).run()
    assert not at.exception, at.exception
    return at


def _export_buttons(at) -> list[str]:
    """The download buttons' labels once the Export tab is shown (it draws nothing before)."""
    at.session_state["gt.tab"] = "Export"
    at.run()
    assert not at.exception, at.exception
    return [b.proto.label for b in at.get("download_button")]


def _trace(app_factory, root, **query):
    at = app_factory(root).run()
    at.query_params.update({"dataset": DATASET, "task": TASK, "formula": "v1", "k": "50", **query})
    at.switch_page(TRACE).run()
    assert not at.exception, at.exception
    return at


TABLES = {  # dataframes without selection carry no key in AppTest: find them by their columns
    "gt.dist": {"K", "Low Risk", "High Risk", "Critical Risk", "total"}, "gt.table": {"trace", "verdict", "score"},
    "gt.grid_table": {"path", "changes"}, "trace.last_verdicts": {"K", "before", "after"},
    "trace.last_values": {"primitive", "before", "after"}, "trace.k_moved": {"primitive", "before", "after"},
    "trace.ov_table": {"override_id", "author"}, "trace.k_reviews": {"idx", "score_effect"},
    "trace.whatif_mine": {"K", "committed", "what-if"},
}


def _df(at, key):
    return next(df.value for df in at.dataframe if TABLES[key] <= set(df.value.columns))


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _distribution(at) -> list[tuple]:
    return [tuple(r) for r in _df(at, "gt.dist").itertuples(index=False)]


def _links(at) -> dict[str, str]:
    return {p.proto.label: p.proto.query_string for p in at.get("page_link") if p.proto.query_string}


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)
