"""A redis-server of the benchmark's own, on a free 127.0.0.1 port, checked to be ours.

The tests' helper (tests/redisserver.py) starts it. A port found free can be taken by another
process before redis-server binds it; a Redis already listening there would then answer in its
place, and a benchmark that empties its database would empty someone else's. So the server
is asked for its working directory, which only ours has.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def missing() -> str | None:
    """Why no Redis benchmark can run here, or None. As the tests skip, but a CI run fails."""
    if shutil.which("redis-server") is not None:
        return None
    from tests.redisserver import HOW_TO_GET_ONE  # noqa: PLC0415

    if os.environ.get("CI") == "true":
        sys.exit(HOW_TO_GET_ONE)
    return HOW_TO_GET_ONE


@contextmanager
def own_redis() -> Iterator[str]:
    """Yield the URL of a fresh redis-server; exit with a message when there is none."""
    import redis  # noqa: PLC0415 (an optional dependency: only the Redis benchmarks load it)

    from tests.redisserver import redis_server  # noqa: PLC0415

    reason = missing()
    if reason is not None:
        sys.exit(reason)
    with (
        tempfile.TemporaryDirectory(prefix="bench-redis-") as directory,
        redis_server(Path(directory)) as url,
    ):
        client = redis.Redis.from_url(url)
        try:
            answered = client.config_get("dir").get("dir")
        finally:
            client.close()
        if Path(str(answered)).resolve() != Path(directory).resolve():
            sys.exit(f"the Redis at {url} is not the one this benchmark started")
        yield url
