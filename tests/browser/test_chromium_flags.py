"""The flags the browser tests start Chromium with: Playwright's disabled features kept, and the
address-bar popups a headless run never shows not rendered for every new window."""

import os

import pytest

from tests.browser.conftest import UNSHOWN_FEATURES

pytestmark = pytest.mark.browser


def _descendants(pid: int) -> list[int]:
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _browser_command_lines() -> list[list[str]]:
    """The command line of every Chromium browser process this test process started (not its
    renderers, GPU or utility processes, which carry --type)."""
    lines = []
    for pid in _descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                args = cmdline.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        is_browser = args[0].endswith("/chromium") and "--remote-debugging-pipe" in args
        if is_browser and not any(arg.startswith("--type=") for arg in args):
            lines.append(args)
    return lines


def test_it_keeps_every_feature_playwright_disables(chromium):
    lines = _browser_command_lines()
    assert lines, "no Chromium browser process under this test process"
    for args in lines:
        switches = [arg.split("=", 1)[1].split(",") for arg in args if arg.startswith("--disable-features=")]
        # Playwright's own switch comes first; Chromium reads only the last one.
        assert len(switches) >= 2, switches
        last = set(switches[-1])
        for earlier in switches[:-1]:
            assert set(earlier) <= last, f"Playwright also disables {sorted(set(earlier) - last)}"
        assert set(UNSHOWN_FEATURES) <= last


def test_it_renders_no_address_bar_popup_for_a_new_window(chromium):
    context = chromium.browser.new_context()
    try:
        context.new_page().set_content("<p>a page</p>")
        session = chromium.browser.new_browser_cdp_session()
        urls = [target["url"] for target in session.send("Target.getTargets")["targetInfos"]]
        session.detach()
    finally:
        context.close()
    assert "about:blank" in urls
    assert [url for url in urls if url.startswith("chrome://omnibox-popup")] == []
