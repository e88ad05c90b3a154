"""Method runs (SPEC §4): plan (pure, with pre-flight figures), execute (resumable), store, import.

```
plan_run(config, ws, *, resume=False) -> RunPlan      checks names, loads samples and GT, pre-flight
preview.preview_run(config, ws) -> dict               the Runs page's pre-flight at any scale (no samples, no GT)
execute_run(plan, llm, progress) -> status           samples.jsonl (fsync'd), then results.json
list_runs / show_run / run_status / cancel_run / resume_config
import_run_file(ws, path) -> dict                     xnot detailed_results.json, ADDM results.json
```
"""

from core.runs.execute import execute_run, execute_run_async, progress_text
from core.runs.imports import import_run_file
from core.runs.job import run_job
from core.runs.plan import RunConfig, RunPlan, plan_run
from core.runs.results import RESULTS_SCHEMA, build_results, finalize_results, validate_results
from core.runs.store import cancel_run, list_runs, read_samples, resume_config, run_dir, run_status, show_run

__all__ = [
    "RESULTS_SCHEMA", "RunConfig", "RunPlan", "build_results", "cancel_run", "execute_run", "execute_run_async",
    "finalize_results", "import_run_file", "list_runs", "plan_run", "progress_text", "read_samples", "run_job",
    "resume_config", "run_dir", "run_status", "show_run", "validate_results",
]
