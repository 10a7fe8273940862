"""A frozen version as a Hugging Face dataset: the folder ``datasets.load_dataset`` reads, its card,
its Croissant metadata (checked with mlcroissant), the CLI's errors and the researchers' zip download."""

import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import DatasetVersion, Theme, Trait
from annotation.selectors import round_agreement_stats
from annotation.services import adjudication_resolve, assignment_submit, round_lock, size_category, version_freeze

from .factories import alternating_traits, api_client_for, client_for, make_dataset, make_round, make_suggestions

pytestmark = pytest.mark.django_db

CORPUS = (
    "id,expression,explanation,kind,source,note\n"
    'v1,Ăn cháo đá bát,"Vô ơn, bạc nghĩa",idiom,Thành ngữ,chú thích\n'
    "v2,Ếch ngồi đáy giếng,Hiểu biết hẹp,idiom,Thành ngữ,\n"
    "v3,Tấc đất tấc vàng,Đất quý như vàng,proverb,Tục ngữ,\n"
    "v4,Xa mặt cách lòng,Xa nhau thì tình cảm phai nhạt,idiom,,\n"
    "v5,Có công mài sắt có ngày nên kim,Kiên trì thì thành công,proverb,Tục ngữ,\n"
)
# External id: (theme of A, theme of B); v3 is disputed and adjudicated.
THEMES = {
    "v1": ("criticism", "criticism"),
    "v2": ("criticism", "criticism"),
    "v3": ("work_nature", "love"),
    "v4": ("love", "love"),
    "v5": ("life_lessons", "life_lessons"),
}


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    # Loading a local folder needs no hub: any attempt to reach one must fail, not wait.
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def freeze(annotator_a, annotator_b, adjudicator, researcher, *, csv: str = CORPUS, name: str = "VIVID v1"):
    dataset = make_dataset(name=f"Corpus {name}", csv=csv)
    suggestions = make_suggestions(dataset, traits=alternating_traits, model_name="gpt-4.1")
    round_ = make_round(
        dataset,
        [annotator_a, annotator_b],
        name=f"Round {name}",
        suggestion_set=suggestions,
        hide_suggestions_fraction=0.4,
    )
    for item in round_.items.select_related("expression"):
        theme_a, theme_b = THEMES[item.expression.external_id]
        for assignment in item.assignments.select_related("annotator"):
            theme = theme_a if assignment.annotator == annotator_a else theme_b
            traits = alternating_traits(item.expression)
            # Where the suggestions are hidden, the annotator adds traits: one fewer than suggested.
            answer = (
                {"added_traits": traits[:1]}
                if item.suggestions_hidden
                else {"trait_decisions": dict.fromkeys(traits, "accept")}
            )
            assignment_submit(assignment=assignment, user=assignment.annotator, theme=theme, **answer)
    round_lock(round=round_)
    disputed = round_.items.get(expression__external_id="v3")
    adjudication_resolve(
        item=disputed,
        user=adjudicator,
        traits=["uncommon_vocabulary", "folk_knowledge"],
        theme="work_nature",
        revision=disputed.revision,
    )
    return version_freeze(round=round_, name=name, user=researcher)


@pytest.fixture
def version(annotator_a, annotator_b, adjudicator, researcher):
    return freeze(annotator_a, annotator_b, adjudicator, researcher)


def export(version, tmp_path) -> Path:
    out = tmp_path / "hf"
    call_command("export_version", version.name, "--format", "hf", "--out", str(out), stderr=io.StringIO())
    return out


def load(out: Path, tmp_path: Path):
    import datasets

    # A cache of the test's own: the shared one may hold an earlier run's folder of the same name.
    return datasets.load_dataset(str(out), cache_dir=str(tmp_path / "hf-cache"))


def front_matter(out: Path) -> dict:
    text = (out / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_it_writes_a_folder_that_load_dataset_reads_with_class_labels(version, tmp_path):
    import datasets

    loaded = load(export(version, tmp_path), tmp_path)
    assert list(loaded) == ["train"]
    train = loaded["train"]
    trait_codes = list(Trait.objects.order_by("number").values_list("code", flat=True))
    theme_codes = list(Theme.objects.order_by("number").values_list("code", flat=True))
    assert isinstance(train.features["theme"], datasets.ClassLabel)
    assert train.features["theme"].names == theme_codes
    traits_feature = train.features["traits"].feature
    assert isinstance(traits_feature, datasets.ClassLabel)
    assert traits_feature.names == trait_codes
    assert train.features["id"] == datasets.Value("string")
    items = list(version.items.order_by("id"))
    assert train.num_rows == len(items)
    for row, item in zip(train, items, strict=True):
        assert row["id"] == item.external_id
        assert row["expression"] == item.text
        assert row["explanation"] == item.explanation
        assert [traits_feature.int2str(label) for label in row["traits"]] == item.traits
        assert train.features["theme"].int2str(row["theme"]) == item.theme
        assert row["provenance"] == item.provenance
        assert json.loads(row["metadata"]) == item.metadata


def test_it_keeps_vietnamese_text_in_every_file(version, tmp_path):
    import mlcroissant

    out = export(version, tmp_path)
    texts = set(version.items.values_list("text", flat=True))
    assert "Ếch ngồi đáy giếng" in texts
    assert set(load(out, tmp_path)["train"]["expression"]) == texts
    read = mlcroissant.Dataset(jsonld=str(out / "croissant.json"))
    assert {record["train/expression"].decode("utf-8") for record in read.records("train")} == texts
    metadata = pq.read_table(out / "data" / "train-00000-of-00001.parquet").column("metadata").to_pylist()
    assert '{"note": "chú thích"}' in metadata


def test_it_writes_a_card_with_computed_front_matter_and_statistics(version, tmp_path):
    out = export(version, tmp_path)
    meta = front_matter(out)
    n = version.items.count()
    assert meta["license"] == "unknown"
    assert meta["language"] == ["vi"]
    assert "text-classification" in meta["task_categories"]
    assert meta["size_categories"] == [size_category(n)]
    assert meta["configs"] == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*.parquet"}]}
    ]
    assert meta["dataset_info"]["splits"][0]["num_examples"] == n
    features = {feature["name"]: feature for feature in meta["dataset_info"]["features"]}
    assert list(features["traits"]["list"]["class_label"]["names"].values()) == list(
        Trait.objects.order_by("number").values_list("code", flat=True)
    )
    card = (out / "README.md").read_text(encoding="utf-8")
    for heading in ("## Dataset Details", "## Uses", "## Dataset Structure", "## Dataset Creation"):
        assert heading in card
    assert "## Bias, Risks, and Limitations" in card and "## Citation" in card and "2608.03095" in card
    assert "No license was recorded" in card
    assert "gpt-4.1" in card
    # The agreement figures are the app's own, with their intervals.
    stats = round_agreement_stats(round=version.round)
    theme = stats["theme"]
    assert f"{theme['cohen_kappa']:.3f} [{theme['cohen_kappa_ci']['low']:.3f}" in card
    funnel = version.funnel
    assert f"| adjudicated | {funnel['adjudicated']} |" in card
    assert f"| in this version | {funnel['final']} |" in card
    assert "records no\ndemographic information" in card
    # The anchoring figures of the same statistics: suggestions were shown on every item here.
    anchoring = stats["anchoring"]["overall"]
    assert f"on {anchoring['match_rate_shown']:.0%} of the {anchoring['n_shown']} items where they saw them" in card
    assert "With 2 annotators per item" in card


def test_it_takes_the_license_from_the_setting(version, tmp_path, settings):
    settings.VIVID_DATASET_LICENSE = "cc-by-4.0"
    out = export(version, tmp_path)
    assert front_matter(out)["license"] == "cc-by-4.0"
    assert json.loads((out / "croissant.json").read_text())["license"] == "cc-by-4.0"
    assert "No license was recorded" not in (out / "README.md").read_text(encoding="utf-8")


def test_it_writes_croissant_that_mlcroissant_validates_and_reads(version, tmp_path):
    import mlcroissant

    out = export(version, tmp_path)
    jsonld = json.loads((out / "croissant.json").read_text(encoding="utf-8"))
    (parquet,) = jsonld["distribution"]
    assert parquet["encodingFormat"] == "application/x-parquet"
    assert parquet["sha256"] == hashlib.sha256((out / parquet["contentUrl"]).read_bytes()).hexdigest()
    read = mlcroissant.Dataset(jsonld=str(out / "croissant.json"))
    assert not read.metadata.ctx.issues.errors
    records = list(read.records("train"))
    assert len(records) == version.items.count()
    theme_codes = list(Theme.objects.order_by("number").values_list("code", flat=True))
    trait_codes = list(Trait.objects.order_by("number").values_list("code", flat=True))
    by_id = {item.external_id: item for item in version.items.all()}
    for record in records:
        item = by_id[record["train/id"].decode("utf-8")]
        assert theme_codes[record["train/theme"]] == item.theme
        assert [trait_codes[label] for label in record["train/traits"]] == item.traits
    labels = {rs["@id"]: rs for rs in jsonld["recordSet"]}
    assert [row["theme_labels/code"] for row in labels["theme_labels"]["data"]] == theme_codes


def test_it_validates_with_the_mlcroissant_command_line(version, tmp_path):
    import subprocess
    import sys

    out = export(version, tmp_path)
    script = Path(sys.executable).parent / "mlcroissant"
    result = subprocess.run(
        [str(script), "validate", "--jsonld", str(out / "croissant.json")],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_it_writes_the_researchers_named_splits(annotator_a, annotator_b, adjudicator, researcher, tmp_path):

    lines = CORPUS.splitlines()
    splits = ["train", "train", "test", "validation", "test"]
    csv = lines[0] + ",split\n" + "".join(f"{line},{split}\n" for line, split in zip(lines[1:], splits, strict=True))
    version = freeze(annotator_a, annotator_b, adjudicator, researcher, csv=csv, name="split")
    out = export(version, tmp_path)
    loaded = load(out, tmp_path)
    assert list(loaded) == ["train", "validation", "test"]
    expected = {
        name: sorted(i for i, s in zip(["v1", "v2", "v3", "v4", "v5"], splits, strict=True) if s == name)
        for name in loaded
    }
    assert {name: sorted(loaded[name]["id"]) for name in loaded} == expected
    assert "split" not in json.loads(loaded["test"][0]["metadata"])
    assert [c["split"] for c in front_matter(out)["configs"][0]["data_files"]] == ["train", "validation", "test"]
    assert {rs["@id"] for rs in json.loads((out / "croissant.json").read_text())["recordSet"]} >= {"train", "test"}


def test_it_names_the_item_without_a_split(annotator_a, annotator_b, adjudicator, researcher, tmp_path):
    lines = CORPUS.splitlines()
    csv = lines[0] + ",split\n" + "".join(f"{line},{'' if line.startswith('v4') else 'train'}\n" for line in lines[1:])
    version = freeze(annotator_a, annotator_b, adjudicator, researcher, csv=csv, name="partial")
    with pytest.raises(CommandError, match="item 'v4' has no 'split'"):
        export(version, tmp_path)
    assert not any((tmp_path / "hf" / "data").glob("*.parquet"))


def test_it_refuses_an_empty_version(version, tmp_path):
    empty = DatasetVersion.objects.create(name="empty", round=version.round, funnel={})
    with pytest.raises(CommandError, match="version 'empty' holds no items"):
        export(empty, tmp_path)


def test_it_refuses_a_name_that_is_not_a_frozen_version(db, tmp_path):
    with pytest.raises(CommandError, match="no version named 'draft'"):
        call_command("export_version", "draft", "--format", "hf", "--out", str(tmp_path / "x"))


def test_it_needs_an_out_folder_for_hf(version):
    with pytest.raises(CommandError, match="--out DIR"):
        call_command("export_version", version.name, "--format", "hf")


def test_it_refuses_a_folder_that_holds_files(version, tmp_path):
    (tmp_path / "old.txt").write_text("x")
    with pytest.raises(CommandError, match="not an empty folder"):
        call_command("export_version", version.name, "--format", "hf", "--out", str(tmp_path))


def zipped_names(body: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        return archive.namelist()


def test_it_downloads_the_folder_as_a_zip_for_researchers(version, researcher):
    page = client_for(researcher).get(reverse("annotation:version_detail", args=[version.pk]))
    url = reverse("annotation:version_export_hf", args=[version.pk])
    assert url in page.content.decode()
    response = client_for(researcher).get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "attachment" in response["Content-Disposition"]
    names = zipped_names(response.content)
    assert {"vivid-v1/README.md", "vivid-v1/croissant.json", "vivid-v1/data/train-00000-of-00001.parquet"} == set(names)


def test_it_refuses_the_zip_to_non_researchers(version, annotator_a, adjudicator):
    url = reverse("annotation:version_export_hf", args=[version.pk])
    for user in (annotator_a, adjudicator):
        assert client_for(user).get(url).status_code == 403
        page = client_for(user).get(reverse("annotation:version_detail", args=[version.pk]))
        assert url not in page.content.decode()


def test_it_answers_the_api_with_the_zip_for_researchers_only(version, researcher, adjudicator):
    url = reverse("api:version_export", args=[version.pk]) + "?format=hf"
    response = api_client_for(researcher).get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert "vivid-v1/croissant.json" in zipped_names(response.content)
    assert api_client_for(adjudicator).get(url).status_code == 403


def test_it_buckets_sizes_like_the_hub():
    assert [size_category(n) for n in (0, 999, 1000, 9999, 10_000, 2_000_000, 10**8)] == [
        "n<1K",
        "n<1K",
        "1K<n<10K",
        "1K<n<10K",
        "10K<n<100K",
        "1M<n<10M",
        "n>10M",
    ]
