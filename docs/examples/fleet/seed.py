"""Give the fleet its start URLs: ``python seed.py REDIS_URL URL [URL ...]``."""

import sys

import redis

redis_url, *urls = sys.argv[1:]
redis.Redis.from_url(redis_url).lpush("pages:start_urls", *urls)
