"""Exit 0 when a local service answers: `service_up.py postgres|redis|http URL`, or holds a port:
`service_up.py port HOST:PORT` (something listens there, or the address cannot be bound)."""

import contextlib
import socket
import sys


def port_held(address: str) -> bool:
    host, _, port = address.rpartition(":")
    with contextlib.suppress(OSError), socket.create_connection((host, int(port)), timeout=2):
        return True
    # Bound as runserver binds (SO_REUSEADDR): a port left in TIME_WAIT by the last run is free.
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, int(port)))
        except OSError:
            return True
    return False


def main(kind: str, url: str) -> int:
    if kind == "port":
        return 0 if port_held(url) else 1
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
