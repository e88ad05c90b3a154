"""Benchmark: our run engine against Inspect AI on the same prompts and the same local endpoint (issue 27).

For each size N: a demo workspace of N restaurants (K = 25), the ``direct`` method's N requests
(the same messages and the same strict JSON response format), and the local OpenAI-compatible
server of bench/runs.py (``tests.helpers.llm_server``, in its own process, a fixed latency per
request). Each side runs as its own process, timed from spawn to exit, against a fresh server:

- ours: ``python -m core run --method direct -n N --concurrency C`` with an empty response cache
  (what ``bench/runs.py --cli`` times);
- Inspect: ``inspect eval`` of a task file written to a temp dir (a ``MemoryDataset`` of the same N
  prompts, solver ``generate()``, no scorer), model ``openai/<model>`` with ``--model-base-url`` at
  the server and ``--max-connections C``, logs in a temp dir.

Inspect AI is an optional extra: it lives in its own venv outside the project (``--inspect-venv``,
created with ``pip install inspect-ai openai`` when missing) and is never a project dependency.
The table: ideal wall (N × latency / C), both walls, ours / Inspect, the requests each side sent
(the server's counter) and the load average. Defaults match the issue: N=200 at 200 ms and
concurrency 16, N=2,000 and N=5,000 at 50 ms and 64.

    .venv/bin/python bench/runs_vs_inspect.py [--sizes 200,2000,5000] [--passes 1]
        [--latency S] [--concurrency C] [--inspect-venv /tmp/inspect-venv]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runs import cli_run, start_server, timed_process  # noqa: E402
from core.demo import generate_demo  # noqa: E402
from core.methods import METHODS  # noqa: E402
from core.runs import RunConfig, plan_run  # noqa: E402
from core.workspace import Workspace  # noqa: E402

DEFAULTS = {200: (0.2, 16), 2000: (0.05, 64), 5000: (0.05, 64)}  # N → (latency s, concurrency), as in issue 27
FALLBACK = (0.05, 64)
MODEL = "bench-model"

TASK_FILE = '''"""Written by bench/runs_vs_inspect.py: the direct method's prompts as an Inspect task."""
import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, ResponseSchema
from inspect_ai.solver import generate
from inspect_ai.util import JSONSchema

ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser}


@task
def runs_vs_inspect():
    data = json.loads((Path(__file__).parent / "prompts.json").read_text(encoding="utf-8"))
    samples = [Sample(id=p["id"], input=[ROLES[m["role"]](content=m["content"]) for m in p["messages"]])
               for p in data["prompts"]]
    fmt = data["response_format"]["json_schema"]
    schema = ResponseSchema(name=fmt["name"], json_schema=JSONSchema.model_validate(fmt["schema"]),
                            strict=fmt.get("strict"))
    return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=None,
                config=GenerateConfig(response_schema=schema))
'''


def inspect_python(venv_dir: Path) -> Path:
    return venv_dir / "bin" / "python"


def ensure_inspect(venv_dir: Path) -> str:
    """Inspect AI's version in ``venv_dir``, installing it there (with openai) when missing; exits 2
    with a one-line message when the venv or the install fails."""
    python = inspect_python(venv_dir)
    probe = [str(python), "-c", "import inspect_ai, openai; print(inspect_ai.__version__)"]
    if python.exists():
        found = subprocess.run(probe, capture_output=True, text=True)
        if found.returncode == 0:
            return found.stdout.strip()
    print(f"installing inspect-ai and openai into {venv_dir} …", flush=True)
    try:
        venv.create(venv_dir, with_pip=True)
        install = subprocess.run([str(python), "-m", "pip", "install", "-q", "inspect-ai", "openai"],
                                 capture_output=True, text=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SystemExit(_fail(f"cannot create the venv {venv_dir}: {exc}")) from exc
    found = subprocess.run(probe, capture_output=True, text=True) if install.returncode == 0 else install
    if found.returncode != 0:
        last = (found.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(_fail(f"pip install inspect-ai openai into {venv_dir} failed: {last}"))
    return found.stdout.strip()


def _fail(message: str) -> int:
    print(message, file=sys.stderr)
    return 2


def write_prompts(root: Path, n: int, out: Path) -> int:
    """The ``direct`` method's request for each of the N restaurants a ``run -n N`` draws, as JSON."""
    config = RunConfig(dataset="demo", task="G1a", policy="G1_allergy_V2", method="direct", model=MODEL, k=25, n=n)
    saved = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    os.environ.update({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "bench"})  # planned, never sent
    try:
        plan = plan_run(config, Workspace(root))
    finally:
        for key, value in saved.items():
            os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)
    ctx = plan.context(None)
    requests = [(r.business_id, METHODS["direct"].requests(ctx, r)) for r in plan.restaurants]
    prompts = [{"id": bid, "messages": reqs[0].messages} for bid, reqs in requests if len(reqs) == 1]
    if len(prompts) != n:
        raise SystemExit(f"direct: expected one request for each of {n} restaurants, got {len(prompts)}")
    formats = {json.dumps(reqs[0].response_format, sort_keys=True) for _, reqs in requests}
    if len(formats) != 1:
        raise SystemExit(f"direct: expected one response format, got {len(formats)}")
    out.write_text(json.dumps({"prompts": prompts, "response_format": json.loads(formats.pop())}), encoding="utf-8")
    return len(prompts)


CHECK_LOG = """import sys
from inspect_ai.log import list_eval_logs, read_eval_log
logs = [read_eval_log(info, header_only=True) for info in list_eval_logs(sys.argv[1])]
print(" ".join(f"{h.status}:{h.results.completed_samples if h.results else 0}" for h in logs))
"""


def check_inspect_log(venv_dir: Path, log_dir: Path, n: int) -> None:
    """Exits when the eval's log is not one ``success`` with N completed samples (``inspect eval``
    exits 0 even when every request failed)."""
    proc = subprocess.run([str(inspect_python(venv_dir)), "-c", CHECK_LOG, str(log_dir)], capture_output=True,
                          text=True, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    if proc.returncode != 0 or proc.stdout.split() != [f"success:{n}"]:
        raise SystemExit(f"inspect eval did not complete {n} samples (log {log_dir}): "
                         f"{proc.stdout.strip() or proc.stderr.strip()[-500:]}")


def inspect_run(venv_dir: Path, task_dir: Path, n: int, latency: float, concurrency: int) -> dict:
    """``inspect eval`` of the task file against a fresh server: wall time from spawn to exit."""
    server, base_url = start_server(latency)
    log_dir = task_dir / "logs"
    shutil.rmtree(log_dir, ignore_errors=True)
    command = [str(venv_dir / "bin" / "inspect"), "eval", "task.py", "--model", f"openai/{MODEL}",
               "--model-base-url", base_url, "--max-connections", str(concurrency), "--log-dir", str(log_dir),
               "--display", "none",
               # an unknown model name counts as a new OpenAI model, sent to /v1/responses: ours speaks chat
               "-M", "responses_api=false"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OPENAI_BASE_URL")}
    env.update({"OPENAI_API_KEY": "bench", "INSPECT_LOG_DIR": str(log_dir)})
    proc, spawned, exited, stats = timed_process(command, cwd=task_dir, env=env, server=server, base_url=base_url)
    if proc.returncode != 0:
        raise SystemExit(f"inspect eval failed: {(proc.stderr or proc.stdout)[-2000:]}")
    check_inspect_log(venv_dir, log_dir, n)
    return {"wall": exited - spawned, "requests": stats["chat_requests"], "load": os.getloadavg()[0],
            "max_in_flight": stats["max_in_flight"]}


def bench_size(n: int, latency: float, concurrency: int, args: argparse.Namespace) -> dict:
    """Both sides at one size, ``args.passes`` times each, alternating; the medians."""
    with tempfile.TemporaryDirectory(prefix="runs-vs-inspect-") as tmp:
        root, task_dir = Path(tmp) / "ws", Path(tmp) / "inspect"
        task_dir.mkdir()
        generate_demo(root, n_restaurants=n, reviews_per_restaurant=25, progress=None)
        write_prompts(root, n, task_dir / "prompts.json")
        (task_dir / "task.py").write_text(TASK_FILE, encoding="utf-8")
        ours_args = argparse.Namespace(method="direct", restaurants=n, concurrency=concurrency, latency=latency)
        ours, theirs = [], []
        for i in range(args.passes):
            ours.append(cli_run(ROOT, root, ours_args))
            theirs.append(inspect_run(args.inspect_venv, task_dir, n, latency, concurrency))
            print(f"  N={n} pass {i + 1}: ours {ours[-1]['wall']:.2f} s ({ours[-1]['requests']} requests, load "
                  f"{ours[-1]['load']:.1f}), Inspect {theirs[-1]['wall']:.2f} s ({theirs[-1]['requests']} requests, "
                  f"max in flight {theirs[-1]['max_in_flight']}, load {theirs[-1]['load']:.1f})", flush=True)
    med = statistics.median
    return {"n": n, "latency": latency, "concurrency": concurrency, "ideal": n * latency / concurrency,
            "ours": med(r["wall"] for r in ours), "inspect": med(r["wall"] for r in theirs),
            "ours_requests": "/".join(sorted({str(r["requests"]) for r in ours})),
            "inspect_requests": "/".join(sorted({str(r["requests"]) for r in theirs})),
            "load": med(r["load"] for r in ours + theirs)}


def print_table(rows: list[dict], version: str, passes: int) -> None:
    print(f"\nours: python -m core run --method direct; Inspect AI {version}: inspect eval, generate(); "
          f"median of {passes} pass(es), each a fresh process against a fresh server")
    head = ("N", "latency", "conc.", "ideal", "ours", "Inspect", "ours/Inspect", "req. ours", "req. Inspect", "load")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        cells = (f"{r['n']:,}", f"{r['latency'] * 1000:.0f} ms", str(r["concurrency"]), f"{r['ideal']:.2f} s",
                 f"{r['ours']:.2f} s", f"{r['inspect']:.2f} s", f"{r['ours'] / r['inspect']:.2f}×",
                 r["ours_requests"], r["inspect_requests"], f"{r['load']:.1f}")
        print("| " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,2000,5000", help="comma-separated N (restaurants = prompts)")
    parser.add_argument("--latency", type=float, help="seconds per request at the server (default: per size)")
    parser.add_argument("--concurrency", type=int, help="our --concurrency and Inspect's --max-connections")
    parser.add_argument("--passes", type=int, default=1, help="runs of each side per size (the median is shown)")
    parser.add_argument("--inspect-venv", type=Path, default=Path("/tmp/inspect-venv"),
                        help="Inspect AI's own venv, created when missing")
    args = parser.parse_args()
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        raise SystemExit(f"--sizes: expected comma-separated integers, got {args.sizes!r}") from None
    if not sizes or min(sizes) < 1 or args.passes < 1:
        raise SystemExit("--sizes and --passes must be positive")
    args.inspect_venv = args.inspect_venv.resolve()
    version = ensure_inspect(args.inspect_venv)
    print(f"Inspect AI {version} in {args.inspect_venv}", flush=True)
    rows = []
    for n in sizes:
        latency, concurrency = DEFAULTS.get(n, FALLBACK)
        rows.append(bench_size(n, args.latency or latency, args.concurrency or concurrency, args))
    print_table(rows, version, args.passes)


if __name__ == "__main__":
    main()
