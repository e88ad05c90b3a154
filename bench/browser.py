"""What the user waits for: every page's main interactions in Chromium against ``streamlit run``.

```
python bench/browser.py [--app-dir DIR] [--workspace DIR] [--passes 3] [--json OUT]
```
Generates a fresh demo workspace (``python -m core demo``: 100 restaurants × 200 reviews, judged,
runs, labels, study, gold) unless ``--workspace`` is given, starts ``streamlit run app.py`` of
``--app-dir`` (default: this checkout; pass another checkout to measure a baseline in the same run)
and drives Debian's Chromium (``/usr/bin/chromium``) through the scenario below, ``--passes`` times,
each pass in a fresh browser session. Per interaction it records:

* **browser**: from the action (click, key press, page load) to the page settled: a new
  ``script_finished`` message has arrived on the websocket, the expected text is visible and the
  ``stStatusWidget`` ("Running…") is gone;
* **server**: in the server's own clock (``bench/server_clock``, loaded into the servers the bench
  starts), from the rerun request received to the ``script_finished`` message queued for the
  browser: the script run and what Streamlit does around it. On a page load the request is the one
  the browser sends once the frontend has loaded and opened the websocket (the frontend's load is
  in the browser figure). Measured at the browser's end of the websocket instead, as this bench did
  until session 5, each figure also held the 60-200 ms the frames take through Chromium, the CDP
  and Playwright to reach the bench on a loaded 2-core machine;
* **CPU**: the CPU time the server process used meanwhile (``/proc``), which, unlike wall time,
  does not grow while the process waits for a core on a loaded machine.

Cold start is the time from spawning ``streamlit run`` to the Home page settled in the browser
(with the server's CPU time until then); each server finishes its warm-up before the next starts.
Each checkout's modules are compiled first (:func:`compile_checkout`), as ``make run`` does.
Streamlit alone, a hello-world ``st.App`` (:data:`FLOOR_APP`), is measured in the same run: its cold
start and page load are the floor no change to the app can go below. Pass 1 meets cold caches; the
table shows medians over all passes. The machine's load average is printed with the figures (the
bench runs on a shared 2-core machine). Interactions that write (labeling submit) take a new item each pass.
``bench/report.py`` runs this for two checkouts side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("WORKBENCH_CHROMIUM", "/usr/bin/chromium")
CLOCK_DIR = Path(__file__).resolve().parent / "server_clock"  # on the servers' PYTHONPATH (its sitecustomize)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-quic", "--disable-component-update", "--disable-sync"]
TIMEOUT_MS = 120_000
Expected = str | re.Pattern | Callable[[], str] | None
STATUS_GONE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def load_average() -> str:
    """The 1/5/15-minute load averages, as ``uptime`` prints them."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def make_demo(root: Path) -> Path:
    """A fresh full demo workspace (the same ``python -m core demo`` a newcomer runs)."""
    subprocess.run([sys.executable, "-m", "core", "--workspace", str(root), "demo"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return root


# Streamlit alone: the same kind of app (an st.App around a script) drawing one title, measured in
# the same run as the floor the workbench's figures stand on (server start, the frontend's load).
FLOOR_APP = {"app.py": 'import streamlit as st\n\napp = st.App("main.py")\n',
             "main.py": 'import streamlit as st\n\nst.set_page_config(page_title="hello", layout="wide")\n'
                        'st.title("Pages")\nst.write("A bare Streamlit app.")\n'}


def floor_app(root: Path) -> Path:
    """A hello-world Streamlit app in ``root`` (:data:`FLOOR_APP`)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in FLOOR_APP.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def compile_checkout(app_dir: Path) -> None:
    """Write the bytecode of a checkout's app modules, as its first ``make run`` leaves them (``make
    install`` compiles them): the servers run with PYTHONDONTWRITEBYTECODE, and without this a
    checkout never run before would compile its modules at every cold start."""
    targets = [name for name in ("core", "app_pages", "main.py", "app.py") if (app_dir / name).exists()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *targets], cwd=app_dir, check=True,
                   stdout=subprocess.DEVNULL)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``streamlit run app.py`` of ``app_dir`` on a free loopback port."""

    def __init__(self, app_dir: Path, workspace: Path, log: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(log, "w")  # noqa: SIM115 (closed in stop)
        self.clock = log.with_suffix(".clock")  # the server's own request and finish times (bench/server_clock)
        self.clock.write_text("", encoding="utf-8")
        self._clock_read = 0
        env = {**os.environ, "WORKBENCH_WORKSPACE": str(workspace), "PYTHONDONTWRITEBYTECODE": "1",
               "WORKBENCH_BENCH_CLOCK": str(self.clock),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(CLOCK_DIR), os.environ.get("PYTHONPATH")]))}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(self.port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=app_dir, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def clock_events(self) -> tuple[list[float], list[float]]:
        """(requests, finishes) the server has written since the last call: perf_counter seconds."""
        with open(self.clock, encoding="utf-8") as fh:
            fh.seek(self._clock_read)
            text = fh.read()
        complete = text[:text.rfind("\n") + 1]  # a line being written is read next time
        self._clock_read += len(complete.encode("utf-8"))
        events: dict[str, list[float]] = {"request": [], "finished": []}
        for line in complete.splitlines():
            kind, at = line.split()
            events[kind].append(float(at))
        return events["request"], events["finished"]

    def wait_healthy(self, timeout: float = 60) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"streamlit did not start; see {self.log.name}")

    def cpu_ms(self) -> float:
        """CPU time (user + system) the server process has used so far: unlike wall time, it does
        not grow while the process waits for a core on a loaded machine. Linux /proc, 10 ms ticks."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

    def wait_idle(self, quiet_ms: float = 500, timeout: float = 60) -> None:
        """Until the process has used no CPU for ``quiet_ms`` (its warm-up thread has finished
        importing): a server started for one checkout must not take CPU from the next one's start."""
        deadline, last, since = time.time() + timeout, self.cpu_ms(), time.perf_counter()
        while time.time() < deadline:
            time.sleep(0.1)
            now = self.cpu_ms()
            if now - last > 10:  # two clock ticks: still working
                last, since = now, time.perf_counter()
            elif (time.perf_counter() - since) * 1000 >= quiet_ms:
                return

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@dataclass
class Wire:
    """When the page received a finished script run (to know an action's run has reached the browser)."""

    finished: list[float] = field(default_factory=list)

    def attach(self, page) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        def on_socket(ws) -> None:
            def received(payload) -> None:
                if isinstance(payload, bytes | bytearray):
                    try:
                        if ForwardMsg.FromString(bytes(payload)).WhichOneof("type") == "script_finished":
                            self.finished.append(time.perf_counter())
                    except Exception:  # noqa: BLE001 (a frame that is not a ForwardMsg: not ours to time)
                        pass

            ws.on("framereceived", received)

        page.on("websocket", on_socket)


class Driver:
    """One browser page on the server; ``timed`` runs an action and waits for the page to settle."""

    def __init__(self, browser, server: Server, times: dict[str, list[tuple[float, float, float]]]) -> None:
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.server, self.url, self.times, self.wire = server, server.url, times, Wire()
        self.wire.attach(self.page)

    def settle(self, text: Expected, n_finished: int | None, start: float) -> float:
        """Wait for a script run finished after ``start`` (unless ``n_finished`` is None: a change drawn
        in the browser alone), ``text`` visible and no Running widget."""
        page = self.page
        if callable(text):  # known only once the action ran (e.g. the option it picked)
            text = text()
        while True:
            if text is not None:
                page.get_by_text(text).first.wait_for(state="visible", timeout=TIMEOUT_MS)
            page.wait_for_function(STATUS_GONE, timeout=TIMEOUT_MS, polling=10)
            if n_finished is None or len(self.wire.finished) > n_finished:
                return time.perf_counter()
            if time.perf_counter() - start > TIMEOUT_MS / 1000:
                raise TimeoutError("no script run finished")
            page.wait_for_timeout(5)

    def timed(self, name: str, action: Callable[[], object], text: Expected = None, rerun: bool = True) -> float:
        """Run ``action`` and record (server ms, browser ms, server CPU ms) under ``name``; ``rerun=False``: the browser
        alone draws the change (a tab of ``st.tabs`` without ``on_change``), server time 0."""
        page = self.page
        page.wait_for_function(STATUS_GONE, timeout=TIMEOUT_MS)
        page.wait_for_timeout(150)  # let a rerun queued by the last interaction show itself
        page.wait_for_function(STATUS_GONE, timeout=TIMEOUT_MS)
        n_finished = len(self.wire.finished)
        self.server.clock_events()  # what came before this action is not its
        cpu = self.server.cpu_ms()
        began = time.perf_counter()
        action()
        end = self.settle(text, n_finished if rerun else None, began)
        self.times[name].append((server_ms(began, *self.server.clock_events()) if rerun else 0.0,
                                 (end - began) * 1000, self.server.cpu_ms() - cpu))
        return end - began

    def goto(self, path: str) -> Callable[[], object]:
        """A page load: the browser loads the frontend and opens a new session (a link from outside)."""
        return lambda: self.page.goto(f"{self.url}/{path}", wait_until="commit")

    def nav(self, name: str, section: str, title: str, text: Expected) -> None:
        """Open a page from the top navigation, as a user moves between pages: the section's menu is
        opened first (drawn by the browser alone), the timed action is the click on the page."""
        self.page.get_by_test_id("stTopNavSection").filter(has_text=section).first.click()
        link = self.page.get_by_test_id("stTopNavDropdownLink").filter(
            has_text=re.compile(rf"{re.escape(title)}$")).first
        link.wait_for(timeout=TIMEOUT_MS)
        self.timed(name, link.click, text)

    def close(self) -> None:
        self.page.close()


def server_ms(began: float, requests: list[float], finishes: list[float]) -> float:
    """The script runs an action caused, summed, in the server's own times: each from its first
    request since the previous finish (or from the previous finish: a rerun the server started
    itself) to its finish. On a page load the first request is the one the browser sends once the
    frontend has loaded and opened the websocket: the frontend's own load is browser time.

    >>> round(server_ms(10.0, [10.1, 10.5], [10.3, 10.6]))  # two runs: 200 ms and 100 ms
    300
    """
    total, previous = 0.0, began
    for finished in finishes:
        asked = [t for t in requests if previous <= t <= finished]
        total += (finished - (asked[0] if asked else previous)) * 1000
        previous = finished
    return total


def _pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the selectbox labelled ``label`` (type it, then Enter)."""
    box = page.get_by_test_id("stSelectbox").filter(has_text=label).first
    box.locator("input").click()
    page.keyboard.type(option)
    page.get_by_role("option", name=option).first.wait_for(timeout=TIMEOUT_MS)
    page.keyboard.press("Enter")


def _number(page, label: str, value: str) -> None:
    field_ = page.get_by_label(label, exact=True).first
    field_.fill(value)
    field_.press("Enter")


def scenario(d: Driver, pass_no: int) -> None:
    """Every page's main interactions, in a newcomer's order."""
    page = d.page
    d.timed("Home: open (page load)", d.goto(""), "Pages")
    d.nav("Data: open", "Workbench", "Data", "Restaurants of")
    d.timed("Data: search by name", lambda: (page.get_by_label("Search by name").fill("a"),
                                             page.get_by_label("Search by name").press("Enter")), "Restaurants of")

    d.nav("GT: open", "Ground truth", "Ground truth", "Open the trace")
    new_k = ["150", "175", "125", "160"][pass_no % 4]  # a new K each pass: its GT never computed before
    chips = page.get_by_test_id("stMultiSelect").first.locator("input")

    def add_k() -> None:
        chips.click()
        chips.fill(new_k)
        chips.press("Enter")
    d.timed("GT: add a K", add_k, f"K={new_k} ·")
    page.keyboard.press("Escape")
    d.timed("GT: formula v2", lambda: _pick(page, "Formula / policy / variant", "v2"), re.compile(r"v2: "))
    restaurant = page.get_by_test_id("stSelectbox").filter(has_text="Restaurant").first
    chosen: list[str] = []

    def pick_restaurant() -> None:
        restaurant.locator("input").click()
        options = page.get_by_role("option")
        options.nth(3).wait_for(timeout=TIMEOUT_MS)
        option = options.nth(2 + pass_no)
        chosen.append(option.inner_text().strip())
        option.click()
    d.timed("GT: select a restaurant", pick_restaurant, lambda: f"Selected: {chosen[-1]}")

    link = page.get_by_test_id("stPageLink").filter(has_text="K=50 · ").first
    d.timed("Trace: open from the GT link", lambda: link.click(), "Contributing reviews of")
    d.timed("Trace: tab What-if", lambda: page.get_by_role("tab", name="What-if").click(), "HIGH_THRESHOLD")
    value = ["3", "3.5", "2.5", "4.5"][pass_no % 4]  # a new value each pass: a what-if never computed before
    d.timed("Trace: what-if HIGH_THRESHOLD", lambda: _number(page, "HIGH_THRESHOLD", value),
            re.compile(r"Changed: .*HIGH_THRESHOLD"))
    d.timed("Trace: tab Formula and reviews", lambda: page.get_by_role("tab", name="Formula and reviews").click(),
            "Contributing reviews of")
    d.timed("Trace: compare with judge", lambda: _pick(page, "Compare with judge", "heuristic-v1"), None)

    d.nav("Runs: open", "Runs", "Runs", "Launch a run")
    d.timed("Runs: change K", lambda: _number(page, "K (reviews per restaurant)", str(50 + 25 * pass_no)),
            "Launch a run")
    d.nav("Results: open", "Runs", "Results", "Run (newest first)")

    d.timed("Labeling: open as a rater (page load)", d.goto(f"labeling?rater=bench_{os.getpid()}_{pass_no}"),
            "Your rating")
    d.timed("Labeling: tick 0 is my answer", lambda: page.get_by_text("0 is my answer").first.click(), "Your rating")
    d.timed("Labeling: submit a rating", lambda: page.get_by_role("button", name="Submit").first.click(),
            re.compile(r"You: 1 of"))

    d.timed("Label review: open (page load)", d.goto("label-review?rater=demo_ben"), "Signed in as")
    d.timed("Label review: Disagreements", lambda: page.locator('[data-testid="stButtonGroup"]').get_by_text(
        "Disagreements", exact=True).click(), "Click a row")

    d.nav("Analysis: open", "Studies", "Analysis", "Largest disagreements")
    d.timed("Analysis: perspective tenant", lambda: page.get_by_role("radio", name="tenant").or_(
        page.get_by_role("button", name="tenant")).first.click(), "Largest disagreements")

    d.nav("Gold: open", "Evaluation", "Gold answers", "By domain")
    d.timed("Gold: tab Samples", lambda: page.get_by_role("tab", name="Samples").click(), "Citation found",
            rerun=False)


def floor_scenario(d: Driver, _pass_no: int) -> None:
    """The floor app's page load, the one interaction it has."""
    d.timed(FLOOR_PAGE_LOAD, d.goto(""), "Pages")


def cold_start(browser, app_dir: Path, workspace: Path, log: Path) -> tuple[float, float, float, Server]:
    """(ms to /_stcore/health, ms to the Home page settled in Chromium, CPU ms the server used until
    then) from spawning the process."""
    server = Server(app_dir, workspace, log)
    server.wait_healthy()
    healthy = (time.perf_counter() - server.started) * 1000
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server.url, wait_until="commit")
    page.get_by_text("Pages").first.wait_for(state="visible", timeout=TIMEOUT_MS)
    page.wait_for_function(STATUS_GONE, timeout=TIMEOUT_MS, polling=10)
    settled = (time.perf_counter() - server.started) * 1000
    page.close()
    return healthy, settled, server.cpu_ms(), server


def run(checkouts: dict[str, tuple[Path, Path]], passes: int, log_dir: Path) -> dict[str, dict]:
    """Cold starts and every interaction, ``passes`` times, of each checkout (label -> (app dir,
    workspace)) and of Streamlit alone (:data:`FLOOR_APP`); the checkouts take turns within each pass, so
    they meet the same machine load, and each server is left to finish its warm-up before the next
    one starts (a warm-up thread still importing would take CPU from the next cold start)."""
    from playwright.sync_api import sync_playwright

    checkouts = {**checkouts, FLOOR: (floor_app(log_dir / "floor-app"), next(iter(checkouts.values()))[1])}
    for app, _ in checkouts.values():
        compile_checkout(app)
    out = {label: {"app_dir": str(app), "cold": [], "times": defaultdict(list), "load": []}
           for label, (app, _) in checkouts.items()}
    servers: dict[str, Server] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for i in range(passes):
                for label, (app, ws) in checkouts.items():
                    if label in servers:
                        servers.pop(label).stop()
                    out[label]["load"].append(load_average())
                    *cold, servers[label] = cold_start(browser, app, ws, log_dir / f"{label}-cold-{i}.log")
                    out[label]["cold"].append(tuple(cold))
                    servers[label].wait_idle()
            for i in range(passes):
                for label in checkouts:
                    out[label]["load"].append(load_average())
                    d = Driver(browser, servers[label], out[label]["times"])
                    try:
                        (floor_scenario if label == FLOOR else scenario)(d, i)
                    except Exception:
                        d.page.screenshot(path=str(log_dir / f"{label}-failed-pass{i}.png"), full_page=True)
                        raise
                    finally:
                        d.close()
        finally:
            for server in servers.values():
                server.stop()
            browser.close()
    for figures in out.values():
        figures["times"] = dict(figures["times"])
    return out


def summary(figures: dict) -> list[tuple[str, float, float, float]]:
    """(interaction, server median ms, browser median ms, server CPU median ms) per interaction."""
    return [(name, *(statistics.median(v[i] for v in values) for i in range(3)))
            for name, values in figures["times"].items()]


COLD_MS, SERVER_MS, BROWSER_MS = 3000.0, 300.0, 1000.0
FLOOR, FLOOR_PAGE_LOAD = "streamlit alone", "page load"


def print_floor(floor: dict) -> None:
    """Streamlit alone (:data:`FLOOR_APP`), measured in the same run: what no app change can remove."""
    cold, cpu = (statistics.median(c[i] for c in floor["cold"]) for i in (1, 2))
    load = statistics.median(t[1] for t in floor["times"][FLOOR_PAGE_LOAD])
    print(f"Streamlit alone (a hello-world st.App, same machine, same run): cold start {cold:.0f} ms (server CPU "
          f"{cpu:.0f} ms), page load {load:.0f} ms in the browser")


def print_table(after: dict, before: dict | None = None, floor: dict | None = None) -> int:
    """The one table: cold start, then each interaction (medians), pass/fail of ``after`` against the
    targets; with ``before`` (a baseline measured in the same run) its figures and the ratio; with
    ``floor`` the same figures of Streamlit alone."""
    print(f"\nload average (1/5/15 min) at each pass: {after['app_dir']} {' | '.join(after['load'])}")
    if before:
        print(f"  baseline {before['app_dir']} {' | '.join(before['load'])}")
    health, cold, cpu = (statistics.median(c[i] for c in after["cold"]) for i in range(3))
    line = (f"cold start, process spawn to the Home page settled: {cold:.0f} ms (health {health:.0f} ms; "
            f"server CPU {cpu:.0f} ms)")
    if before:
        b, b_cpu = (statistics.median(c[i] for c in before["cold"]) for i in (1, 2))
        line += f"; baseline {b:.0f} ms (CPU {b_cpu:.0f} ms); after/before {cold / b:.2f}"
    print(f"{line}; target ≤ {COLD_MS:.0f} ms: {'ok' if cold <= COLD_MS else 'OVER'}")
    if floor:
        print_floor(floor)
    cols = ["server", "CPU", "browser"]
    head = "".join(f"{c:>9}" for c in cols) if not before else "".join(
        f"{c + ' ' + w:>12}" for c in cols for w in ("bef", "aft")) + f"{'ratio':>7}"
    print(f"  {'interaction (medians, ms)':<40}{head}  targets: server ≤ {SERVER_MS:.0f}, browser ≤ {BROWSER_MS:.0f}")
    base = {name: rest for name, *rest in summary(before)} if before else {}
    failures = 0 if cold <= COLD_MS else 1
    for name, server, browser_ms, cpu in summary(after):
        bad = ([] if server <= SERVER_MS else ["server"]) + ([] if browser_ms <= BROWSER_MS else ["browser"])
        failures += bool(bad)
        mark = "OVER " + "+".join(bad) if bad else "ok"
        if before and name in base:
            s0, b0, c0 = base[name]
            ratio = browser_ms / b0 if b0 else float("nan")
            print(f"  {name:<40}{s0:12.0f}{server:12.0f}{c0:12.0f}{cpu:12.0f}{b0:12.0f}{browser_ms:12.0f}"
                  f"{ratio:7.2f}  {mark}")
        else:
            print(f"  {name:<40}{server:9.0f}{cpu:9.0f}{browser_ms:9.0f}  {mark}")
    print("server = request to script finished (wall), CPU = the server process's CPU time meanwhile, browser = "
          f"action to page settled; ratio = browser after/before. {failures} figure(s) over target.")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout whose app.py is served")
    parser.add_argument("--workspace", type=Path, help="a demo workspace (default: generate a fresh one)")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench_browser_"))
    workspace = args.workspace or make_demo(tmp / "ws")
    figures = run({"after": (args.app_dir.resolve(), workspace)}, args.passes, tmp)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return print_table(figures["after"], floor=figures[FLOOR])


if __name__ == "__main__":
    raise SystemExit(main())
