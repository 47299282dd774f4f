"""A real redis-server of the tests' own, on a free 127.0.0.1 port (never the machine's)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

HOW_TO_GET_ONE = (
    "redis-server is not on PATH: install it (Debian: apt-get install redis-server) to run the "
    "RedisStorage tests"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def redis_server(directory: Path, port: int = 0, persist: bool = False) -> Iterator[str]:
    """Start redis-server on *port* (a free one by default); yield its URL. With *persist*,
    its data is kept in *directory* across a restart on the same port and directory."""
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail(HOW_TO_GET_ONE)
        pytest.skip(HOW_TO_GET_ONE)
    port = port or free_port()
    options = ["--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    options += ["--appendonly", "yes" if persist else "no", "--appendfsync", "always"]
    process = subprocess.Popen(
        [binary, *options, "--dir", str(directory)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(10)
