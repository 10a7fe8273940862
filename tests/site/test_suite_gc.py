"""The suite's own collector settings (tests/conftest.py): what was alive after collection is set
aside, and full collections run a tenth as often as Python's default."""

import gc


def test_it_sets_aside_what_collection_loaded_and_collects_fully_a_tenth_as_often():
    assert gc.get_freeze_count() > 10_000
    assert gc.get_threshold()[2] == 100
    assert gc.isenabled()
