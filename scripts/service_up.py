"""Exit 0 when a local service answers: `service_up.py postgres|redis|http URL`."""

import contextlib
import sys


def main(kind: str, url: str) -> int:
    try:
        if kind == "postgres":
            import psycopg

            psycopg.connect(url, connect_timeout=3).close()
        elif kind == "redis":
            import redis

            redis.Redis.from_url(url, socket_connect_timeout=3).ping()
        elif kind == "http":
            import urllib.error
            import urllib.request

            # Any HTTP answer (a redirect to sign in, a 404) means the server is up.
            with contextlib.suppress(urllib.error.HTTPError):
                urllib.request.urlopen(url, timeout=3).close()
        else:
            print(f"unknown service {kind}", file=sys.stderr)
            return 2
    except Exception:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
