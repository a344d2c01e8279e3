"""A real browser for tests: headless Chromium driven over the DevTools protocol (its websocket),
enough to open a page, click what a user clicks, read what the page shows and take a screenshot."""

from __future__ import annotations

import base64
import itertools
import json
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from websockets.sync.client import connect


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserError(AssertionError):
    """The page answered a DevTools command with an error or a script exception."""


class Browser:
    def __init__(self, url: str):
        self.profile = tempfile.TemporaryDirectory()
        self.proc = subprocess.Popen(
            [
                chromium_path(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
                "--window-size=1400,1000",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile.name}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port = None
        for line in self.proc.stderr:
            if m := re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line):
                port = int(m.group(1))
                break
        assert port, "chromium did not start its DevTools endpoint"
        page = next(
            t for t in json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list")) if t["type"] == "page"
        )
        self.ws = connect(page["webSocketDebuggerUrl"], max_size=50_000_000)
        self.ids = itertools.count(1)
        self.open(url)

    def open(self, url: str) -> None:
        here = self.evaluate("location.href")
        self.send("Page.navigate", url=url)
        self.wait_loaded(leaving=here)

    def send(self, method: str, **params) -> dict:
        message_id = next(self.ids)
        self.ws.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.recv(timeout=60))
            if reply.get("id") == message_id:
                if "error" in reply:
                    raise BrowserError(reply["error"])
                return reply["result"]

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise BrowserError(result["exceptionDetails"])
        return result["result"].get("value")

    def wait_for(self, expression: str, what: str, timeout_s: float = 30) -> None:
        """Until `expression` is true on the page, read in one evaluation (two reads can straddle a
        navigation: the old page's state, then the new page's address). A read that lands while the
        page is being replaced (its context gone) counts as not yet."""
        deadline = time.monotonic() + timeout_s
        last: BrowserError | None = None
        while True:
            try:
                if self.evaluate(expression):
                    return
            except BrowserError as exc:
                last = exc
            assert time.monotonic() < deadline, f"{what} within {timeout_s} s (last error: {last})"
            time.sleep(0.05)

    def wait_loaded(self, leaving: str | None = None, timeout_s: float = 30) -> None:
        """Until the page (another one than `leaving`, if given) has finished loading."""
        other = "true" if leaving is None else f"location.href !== {json.dumps(leaving)}"
        self.wait_for(f"document.readyState === 'complete' && {other}", "the page did not load", timeout_s)

    def text(self, selector: str, timeout_s: float = 30) -> str:
        """The text of the first element the selector finds, once the page has drawn it."""
        found = f"document.querySelector({json.dumps(selector)})"
        self.wait_for(f"document.readyState === 'complete' && {found} !== null", f"no {selector}", timeout_s)
        return self.evaluate(f"{found}.textContent")

    def click(self, selector: str) -> None:
        """Click the first element the selector finds, as a user does, and wait for the next page."""
        self.text(selector)  # drawn
        here = self.evaluate("location.href")
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView();"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)
        self.wait_loaded(leaving=here)

    def press(self, key: str, timeout_s: float = 30) -> None:
        """Press one key, as a user does, and wait for the page it leads to. The page is told it has
        the focus (a headless page can lose it between two navigations, and a key then goes nowhere);
        the new page's state and address are read in one go (two reads can straddle the switch)."""
        here = self.evaluate("location.href")
        self.send("Emulation.setFocusEmulationEnabled", enabled=True)
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", type=kind, key=key, text=key if kind == "keyDown" else "")
        arrived = f"document.readyState === 'complete' && location.href !== {json.dumps(here)}"
        self.wait_for(arrived, f"pressing {key!r} led nowhere", timeout_s)

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        from rubricflow.tasks.runtime.processes import stop

        self.ws.close()
        stop(self.proc)
        for _ in range(50):  # Chromium's helpers may still be writing the profile for a moment
            try:
                self.profile.cleanup()
                return
            except OSError:
                time.sleep(0.1)
        self.profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
