"""Exit 0 when a local service answers: `service_up.py postgres URL` or `service_up.py redis URL`."""

import sys


def main(kind: str, url: str) -> int:
    try:
        if kind == "postgres":
            import psycopg

            psycopg.connect(url, connect_timeout=3).close()
        elif kind == "redis":
            import redis

            redis.Redis.from_url(url, socket_connect_timeout=3).ping()
        else:
            print(f"unknown service {kind}", file=sys.stderr)
            return 2
    except Exception:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
