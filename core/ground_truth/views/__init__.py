"""Page-facing views of ground truth: what the Ground truth and Trace pages show, as data.

- :mod:`~core.ground_truth.views.loaders`: cache keys, loading judgments/restaurants, computing GT frames
  (committed or what-if), restaurant info and review texts.
- :mod:`~core.ground_truth.views.grid`: verdict grid, flips, score vs K, primitive table, trace links,
  thresholds, export documents, what-if comparisons.
- :mod:`~core.ground_truth.views.status`: judging status and the "index + judge" run.
- :mod:`~core.ground_truth.views.trace_view`: the trace tree as rows or escaped HTML, review cards,
  excerpt highlighting, before/after value changes, K-change tables.

No Streamlit here; the pages cache these calls.
"""

from core.ground_truth.views.grid import (
    GRID_ORDERS,
    PRIMITIVE_ORDER,
    SORTS,
    column_of,
    compare_distributions,
    display_names,
    distribution_table,
    export_document,
    flips,
    grid_columns,
    grid_long,
    is_scored,
    k_order,
    primitive_rows,
    primitive_table,
    score_series,
    score_thresholds,
    thresholds,
    trace_params,
    trace_url,
    trace_urls,
    verdict_grid,
    verdict_grid_rows,
    verdict_moves,
    verdict_order,
    verdict_scale,
    with_score,
)
from core.ground_truth.views.loaders import (
    GTInputs,
    compute_frame,
    data_stamp,
    definitions,
    describe,
    load_inputs,
    load_restaurant_inputs,
    parse_ks,
    restaurant_info,
    restaurant_inputs,
    review_texts,
    split_ks,
)
from core.ground_truth.views.status import (
    JudgingStatus,
    judging_status,
    openai_preflight,
    run_index_and_judge,
)
from core.ground_truth.views.trace_view import (
    NEUTRAL,
    ReviewCard,
    TraceRow,
    changes_frame,
    excerpt_found,
    flat_values,
    fmt_value,
    highlight_html,
    highlight_segments,
    highlight_spans,
    kchange_frames,
    label,
    md_escape,
    primitives_with_reviews,
    review_cards,
    trace_rows,
    tree_html,
    value_changes,
    worked_line,
)

__all__ = [
    "NEUTRAL", "SORTS", "GTInputs", "JudgingStatus", "ReviewCard", "TraceRow", "changes_frame", "column_of",
    "compare_distributions", "compute_frame", "data_stamp", "definitions", "describe", "display_names", "distribution_table",
    "excerpt_found", "export_document", "flat_values", "flips", "fmt_value", "grid_long", "is_scored", "highlight_html",
    "highlight_segments", "highlight_spans", "judging_status", "k_order", "kchange_frames", "label", "load_inputs",
    "md_escape", "openai_preflight", "parse_ks", "primitive_table", "verdict_grid_rows", "GRID_ORDERS", "grid_columns", "primitive_rows", "PRIMITIVE_ORDER", "primitives_with_reviews", "restaurant_info", "restaurant_inputs", "load_restaurant_inputs",
    "review_cards", "review_texts", "run_index_and_judge", "score_series", "score_thresholds", "split_ks", "thresholds", "trace_params",
    "trace_rows", "trace_url", "trace_urls", "tree_html", "value_changes", "verdict_grid", "verdict_moves", "verdict_order", "verdict_scale",
    "with_score", "worked_line",
]
