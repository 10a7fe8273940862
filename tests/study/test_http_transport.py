"""The load benchmark's HTTP transport, against a small loopback server: the cookies a browser would
send (by path, deleted when the server says so), the CSRF header and the URL-encoded body of a
POST, and a kept-alive connection the server closed while the transport held it."""

import http.client
from urllib.parse import parse_qs

import pytest

from study.services.simulation import HttpTransport, parse_form
from tests.loopback import LoopbackHandler, LoopbackServer, serve_in_thread, stop_serving


class Server:
    """Answers by path; records each request it read (method, path, Cookie, X-CSRFToken, body)."""

    def __init__(self, *, drop_after_response: bool = False, drop_before_response: bool = False):
        self.seen: list[dict] = []
        server = self

        class Handler(LoopbackHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as gunicorn's gthread workers

            def do_GET(self):
                self.handle_request(b"")

            def do_POST(self):
                self.handle_request(self.rfile.read(int(self.headers["Content-Length"])))

            def handle_request(self, body: bytes):
                server.seen.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "cookie": self.headers.get("Cookie", ""),
                        "csrf": self.headers.get("X-CSRFToken", ""),
                        "body": body.decode(),
                    }
                )
                if drop_before_response:
                    self.close_connection = True
                    return
                status, headers = 200, []
                if self.path.startswith("/s/a/enter"):
                    status = 302
                    headers = [
                        ("Location", "/s/a/run/"),
                        ("Set-Cookie", "csrftoken=tok1; Path=/; SameSite=Lax"),
                        ("Set-Cookie", "vivid_participant_a=p7; HttpOnly; Path=/s/a/; SameSite=Lax"),
                    ]
                elif self.path == "/s/a/narrow":
                    headers = [("Set-Cookie", "narrow=1; Path=/s/a")]
                elif self.path == "/s/a/leave":
                    headers = [
                        (
                            "Set-Cookie",
                            'vivid_participant_a=""; expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/s/a/',
                        )
                    ]
                payload = "<p>été</p>".encode()
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                # Closed without saying so, as a server whose keep-alive ran out between two requests.
                self.close_connection = drop_after_response

        self.httpd = LoopbackServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        self.thread = serve_in_thread(self.httpd)
        return self

    def __exit__(self, *exc):
        stop_serving(self.httpd, self.thread)


def test_it_sends_each_cookie_under_its_path_until_the_server_deletes_it():
    with Server() as server:
        transport = HttpTransport()
        entered = transport.get(f"{server.base}/s/a/enter?PROLIFIC_PID=x")
        page = transport.get(f"{server.base}/s/a/run/")
        transport.get(f"{server.base}/elsewhere/")
        transport.get(f"{server.base}/s/a/leave")
        transport.get(f"{server.base}/s/a/run/")

    assert (entered.status, entered.location) == (302, "/s/a/run/")
    assert (page.status, page.html) == (200, "<p>été</p>")
    # The cookie of the longer path first, as RFC 6265 (5.4) has a browser send them.
    assert [request["cookie"] for request in server.seen] == [
        "",
        "vivid_participant_a=p7; csrftoken=tok1",
        "csrftoken=tok1",
        "vivid_participant_a=p7; csrftoken=tok1",
        "csrftoken=tok1",
    ]


def test_it_keeps_a_cookie_of_a_path_without_its_slash_from_a_longer_name():
    with Server() as server:
        transport = HttpTransport()
        transport.get(f"{server.base}/s/a/narrow")
        for path in ("/s/a", "/s/a/run/", "/s/ab/", "/s/"):
            transport.get(f"{server.base}{path}")

    assert [request["cookie"] for request in server.seen[1:]] == ["narrow=1", "narrow=1", "", ""]


def test_it_posts_the_form_url_encoded_with_the_csrf_cookie_in_its_header():
    with Server() as server:
        transport = HttpTransport()
        transport.get(f"{server.base}/s/a/enter")
        page = transport.post(f"{server.base}/s/a/run/", {"step": "1:symbols", "symbols": ["a b", "c&d"]})

    assert page.status == 200
    posted = server.seen[-1]
    assert (posted["method"], posted["csrf"]) == ("POST", "tok1")
    assert parse_qs(posted["body"]) == {"step": ["1:symbols"], "symbols": ["a b", "c&d"]}


def test_it_sends_a_request_again_once_when_the_server_closed_the_kept_alive_connection():
    with Server(drop_after_response=True) as server:
        transport = HttpTransport()
        pages = [transport.post(f"{server.base}/s/a/run/", {"step": str(n)}) for n in range(3)]

    assert [page.status for page in pages] == [200, 200, 200]
    # Each page reached the server once: the closed connection was noticed before anything was read.
    assert [request["body"] for request in server.seen] == ["step=0", "step=1", "step=2"]


def test_it_gives_up_after_the_second_connection_closes_unanswered():
    with Server(drop_before_response=True) as server:
        transport = HttpTransport()
        with pytest.raises(http.client.RemoteDisconnected):
            transport.post(f"{server.base}/s/a/run/", {"step": "1"})

    assert len(server.seen) == 2


def test_it_reads_the_step_form_after_another_form_and_text_that_names_it():
    html = (
        '<form action="/language"><input type="radio" name="language" value="en"></form>'
        "<p>data-step-form &lt;form data-step-form&gt;</p>"
        '<form method="post" data-step-form data-draft-key="k">'
        '<input type="hidden" name="step" value="2:qa"><input type="radio" name="q1-choice" value="a">'
        '<input type="radio" name="q1-choice" value="b"><button name="go" value="1">Next</button></form>'
        '<form><input type="radio" name="after" value="x"></form>'
    )

    spec = parse_form(html)

    assert (spec.step, spec.radios, spec.buttons) == ("2:qa", {"q1-choice": ["a", "b"]}, [("go", "1")])


def test_it_reads_an_unclosed_step_form_to_the_end_and_finds_none_where_there_is_none():
    unclosed = '<main><form data-step-form><input type="hidden" name="step" value="consent"><input type="checkbox" name="c" value="1">'

    assert (parse_form(unclosed).step, parse_form(unclosed).checkboxes) == ("consent", {"c": ["1"]})
    assert parse_form('<form method="post"><input type="hidden" name="step" value="x"></form>') is None
