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
                assert "error" not in reply, reply["error"]
                return reply["result"]

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def wait_loaded(self, leaving: str | None = None, timeout_s: float = 30) -> None:
        """Until the page (another one than `leaving`, if given) has finished loading."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.evaluate("document.readyState") == "complete" and self.evaluate("location.href") != leaving:
                return
            time.sleep(0.05)
        raise AssertionError(f"the page did not load within {timeout_s} s")

    def click(self, selector: str) -> None:
        """Click the first element the selector finds, as a user does, and wait for the next page."""
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
        deadline = time.monotonic() + timeout_s
        while not self.evaluate(arrived):
            assert time.monotonic() < deadline, f"pressing {key!r} led nowhere within {timeout_s} s"
            time.sleep(0.05)

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
