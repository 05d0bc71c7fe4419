"""Headless Chromium driven over the DevTools protocol on a pipe (no websocket, no package).

``--remote-debugging-pipe`` makes Chromium read protocol commands from file descriptor 3
and write replies and events to descriptor 4, each message a JSON object ended by a NUL
byte. That is enough to load a page, see every request it makes (``Network``), every
console message and uncaught exception (``Runtime``, ``Log``), any dialog (``Page``), run
JavaScript in it and take screenshots::

    with Browser.launch(CHROMIUM, tmp_path / "profile") as browser:
        page = browser.open(report.as_uri())
        page.evaluate("document.title"), page.requests, page.console_errors
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    # Any name lookup fails: a request to another host could not succeed even if made.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--remote-debugging-pipe",
)


class BrowserError(RuntimeError):
    """Chromium did not answer, or answered a command with an error."""


@dataclass
class Page:
    """One tab attached with a flat session; events are recorded as they arrive."""

    browser: Browser
    session: str
    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    loaded: threading.Event = field(default_factory=threading.Event)

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (awaited when it is a promise)."""
        reply = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression!r} threw: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20.0) -> Any:
        """Poll ``expression`` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise BrowserError(f"timed out waiting for {expression!r}")

    def screenshot(self, out: Path, *, selector: str | None = None, height: int = 0) -> Path:
        """A PNG of the page (or of one element), at most ``height`` pixels tall if given."""
        target = json.dumps(selector or "body")
        box = self.evaluate(
            f"(() => {{ const r = document.querySelector({target}).getBoundingClientRect();"
            " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()"
        )
        x, y, width, tall = box
        if selector is None:
            x, y = 0, 0
        tall = min(tall, height or tall)
        clip = {"x": x, "y": y, "width": width, "height": tall, "scale": 1}
        shot = self.send(
            "Page.captureScreenshot",
            {"format": "png", "clip": clip, "captureBeyondViewport": True},
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(shot["data"]))
        return out

    def record(self, method: str, params: dict[str, Any]) -> None:
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            self.console_errors.append(_console_text(params))
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.console_errors.append(
                str(details.get("exception", {}).get("description") or details.get("text"))
            )
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            self.console_errors.append(f"{entry.get('source')}: {entry.get('text')}")
        elif method == "Page.javascriptDialogOpening":
            self.dialogs.append(params.get("message", ""))
            self.browser.post("Page.handleJavaScriptDialog", {"accept": False}, self.session)
        elif method == "Page.loadEventFired":
            self.loaded.set()


class Browser:
    """A Chromium process and its protocol pipe; use :meth:`launch` as a context manager."""

    def __init__(self, process: subprocess.Popen[bytes], commands: int, replies: int) -> None:
        self._process = process
        self._commands = commands
        self._replies = replies
        self._next_id = 0
        self._answers: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._pages: dict[str, Page] = {}
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @classmethod
    def launch(
        cls, chromium: str, profile: Path, *, width: int = 1360, height: int = 900
    ) -> Browser:
        """Start Chromium headless with a fresh profile folder and the protocol pipe."""
        command_r, command_w = os.pipe()
        reply_r, reply_w = os.pipe()

        def wire_pipe() -> None:  # in the child: its fd 3 reads commands, fd 4 writes replies
            high_r = fcntl.fcntl(command_r, fcntl.F_DUPFD, 10)
            high_w = fcntl.fcntl(reply_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        args = [chromium, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"]
        process = subprocess.Popen(
            [*args, "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire_pipe,  # the only way to place the pipe at fds 3 and 4
            close_fds=False,
        )
        os.close(command_r)
        os.close(reply_w)
        return cls(process, command_w, reply_r)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self, url: str, *, timeout: float = 30.0) -> Page:
        """A new tab with every event domain on, navigated to ``url``, loaded."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session)
        self._pages[session] = page
        for domain in ("Runtime", "Log", "Network", "Page"):
            page.send(f"{domain}.enable")
        page.send("Page.navigate", {"url": url})
        if not page.loaded.wait(timeout):
            raise BrowserError(f"{url} did not finish loading in {timeout:.0f} s")
        return page

    def post(self, method: str, params: dict[str, Any], session: str) -> None:
        """Send without waiting for the answer (safe from the reader thread)."""
        with self._lock:
            self._next_id += 1
            ident = self._next_id
        message = {"id": ident, "method": method, "params": params, "sessionId": session}
        os.write(self._commands, json.dumps(message).encode() + b"\0")

    def send(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None
    ) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            answer: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=1)
            self._answers[ident] = answer
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        try:
            reply = answer.get(timeout=60)
        except queue.Empty:
            raise BrowserError(f"no answer to {method} (is Chromium running?)") from None
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.send("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        os.close(self._commands)

    def _read(self) -> None:
        buffer = b""
        with os.fdopen(self._replies, "rb", buffering=0) as stream:
            while chunk := stream.read(65536):
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for raw in messages:
                    self._dispatch(json.loads(raw))

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message:
            answer = self._answers.pop(message["id"], None)
            if answer is not None:
                answer.put(message)
            return
        page = self._pages.get(message.get("sessionId", ""))
        if page is not None:
            page.record(message["method"], message.get("params", {}))


def _console_text(params: dict[str, Any]) -> str:
    parts = [str(a.get("value", a.get("description", ""))) for a in params.get("args", [])]
    return f"console.{params['type']}: {' '.join(parts)}"
