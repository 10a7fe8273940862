"""The Prolific tests' fixtures: the loopback fake of Prolific's API (tests/prolific/fake_prolific.py)."""

from tests.prolific.fake_prolific import fake_prolific  # noqa: F401 - a fixture
