"""Helpers of the whole-app browser suite (test_tour_e2e.py): a watcher that fails on any Streamlit
exception element or browser console error, and saves a screenshot of every page it checks."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.e2e.conftest import wait_ready

# Streamlit's frontend, loaded straight on a page URL (/trace?…), first probes /<page>/_stcore/health and
# /<page>/_stcore/host-config to guess the base path, gets 404 and falls back to /_stcore/… (streamlit#7074,
# open upstream). Those two requests are the only console errors the suite tolerates, by exact URL shape.
STREAMLIT_BASE_PATH_PROBE = re.compile(r"^https?://[^/]+/[\w.-]+/_stcore/(health|host-config)$")
IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
# Lazily loaded widgets (number inputs, tables…) show a stSkeleton placeholder until their code arrives.
DRAWN = "() => !document.querySelector('[data-testid=\"stMain\"] [data-testid=\"stSkeleton\"]')"
# Resolves once the main area has not changed for `quiet` ms (at most `cap` ms: the Runs page's live
# panel may redraw every second): Streamlit sends a page in several messages, and the Running widget
# shows only after a delay, so "idle" alone can come before the last elements are drawn.
SETTLED = """([quiet, cap]) => new Promise((resolve) => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  let timer;
  const done = () => { observer.disconnect(); clearTimeout(limit); resolve(true); };
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, quiet); });
  observer.observe(main, {subtree: true, childList: true, attributes: true, characterData: true});
  timer = setTimeout(done, quiet);
  const limit = setTimeout(done, cap);
})"""


def is_tolerated(text: str, url: str) -> bool:
    """True only for the 404 of Streamlit's base-path probe on a deep link (see above).

    >>> is_tolerated("Failed to load resource: the server responded with a status of 404 (Not Found)",
    ...              "http://127.0.0.1:8501/trace/_stcore/health")
    True
    >>> is_tolerated("Failed to load resource: net::ERR_NAME_NOT_RESOLVED", "https://fonts.gstatic.com/x.svg")
    False
    >>> is_tolerated("Failed to load resource: the server responded with a status of 404 (Not Found)",
    ...              "http://127.0.0.1:8501/media/x.png")
    False
    """
    return "status of 404" in text and bool(STREAMLIT_BASE_PATH_PROBE.match(url or ""))


@dataclass
class Watch:
    """Console errors and uncaught page errors of every page it watches, and the screenshot folder."""

    shots: Path
    errors: list[str] = field(default_factory=list)
    taken: list[Path] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # per checked page, since the previous check
    _last: float = field(default_factory=time.monotonic)

    def attach(self, page, who: str = "") -> object:
        prefix = f"[{who}] " if who else ""

        def on_console(msg) -> None:
            if msg.type == "error" and not is_tolerated(msg.text, (msg.location or {}).get("url", "")):
                self.errors.append(f"{prefix}console error on {page.url}: {msg.text} ({(msg.location or {}).get('url')})")

        page.on("console", on_console)
        page.on("pageerror", lambda exc: self.errors.append(f"{prefix}page error on {page.url}: {exc}"))
        return page

    def check(self, page, name: str, text: str | None = None, timeout: float = 60_000) -> None:
        """Wait for ``text`` and an idle script, fail on an exception element or a console error so far,
        and save ``name``.png (the whole main area, however tall)."""
        if text is not None:
            wait_ready(page, text, timeout=timeout)
        else:
            page.wait_for_function(IDLE, timeout=timeout)
        page.evaluate(SETTLED, [500, 10_000])
        page.wait_for_function(IDLE, timeout=timeout)
        page.wait_for_function(DRAWN, timeout=timeout)
        exceptions = page.locator('[data-testid="stException"]')
        assert not exceptions.count(), f"{name}: Streamlit exception: {exceptions.first.inner_text()[:500]}"
        now = time.monotonic()
        self.seconds[name], self._last = round(now - self._last, 1), now
        self.screenshot(page, name)
        self._last += time.monotonic() - now  # screenshots are not the app's time
        assert not self.errors, "\n".join(self.errors)

    def screenshot(self, page, name: str) -> Path:
        """The page with the main area unrolled: Streamlit scrolls inside stMain, so a full-page
        screenshot alone would stop at the viewport."""
        path = self.shots / f"{name}.png"
        height = page.evaluate(
            "() => { const m = document.querySelector('[data-testid=\"stMain\"]'); return m ? m.scrollHeight : 0 }")
        viewport = page.viewport_size
        if viewport and height > viewport["height"]:
            page.set_viewport_size({"width": viewport["width"], "height": min(int(height) + 40, 6000)})
            page.wait_for_timeout(150)  # the grid canvases redraw at the new size
            page.screenshot(path=str(path))
            page.set_viewport_size(viewport)
        else:
            page.screenshot(path=str(path))
        self.taken.append(path)
        return path


def wait_idle(page, timeout: float = 60_000) -> None:
    page.wait_for_timeout(300)  # the Running widget shows a moment after a rerun starts
    page.wait_for_function(IDLE, timeout=timeout)


def pick(page, label: str, value: str) -> None:
    """Choose ``value`` in the selectbox labelled ``label`` (typed, as a keyboard user would)."""
    box = page.get_by_test_id("stSelectbox").filter(has_text=label).first
    box.locator("input").click()
    page.keyboard.type(value)
    page.get_by_role("option", name=value, exact=True).first.click()
    wait_idle(page)
    assert box.locator("input").input_value() == value, (label, box.locator("input").input_value())


def rate(page, steps: int) -> None:
    """Move the rating slider ``steps`` × 0.05 with the keyboard (right = positive)."""
    thumb = page.get_by_test_id("stSlider").get_by_role("slider").first
    thumb.focus()
    for _ in range(abs(steps)):
        page.keyboard.press("ArrowRight" if steps > 0 else "ArrowLeft")
    page.get_by_text("Your rating:").first.wait_for(timeout=30_000)
    wait_idle(page)


def _add_chip(page, select, chips, k: str) -> None:
    """Type one K chip; a rerun in flight can swallow the keystrokes (the input is redrawn), so
    focus the input again and retry until the chip is there."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(4):
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                               timeout=60_000)
        chips.click()
        chips.fill(k)
        chips.press("Enter")
        try:
            select.locator(f'[data-tag][aria-label="{k}"]').first.wait_for(state="attached", timeout=15_000)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"the K chip {k} was never added")
