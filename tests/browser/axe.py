"""axe-core in the test browser: the WCAG 2.2 AA rules on the page shown, serious and critical findings fail.

axe-core comes from the npm registry, pinned in package-lock.json and installed into node_modules/
by `make browser-deps`; it is a test tool only and is never served.
"""

from pathlib import Path

from django.conf import settings

from tests.conftest import skip_or_fail

AXE_JS = Path(settings.BASE_DIR) / "node_modules" / "axe-core" / "axe.min.js"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
FAILING_IMPACTS = ("serious", "critical")


def require_axe() -> Path:
    """The path of axe.min.js; skips on a laptop without it and fails under REQUIRE_SERVICES=1."""
    if not AXE_JS.exists():
        skip_or_fail(f"{AXE_JS} is missing (make browser-deps, or npm ci)")
    return AXE_JS


def axe_violations(page) -> list[dict]:
    """axe's violations of the WCAG 2.x A/AA rules on the page shown, every impact."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        # A new document (a navigation or a document.write) has lost the copy injected before.
        page.add_script_tag(path=str(require_axe()))
        # Colours mid-transition (Pico eases links and buttons) would be measured as they pass by.
        page.add_style_tag(
            content="*, *::before, *::after { transition: none !important; animation: none !important; }"
        )
    return page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})"
        ".then(r => r.violations)",
        WCAG_TAGS,
    )


def readable(violations: list[dict]) -> str:
    lines = []
    for violation in violations:
        lines.append(f"[{violation['impact']}] {violation['id']}: {violation['help']} ({violation['helpUrl']})")
        for node in violation["nodes"][:5]:
            lines.append(f"    {' '.join(map(str, node['target']))}: {node['failureSummary'].splitlines()[-1].strip()}")
            lines.append(f"      {node['html'][:200]}")
        if len(violation["nodes"]) > 5:
            lines.append(f"    … and {len(violation['nodes']) - 5} more")
    return "\n".join(lines)


def serious_violations(page, where: str) -> str | None:
    """A readable report of the serious and critical violations on the page shown, None when there are none."""
    found = [v for v in axe_violations(page) if v["impact"] in FAILING_IMPACTS]
    if not found:
        return None
    return f"{where} ({page.url}):\n{readable(found)}"
