"""The suite's reset between transactional tests (tests/database_reset.py) leaves what Django's leaves:
every table empty after the flush, then the migrations' rows back with the same keys and values."""

import json
import re
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.db import connection
from django.db.models.signals import post_save

from annotation.models import Theme, Trait
from evaluation.models import PromptTemplate

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


# The snapshot keeps times to the millisecond, and writes ".000" for a time with under a millisecond
# (about one row in a thousand): read back, that time has no fraction, and is written without it.
_WHOLE_SECOND = re.compile(r"(T\d\d:\d\d:\d\d)\.000(?=Z|[+-]\d\d:\d\d)")


def rows(serialized: str) -> list:
    return sorted(_WHOLE_SECOND.sub(r"\1", json.dumps(row, sort_keys=True)) for row in json.loads(serialized))


def test_it_empties_every_table_and_writes_back_the_migrations_rows():
    snapshot = connection._test_serialized_contents
    Trait.objects.filter(code="pragmatic").update(name_en="renamed by a test")
    Group.objects.create(name="made by a test")

    # As a transactional test's end flushes: the sequences go on (a reset would hand out the restored ids).
    call_command("flush", verbosity=0, interactive=False, reset_sequences=False, inhibit_post_migrate=True)
    assert not Trait.objects.exists() and not Theme.objects.exists()
    assert not Group.objects.exists() and not Permission.objects.exists()

    saved = []
    post_save.connect(lambda sender, raw, **kwargs: saved.append(raw), weak=False, dispatch_uid="reset-test")
    try:
        connection.creation.deserialize_db_from_string(snapshot)
    finally:
        post_save.disconnect(dispatch_uid="reset-test")
    assert rows(connection.creation.serialize_db_to_string()) == rows(snapshot)
    assert saved == [True] * len(json.loads(snapshot))
    # Twice in a row (a table not emptied in between): Django's update-or-insert, the same rows.
    connection.creation.deserialize_db_from_string(snapshot)
    assert rows(connection.creation.serialize_db_to_string()) == rows(snapshot)


def test_it_writes_back_a_time_stored_with_under_a_millisecond():
    # Seen once in a suite run: a built-in prompt created at hh:mm:ss.000xxx is written to the snapshot
    # as ".000", and read back as a whole second.
    prompt = PromptTemplate.objects.filter(builtin=True).first()
    PromptTemplate.objects.filter(pk=prompt.pk).update(created_at=datetime(2026, 12, 7, 9, 19, 42, 500, tzinfo=UTC))
    snapshot = connection.creation.serialize_db_to_string()
    assert '"2026-12-07T09:19:42.000Z"' in snapshot

    call_command("flush", verbosity=0, interactive=False, reset_sequences=False, inhibit_post_migrate=True)
    connection.creation.deserialize_db_from_string(snapshot)
    assert PromptTemplate.objects.get(pk=prompt.pk).created_at == datetime(2026, 12, 7, 9, 19, 42, tzinfo=UTC)
    assert rows(connection.creation.serialize_db_to_string()) == rows(snapshot)
