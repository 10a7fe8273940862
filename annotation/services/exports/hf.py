"""A frozen version as a Hugging Face dataset folder: Parquet per split, a dataset card, Croissant.

The folder loads with ``datasets.load_dataset(folder)`` unchanged: the card's ``configs`` name the
Parquet files of each split, and both the card's ``dataset_info`` and each file's ``huggingface``
schema metadata carry the features, so the traits come back as a list of class labels (the
taxonomy's order) and the theme as a class label. ``croissant.json`` describes the same files for
``mlcroissant``. Nothing here talks to a hub: publishing the folder is the researcher's step.

pyarrow is imported where a file is written: at the top it cost every process's start (each
command, each worker) 0.05 s of CPU for the one command that uses it.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from django.conf import settings
from django.utils.text import slugify

from ...models import DatasetVersion
from ...selectors.corpus import theme_list, trait_list
from ...selectors.stats import round_agreement_stats
from ...selectors.workflow import version_funnel
from .tables import EXPORT_FORMATS, ExportError, version_rows

if TYPE_CHECKING:
    import pyarrow as pa

HF_FORMAT = "hf"
VERSION_EXPORT_FORMATS = (*EXPORT_FORMATS, HF_FORMAT)
# An item's metadata key naming its split (a column of the imported corpus); without it, one split.
SPLIT_KEY = "split"
DEFAULT_SPLIT = "train"
SPLIT_ORDER = ("train", "validation", "test")
# The rule ``datasets`` applies to a split's name.
SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")
TEXT_COLUMNS = ("id", "expression", "explanation", "kind", "source")
# The Hub's size buckets (the card's ``size_categories``), by upper bound.
SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
)
PAPER_URL = "https://arxiv.org/abs/2608.03095"
CITATION = """@article{do2026vivid,
  title   = {{VIVID}: A Culturally Grounded Benchmark Exposing the Figurative Language Gap in Vietnamese {NLP}},
  author  = {Do, Tu Tran and Nguyen, Nhat Ngoc and Tran, Khanh-Tung and Nguyen, Hoang D. and
             Tu, Minh Phuong and Dang, Long Hoang},
  journal = {arXiv preprint arXiv:2608.03095},
  year    = {2026},
  url     = {https://arxiv.org/abs/2608.03095}
}"""
CROISSANT_CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


@dataclass
class HfExport:
    path: Path
    splits: dict[str, int] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return sum(self.splits.values())


def size_category(n: int) -> str:
    for bound, name in SIZE_CATEGORIES:
        if n < bound:
            return name
    return "n>10M"


def version_hf_write(*, version: DatasetVersion, out: Path) -> HfExport:
    """Write ``version`` as a Hugging Face dataset folder in ``out`` (created; must be empty).

    Raises ExportError for a version without items, a folder that holds files, or items whose
    ``split`` is missing on some of them or not a valid split name.
    """
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"{out} exists and is not an empty folder: choose a new one")
    rows = version_rows(version=version)
    if not rows:
        raise ExportError(f"version '{version.name}' holds no items: there is nothing to publish")
    traits = list(trait_list())
    themes = list(theme_list())
    splits = _splits(rows)
    features = _features([t.code for t in traits], [t.code for t in themes])
    schema = _schema(features)
    import pyarrow.parquet as pq

    (out / "data").mkdir(parents=True, exist_ok=True)
    files = {}
    for name, split_rows in splits.items():
        path = out / "data" / f"{name}-00000-of-00001.parquet"
        pq.write_table(_table(split_rows, schema, traits, themes), path)
        files[name] = path
    stats = round_agreement_stats(round=version.round)
    card = _card(version, splits, files, features, traits, themes, stats)
    (out / "README.md").write_text(card, encoding="utf-8")
    croissant = _croissant(version, files, out, traits, themes)
    (out / "croissant.json").write_text(json.dumps(croissant, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return HfExport(path=out, splits={name: len(split_rows) for name, split_rows in splits.items()})


def version_hf_zip(*, version: DatasetVersion) -> tuple[bytes, str]:
    """The folder of ``version_hf_write`` as a zip (its files under one top folder), and the zip's name."""
    folder = slugify(version.name, allow_unicode=True) or f"version-{version.pk}"
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / folder
        version_hf_write(version=version, out=root)
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(root.rglob("*")):
                if path.is_file():
                    archive.write(path, f"{folder}/{path.relative_to(root).as_posix()}")
    return buffer.getvalue(), f"{folder}-hf.zip"


def _split_name(row: dict) -> str:
    return str(row["metadata"].get(SPLIT_KEY) or "").strip()


def _splits(rows: list[dict]) -> dict[str, list[dict]]:
    unnamed = [row for row in rows if not _split_name(row)]
    if len(unnamed) == len(rows):
        return {DEFAULT_SPLIT: rows}
    if unnamed:
        missing = unnamed[0]
        raise ExportError(
            f"item '{missing['id'] or missing['expression']}' has no '{SPLIT_KEY}' while others have one: "
            "give every item a split, or none"
        )
    splits: dict[str, list[dict]] = {}
    for row in rows:
        name = _split_name(row)
        if not SPLIT_NAME.match(name):
            raise ExportError(
                f"item '{row['id'] or row['expression']}': split '{name}' is not a valid split name "
                "(letters, digits and underscores, parts joined by dots)"
            )
        splits.setdefault(name, []).append(row)
    clash = set(splits) & {"trait_labels", "theme_labels"}
    if clash:
        raise ExportError(f"split '{clash.pop()}' has the name of a label set in croissant.json: rename it")
    known = [name for name in SPLIT_ORDER if name in splits]
    return {name: splits[name] for name in known + sorted(set(splits) - set(known))}


def _features(trait_codes: list[str], theme_codes: list[str]) -> dict:
    """The features as ``datasets.Features.to_dict()`` writes them (into the Parquet schema metadata)."""
    text = {"dtype": "string", "_type": "Value"}
    return {
        **{name: text for name in TEXT_COLUMNS},
        "traits": {"feature": {"names": trait_codes, "_type": "ClassLabel"}, "_type": "List"},
        "theme": {"names": theme_codes, "_type": "ClassLabel"},
        "provenance": text,
        "metadata": text,
    }


def _schema(features: dict) -> pa.Schema:
    import pyarrow as pa

    columns = [(name, pa.string()) for name in TEXT_COLUMNS]
    columns += [("traits", pa.list_(pa.int64())), ("theme", pa.int64()), ("provenance", pa.string())]
    columns.append(("metadata", pa.string()))
    return pa.schema(columns, metadata={"huggingface": json.dumps({"info": {"features": features}})})


def _table(rows: list[dict], schema: pa.Schema, traits, themes) -> pa.Table:
    import pyarrow as pa

    trait_index = {t.code: i for i, t in enumerate(traits)}
    theme_index = {t.code: i for i, t in enumerate(themes)}
    columns = {name: [row[name] for row in rows] for name in TEXT_COLUMNS}
    columns["traits"] = [sorted(trait_index[code] for code in row["traits"]) for row in rows]
    columns["theme"] = [theme_index[row["theme"]] for row in rows]
    columns["provenance"] = [row["provenance"] for row in rows]
    # The corpus's extra columns, as JSON text: they differ from corpus to corpus.
    columns["metadata"] = [
        json.dumps({k: v for k, v in sorted(row["metadata"].items()) if k != SPLIT_KEY}, ensure_ascii=False)
        for row in rows
    ]
    return pa.table(columns, schema=schema)


def _yaml_features(features: dict) -> list[dict]:
    """The card's ``dataset_info.features`` (what ``datasets`` writes for the same features)."""
    listed = []
    for name, feature in features.items():
        if feature["_type"] == "Value":
            listed.append({"name": name, "dtype": feature["dtype"]})
        elif feature["_type"] == "ClassLabel":
            names = {str(i): label for i, label in enumerate(feature["names"])}
            listed.append({"name": name, "dtype": {"class_label": {"names": names}}})
        else:
            names = {str(i): label for i, label in enumerate(feature["feature"]["names"])}
            listed.append({"name": name, "list": {"class_label": {"names": names}}})
    return listed


def _license() -> str:
    return settings.VIVID_DATASET_LICENSE.strip() or "unknown"


def _card(version, splits, files, features, traits, themes, stats) -> str:
    n = sum(len(rows) for rows in splits.values())
    license_ = _license()
    sizes = {name: path.stat().st_size for name, path in files.items()}
    front = {
        "license": license_,
        "language": ["vi"],
        "task_categories": ["text-classification", "text-generation"],
        "task_ids": ["multi-label-classification", "multi-class-classification"],
        "size_categories": [size_category(n)],
        "pretty_name": f"VIVID: {version.name}",
        "tags": ["idioms", "proverbs", "figurative-language", "vietnamese"],
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": name, "path": f"data/{name}-*.parquet"} for name in splits],
            }
        ],
        "dataset_info": {
            "features": _yaml_features(features),
            "splits": [
                {"name": name, "num_bytes": sizes[name], "num_examples": len(rows)} for name, rows in splits.items()
            ],
            "download_size": sum(sizes.values()),
            "dataset_size": sum(sizes.values()),
        },
    }
    round_ = version.round
    funnel = version_funnel(version=version)
    provenance = {
        p: sum(1 for rows in splits.values() for r in rows if r["provenance"] == p)
        for p in ("unanimous", "adjudicated")
    }
    suggestion_set = round_.suggestion_set
    if suggestion_set is not None:
        prompt = f", prompt version {suggestion_set.prompt_version}" if suggestion_set.prompt_version else ""
        suggested = (
            f"Each expression's complexity traits were first suggested by an LLM (`{suggestion_set.model_name}`"
            f'{prompt}; suggestion set "{suggestion_set.name}"). '
        )
        if round_.hide_suggestions_fraction:
            suggested += (
                f"The suggestions were hidden on a random {round_.hide_suggestions_fraction:.0%} of the items "
                "to measure how much annotators anchor on them. "
            )
    else:
        suggested = "This round showed the annotators no LLM suggestions. "
    license_note = (
        ""
        if license_ not in ("unknown", "other")
        else "\n\nNo license was recorded for this dataset in VIVID Studio (setting `VIVID_DATASET_LICENSE`): "
        "settle the license of the source dictionaries and the annotations before publishing.\n"
    )
    per_item = stats.get("annotators_per_item") or round_.annotators_per_item
    split_lines = "\n".join(f"| `{name}` | {len(rows)} |" for name, rows in splits.items())
    trait_lines = "\n".join(f"| {i} | `{t.code}` | {t.name_en} | {t.name_vi} |" for i, t in enumerate(traits))
    theme_lines = "\n".join(f"| {i} | `{t.code}` | {t.name_en} | {t.name_vi} |" for i, t in enumerate(themes))
    funnel_lines = "\n".join(
        f"| {label} | {funnel.get(key, '—')} |"
        for key, label in (
            ("imported", "expressions in the dataset"),
            ("in_round", "items in the round"),
            ("reviewed_by_all", "reviewed by every assigned annotator"),
            ("unanimous", "unanimous"),
            ("adjudicated", "adjudicated"),
            ("removed", "removed"),
            ("final", "in this version"),
        )
    )
    body = f"""# Dataset Card for VIVID: {version.name}

## Dataset Details

### Dataset Description

Vietnamese idioms and proverbs (*thành ngữ*, *tục ngữ*), each with an explanation, labelled with
the complexity traits and the semantic theme of the VIVID taxonomy. This is the frozen version
"{version.name}" of the dataset "{round_.dataset.name}", built in VIVID Studio from the annotation
round "{round_.name}" and frozen on {version.created_at:%Y-%m-%d}: {n} items, {provenance["unanimous"]}
unanimous and {provenance["adjudicated"]} adjudicated.

- **Language:** Vietnamese (`vi`): expressions and explanations.
- **License:** `{license_}`{license_note}
- **Paper:** [VIVID: A Culturally Grounded Benchmark Exposing the Figurative Language Gap in Vietnamese NLP]({PAPER_URL})

## Uses

### Direct Use

Benchmarking how well language models understand Vietnamese figurative language: explaining an
expression (text generation, judged against the reference explanation), classifying its theme
(one of {len(themes)}) and its complexity traits (any of {len(traits)}, exact match).

### Out-of-Scope Use

The labels describe the expressions, not people: do not use them to profile speakers or regions.
The explanations are one dictionary reading each; they are not the only valid interpretation.

## Dataset Structure

| split | rows |
| --- | --- |
{split_lines}

Columns: `id` (the corpus's identifier), `expression`, `explanation`, `kind` (idiom or proverb when
recorded), `source` (the dictionary), `traits` (a list of class labels), `theme` (a class label),
`provenance` (`unanimous`: both annotators agreed; `adjudicated`: an adjudicator decided) and
`metadata` (the corpus's other columns, as JSON text).

Traits (`traits`, in the taxonomy's order):

| label | code | name | tên |
| --- | --- | --- | --- |
{trait_lines}

Themes (`theme`):

| label | code | name | tên |
| --- | --- | --- | --- |
{theme_lines}

## Dataset Creation

### Curation Rationale

Vietnamese idioms and proverbs carry cultural knowledge that current language models often miss
(literal over-interpretation, lexical gaps, pragmatic flattening); VIVID measures that gap.

### Source Data

The expressions and their explanations come from Vietnamese dictionaries of idioms and proverbs
(the `source` column), as imported into VIVID Studio.

### Annotations

#### Annotation process

{suggested}Then {per_item} annotators reviewed
every item independently and blind to each other: they kept or rejected each suggested trait, added
missing ones and chose the theme. Items on which they agreed on both traits and theme were accepted
as unanimous; the others went to an adjudicator, who decided the labels or removed the item. The
curation funnel of the round, as frozen:

| step | items |
| --- | --- |
{funnel_lines}

#### Agreement

Inter-annotator agreement on the labels the annotators submitted (before adjudication), over
{stats.get("n_items", "—")} items; {_interval_text(stats)}

{_agreement_table(stats, traits)}

#### Who are the annotators?

{len(stats.get("annotators") or [])} annotators took part in the round. The paper's protocol calls
for native Vietnamese speakers with expertise in Vietnamese linguistics. VIVID Studio records no
demographic information about annotators (age, gender, region, dialect), so none is given here.

### Personal and Sensitive Information

The dataset holds published expressions and dictionary explanations, and no information about the
annotators: their accounts are not named.

## Bias, Risks, and Limitations

{_anchoring_risk(stats, suggestion_set)}- With {per_item} annotators per item, agreement rests on few ratings: the intervals above show how uncertain it is.
- Expressions removed during adjudication are not in the dataset, which biases it towards
  expressions that are easier to label.
- Regional variants and their meanings are under-represented where the dictionaries omit them.

## Citation

**BibTeX:**

```bibtex
{CITATION}
```

## More Information

Exported by VIVID Studio (`manage.py export_version "{version.name}" --format hf`), with
`croissant.json` (Croissant 1.0 metadata) beside this card. `datasets` caches a local folder by its
name, not its content: after exporting again into a folder of the same name, load it with
`load_dataset(folder, download_mode="force_redownload")`.
"""
    return "---\n" + yaml.safe_dump(front, allow_unicode=True, sort_keys=False) + "---\n\n" + body


def _interval_text(stats: dict) -> str:
    method = stats.get("method") or {}
    level = method.get("confidence_level")
    if not level:
        return "no intervals."
    return (
        f"intervals at {level:.0%} are bootstrap percentile intervals ({method.get('n_resamples')} resamples "
        "of the items with all their ratings)."
    )


def _anchoring_risk(stats: dict, suggestion_set) -> str:
    if suggestion_set is None:
        return ""
    risk = "- The traits were first suggested by an LLM, which may anchor the annotators towards them"
    overall = (stats.get("anchoring") or {}).get("overall") if (stats.get("anchoring") or {}).get("available") else None
    if not overall or overall.get("difference") is None:
        return risk + ".\n"
    interval = overall.get("difference_ci")
    ci = f" [{interval['low']:.2f}, {interval['high']:.2f}]" if interval else " (no interval)"
    return (
        f"{risk}: annotators' traits matched the suggestions on {overall['match_rate_shown']:.0%} of the "
        f"{overall['n_shown']} items where they saw them and on {overall['match_rate_hidden']:.0%} of the "
        f"{overall['n_hidden']} where they were hidden (difference {overall['difference']:.2f}{ci}).\n"
    )


def _estimate(values: dict, key: str) -> str:
    value = values.get(key)
    if value is None:
        return "—"
    interval = values.get(f"{key}_ci")
    if not interval:
        return f"{value:.3f} (no interval)"
    return f"{value:.3f} [{interval['low']:.3f}, {interval['high']:.3f}]"


def _agreement_table(stats: dict, traits) -> str:
    lines = [
        "| label | items | agreement | Cohen's κ [95% CI] | Krippendorff's α [95% CI] |",
        "| --- | --- | --- | --- | --- |",
    ]
    labels = [("theme", stats.get("theme") or {})]
    labels += [(f"trait `{t.code}`", (stats.get("traits") or {}).get(t.code) or {}) for t in traits]
    for name, values in labels:
        percent = values.get("percent_agreement")
        agreement = "—" if percent is None else f"{percent:.1f}%"
        lines.append(
            f"| {name} | {values.get('n', '—')} | {agreement} | {_estimate(values, 'cohen_kappa')} "
            f"| {_estimate(values, 'krippendorff_alpha')} |"
        )
    return "\n".join(lines)


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _croissant(version, files: dict[str, Path], out: Path, traits, themes) -> dict:
    """Croissant 1.0: one FileObject and one RecordSet per split, the labels as enumeration record sets."""

    def labels(name: str, rows) -> dict:
        return {
            "@type": "cr:RecordSet",
            "@id": name,
            "name": name,
            "description": f"The {name} class labels: a row's index is the label stored in the data.",
            "dataType": "sc:Enumeration",
            "key": {"@id": f"{name}/label"},
            "field": [
                {"@type": "cr:Field", "@id": f"{name}/label", "name": "label", "dataType": "sc:Integer"},
                {"@type": "cr:Field", "@id": f"{name}/code", "name": "code", "dataType": "sc:Text"},
                {"@type": "cr:Field", "@id": f"{name}/name", "name": "name", "dataType": "sc:Text"},
            ],
            "data": [
                {f"{name}/label": i, f"{name}/code": row.code, f"{name}/name": row.name_en}
                for i, row in enumerate(rows)
            ],
        }

    def split_set(split: str) -> dict:
        def column(name: str, data_type: str, **extra) -> dict:
            return {
                "@type": "cr:Field",
                "@id": f"{split}/{name}",
                "name": name,
                "dataType": data_type,
                "source": {"fileObject": {"@id": f"{split}-parquet"}, "extract": {"column": name}},
                **extra,
            }

        fields = [column(name, "sc:Text") for name in TEXT_COLUMNS]
        # No ``references`` here: mlcroissant joins a reference, and a list column cannot be joined.
        fields.append(
            column(
                "traits",
                "sc:Integer",
                repeated=True,
                description="The item's traits, each a label of the trait_labels record set.",
            )
        )
        fields.append(column("theme", "sc:Integer", references={"field": {"@id": "theme_labels/label"}}))
        fields += [column("provenance", "sc:Text"), column("metadata", "sc:Text")]
        return {
            "@type": "cr:RecordSet",
            "@id": split,
            "name": split,
            "description": f"The {split} split, one record per expression.",
            "field": fields,
        }

    return {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": slugify(f"vivid-{version.name}") or f"vivid-version-{version.pk}",
        "description": (
            f'VIVID version "{version.name}": Vietnamese idioms and proverbs with explanations, '
            "complexity traits and semantic themes, reviewed by two blind annotators and adjudicated."
        ),
        "license": _license(),
        "url": settings.VIVID_DATASET_URL or PAPER_URL,
        "version": "1.0.0",
        "datePublished": version.created_at.date().isoformat(),
        "inLanguage": "vi",
        "citeAs": CITATION,
        "distribution": [
            {
                "@type": "cr:FileObject",
                "@id": f"{split}-parquet",
                "name": f"{split}-parquet",
                "contentUrl": path.relative_to(out).as_posix(),
                "encodingFormat": "application/x-parquet",
                "sha256": _sha256(path),
            }
            for split, path in files.items()
        ],
        "recordSet": [
            labels("trait_labels", traits),
            labels("theme_labels", themes),
            *(split_set(split) for split in files),
        ],
    }
