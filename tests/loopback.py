"""The tests' loopback HTTP servers (the fakes of Prolific and Wikidata, the redirector, the SVG
recorder, Prolific's completion page): what makes them answer at loopback speed. The fake model
endpoint (tests/evaluation/fake_openai.py) does the same by hand: it runs as a script too, on the
standard library alone.

- Nagle's algorithm off: http.server writes the headers and the body in two writes, and with
  Nagle on the body waits for the client's delayed ACK, about 40 ms a reply on loopback. The
  Prolific tests spent half their time there (27.8 s of wall time with it, 14.5 s without).
- A short poll: ``shutdown()`` waits until ``serve_forever`` next looks at its flag, half the poll
  interval on average, at the end of every test that starts a fake.
"""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

POLL_SECONDS = 0.005


class LoopbackHandler(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True


def serve_in_thread(httpd, *, name: str | None = None) -> threading.Thread:
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, name=name, daemon=True
    )
    thread.start()
    return thread


def stop_serving(httpd, thread: threading.Thread) -> None:
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def live_server_without_nagle() -> None:
    """Django's live server (the browser tests') writes headers and body apart too."""
    from django.core.servers.basehttp import WSGIRequestHandler

    WSGIRequestHandler.disable_nagle_algorithm = True
