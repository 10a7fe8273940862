from django.db import migrations, models


def number_items(apps, schema_editor):
    """Number the items of every existing run 1..n in the order they were created (by id)."""
    RunItem = apps.get_model("evaluation", "RunItem")
    table = schema_editor.connection.ops.quote_name(RunItem._meta.db_table)
    # One statement on both engines (SQLite 3.33+ and PostgreSQL read UPDATE ... FROM).
    schema_editor.execute(
        f"UPDATE {table} SET number = ranked.n FROM "
        f"(SELECT id, ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY id) AS n FROM {table}) AS ranked "
        f"WHERE {table}.id = ranked.id"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0013_judge_reply_reading"),
    ]

    operations = [
        migrations.AddField(
            model_name="runitem",
            name="number",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.RunPython(number_items, migrations.RunPython.noop),
    ]
