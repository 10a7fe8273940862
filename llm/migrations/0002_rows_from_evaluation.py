"""The model registry, the response cache and the concurrency and pacing rows move from the
evaluation app's tables to the llm app's (issue #24): every row is copied with its id, so the
runs and pipeline runs that point at a model keep pointing at it once their foreign keys are
moved over (artworks 0004, evaluation 0015, which then drop the old tables).

INSERT ... SELECT: the cache can hold hundreds of thousands of replies, which never pass
through Python. PostgreSQL's id sequences then start after the copied ids.
"""

from django.core.management.color import no_style
from django.db import migrations

MOVED = ("ModelConfig", "ResponseCache", "ModelSlot", "ModelThrottle")


def _copy(apps, schema_editor, source_app: str, target_app: str) -> None:
    connection = schema_editor.connection
    quote = connection.ops.quote_name
    targets = []
    with connection.cursor() as cursor:
        for name in MOVED:
            source = apps.get_model(source_app, name)._meta
            target = apps.get_model(target_app, name)
            columns = ", ".join(quote(field.column) for field in target._meta.concrete_fields)
            cursor.execute(
                f"INSERT INTO {quote(target._meta.db_table)} ({columns}) SELECT {columns} FROM {quote(source.db_table)}"
            )
            targets.append(target)
        for statement in connection.ops.sequence_reset_sql(no_style(), targets):
            cursor.execute(statement)


def rows_to_llm(apps, schema_editor):
    _copy(apps, schema_editor, "evaluation", "llm")


def rows_back_to_evaluation(apps, schema_editor):
    """Unapplied, evaluation 0015 recreates the old tables and copies the rows back itself, before
    the runs' foreign keys are moved back (SQLite checks every key as it rebuilds the table)."""
    _copy(apps, schema_editor, "llm", "evaluation")


def rows_emptied(apps, schema_editor):
    """Unapplied: evaluation 0015 has copied the rows back already; what stays here would be
    copied a second time when the move is applied again."""
    quote = schema_editor.connection.ops.quote_name
    with schema_editor.connection.cursor() as cursor:
        for name in reversed(MOVED):
            cursor.execute(f"DELETE FROM {quote(apps.get_model('llm', name)._meta.db_table)}")


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0001_initial"),
        ("evaluation", "0014_run_item_number"),
    ]

    operations = [migrations.RunPython(rows_to_llm, rows_emptied)]
