"""The reset between transactional tests, made cheaper for the suite (installed by tests/conftest.py).

After a transactional test Django empties every table (``flush``) and, for the next test with
serialized_rollback, writes back the rows the data migrations made (roles, taxonomy, prompts, content
types, permissions: about 370 rows). Measured on PostgreSQL, the flush was a TRUNCATE of about 80
tables, which makes new files for each: 0.35 s of the server's time a test; and the rows came back by
two statements each (an UPDATE that finds nothing, then an INSERT) from JSON parsed again: 0.18 s of
CPU. Here the flush deletes the rows, and the rows come back by one INSERT per table (in batches the
database accepts). What the next test sees is the same: the same rows with the same keys, the
sequences going on (a transactional test's flush resets none), the save signals sent as a raw save
sends them (per-process caches of the taxonomy listen to them). A table not emptied since the
migrations wrote it (no transactional test before this one) gets Django's own row-by-row restore.
"""

from django.core import serializers
from django.db import transaction
from django.db.backends.base.creation import BaseDatabaseCreation
from django.db.backends.postgresql.operations import DatabaseOperations as PostgreSQLOperations
from django.db.models import signals

# Django's own flush on PostgreSQL, kept for the flushes this module does not take over.
_truncate = PostgreSQLOperations.sql_flush


def _sql_flush_by_delete(self, style, tables, *, reset_sequences=False, allow_cascade=False):
    # Django creates PostgreSQL's foreign keys DEFERRABLE INITIALLY DEFERRED, and the flush runs in one
    # transaction: they are checked at its commit, once every table is empty, whatever the order.
    if reset_sequences or allow_cascade:
        # A test that asks for its sequences back, or one with available_apps (whose flush leaves other
        # apps' tables that may point at these): Django's TRUNCATE, which does both.
        return _truncate(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
    return [f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};" for table in tables]


def _restore_in_bulk(self, data):
    alias = self.connection.alias
    by_model: dict[type, list] = {}
    # Fresh instances each time: an instance handed to a test's code (a signal's receiver) is never
    # written back a second time.
    for deserialized in serializers.deserialize("json", data, using=alias):
        by_model.setdefault(type(deserialized.object), []).append(deserialized)
    with transaction.atomic(using=alias), self.connection.constraint_checks_disabled():
        for model, rows in by_model.items():
            if model._base_manager.using(alias).exists():
                # Not emptied since the migrations wrote it: Django's own update-or-insert of each row.
                for row in rows:
                    row.save()
                continue
            objects = [row.object for row in rows]
            for instance in objects:
                signals.pre_save.send(sender=model, instance=instance, raw=True, using=alias, update_fields=None)
            fields = model._meta.local_concrete_fields
            batch = max(1, self.connection.ops.bulk_batch_size(fields, objects))
            for start in range(0, len(objects), batch):
                # raw: the values as stored, as a raw save writes them (no auto_now, no defaults).
                model._base_manager.using(alias)._insert(objects[start : start + batch], fields=fields, raw=True)
            for row in rows:
                row.object._state.adding, row.object._state.db = False, alias
                for accessor, related in (row.m2m_data or {}).items():
                    if related:
                        getattr(row.object, accessor).set(related)
                signals.post_save.send(
                    sender=model, instance=row.object, created=True, update_fields=None, raw=True, using=alias
                )
        self.connection.check_constraints(table_names=[model._meta.db_table for model in by_model])


def install() -> None:
    PostgreSQLOperations.sql_flush = _sql_flush_by_delete
    BaseDatabaseCreation.deserialize_db_from_string = _restore_in_bulk
