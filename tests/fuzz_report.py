"""pytest plugin of `make fuzz`: what became of the files each importer property test tried.

The API fuzz test prints its own summary per persona; this adds the importers'.
"""

from tests.importing import OUTCOMES

KINDS = ("imported", "refused", "partial write")


def pytest_terminal_summary(terminalreporter):
    if not OUTCOMES:
        return
    terminalreporter.section("importer property tests")
    for test in sorted({test for test, _ in OUTCOMES}):
        counts = [OUTCOMES[test, kind] for kind in KINDS]
        terminalreporter.write_line(
            f"{test}: {sum(counts)} files, {counts[0]} imported, {counts[1]} refused, {counts[2]} partial writes"
        )
