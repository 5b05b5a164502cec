"""A real headless Chromium, driven over the DevTools protocol on a pipe, to see a page as a user does.

Chromium (Debian's ``chromium`` package; ``.ci/run`` installs it) runs with
``--remote-debugging-pipe``: commands go in on file descriptor 3 and answers come out on 4, one
JSON message each, ended by a NUL byte. No port and no extra Python package. A page is opened at
a fixed window size, JavaScript runs, and :meth:`Page.first_screen` reads the words a user sees
before any click or scroll: those inside the window and not hidden (clipped by a scroll box,
covered, or drawn nowhere).

    with Chromium() as browser:
        page = browser.open("file:///path/report.html", ready="!!document.querySelector('h1')")
        print(page.first_screen())
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

WIDTH, HEIGHT = 1280, 800
"""The first screen: a laptop's browser window."""


def executable() -> str | None:
    """Debian's ``chromium`` (``chromium-browser`` elsewhere), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def install() -> subprocess.CompletedProcess | None:
    """``apt-get install chromium`` (as ``.ci/run`` does) where it is missing and apt-get can run
    (as root); None where it cannot."""
    if executable() is not None or shutil.which("apt-get") is None or os.geteuid() != 0:
        return None
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = "apt-get update -qq && apt-get install -y -qq chromium"
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=900, env=env, check=False)


# The words on screen: each word of each text node whose boxes (one a line it spans) lie inside
# the window and are what the window shows there (not clipped by a scroll box, not covered); one
# line per text node.
FIRST_SCREEN = """(() => {
  const lines = [], range = document.createRange();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest('script, style, noscript, template')) continue;
    const words = [];
    for (const m of node.data.matchAll(/\\S+/g)) {
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const boxes = Array.from(range.getClientRects()).filter(r => r.width > 0 && r.height > 0);
      const shown = r => {  // inside the window, and what the window shows at the box's centre
        if (r.left < 0 || r.top < 0 || r.right > innerWidth || r.bottom > innerHeight) return false;
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return hit !== null && (hit === parent || parent.contains(hit));
      };
      if (boxes.length && boxes.every(shown)) words.push(m[0]);
    }
    if (words.length) lines.push(words.join(' '));
  }
  return lines;
})()"""


def _above_4(fd: int) -> int:
    """The same pipe end on a descriptor above 4 (the shell below moves it onto 3 or 4)."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Chromium:
    """One headless Chromium process with a throwaway profile; a context manager."""

    def __init__(self, width: int = WIDTH, height: int = HEIGHT, timeout: float = 60):
        path = executable()
        if path is None:
            raise FileNotFoundError("chromium is not installed (Debian: apt-get install chromium)")
        self.width, self.height, self.timeout = width, height, timeout
        self._profile = tempfile.TemporaryDirectory(prefix="voirdire-chromium-")
        to_browser, self._send = os.pipe()  # Chromium reads commands from fd 3
        self._receive, from_browser = os.pipe()  # and writes answers to fd 4
        to_browser, from_browser = (_above_4(fd) for fd in (to_browser, from_browser))
        args = [
            path,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-scrollbars",
            "--mute-audio",
            f"--window-size={width},{height}",
            f"--user-data-dir={self._profile.name}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self._log = tempfile.TemporaryFile()
        # a shell puts the two pipe ends on fds 3 and 4, where Chromium looks for them
        redirect = f'exec "$0" "$@" 3<&{to_browser} 4>&{from_browser} {to_browser}<&- {from_browser}>&-'
        self.process = subprocess.Popen(
            ["bash", "-c", redirect, *args],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            pass_fds=(to_browser, from_browser),
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer, self._next_id = b"", 0

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.call("Browser.close", timeout=10)
                self.process.wait(timeout=10)
            except (RuntimeError, OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(timeout=10)
        for fd in (self._send, self._receive):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()
        self._profile.cleanup()

    def log(self) -> str:
        """What Chromium wrote on stdout and stderr (for a failure's message)."""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-4000:]

    def call(self, method: str, session: str | None = None, timeout: float | None = None, **params) -> dict:
        """Send one DevTools command and return its result (events in between are dropped)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._send, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            while b"\0" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._receive], [], [], left)[0]:
                    raise RuntimeError(f"Chromium did not answer {method} in time:\n{self.log()}")
                chunk = os.read(self._receive, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"Chromium closed the pipe during {method}:\n{self.log()}")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def open(self, url: str, ready: str, timeout: float | None = None) -> Page:
        """A new tab at the window's size showing ``url``, once the JavaScript expression ``ready``
        is true (the page's own scripts have drawn what is to be read) and its fonts are loaded."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=self.width,
            height=self.height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Page.enable", session)
        self.call("Page.navigate", session, url=url)
        deadline = time.monotonic() + (timeout or self.timeout)
        while not page.evaluate(f"document.readyState === 'complete' && Boolean({ready})"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url}: not ready ({ready}) after {timeout or self.timeout} s:\n{self.log()}")
            time.sleep(0.2)
        page.evaluate("document.fonts.ready.then(() => new Promise(r => requestAnimationFrame(() => r(true))))")
        return page


class Page:
    def __init__(self, browser: Chromium, session: str):
        self.browser, self.session = browser, session

    def evaluate(self, expression: str):
        """The value of a JavaScript expression (a promise is awaited)."""
        result = self.browser.call(
            "Runtime.evaluate", self.session, expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"JavaScript failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def first_screen(self) -> list[str]:
        """The text a user sees without clicking or scrolling: one line per text node, its words
        that are on screen."""
        return self.evaluate(FIRST_SCREEN)

    def screenshot(self, path: Path) -> Path:
        """What the window shows, as a PNG."""
        import base64

        data = self.browser.call("Page.captureScreenshot", self.session, format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path
