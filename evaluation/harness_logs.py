"""Reading lm-evaluation-harness and Inspect logs of the exported VIVID tasks (``import_run``).

Parsing only: no database. Every problem is collected with the line (lm-eval) or sample
(Inspect) it comes from, so one error names them all and the import writes nothing.
Inspect's ``.eval`` is a zip whose entries are zstd-compressed (method 93, which the standard
library's zipfile cannot read before Python 3.14): the central directory is checked by
core.files first, then each entry is inflated with ``zstandard`` no further than its declared size.
"""

import copy
import hashlib
import io
import json
import zipfile
import zlib
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from core.files import ArchiveError, zip_open, zip_read

LM_EVAL = "lm-eval"
INSPECT = "inspect"
LOG_FORMATS = (LM_EVAL, INSPECT)
LOG_EXTENSIONS = {LM_EVAL: (".jsonl",), INSPECT: (".eval", ".json")}
ZIP_ZSTD = 93
# Entries of an .eval the importer reads; the journal and summaries repeat what these hold.
EVAL_HEADER = "header.json"


class LogError(ValueError):
    """The log cannot be imported; ``problems`` lists each line or sample at fault."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass
class LogSample:
    where: str  # "line 3" or "sample demo-001": what an error names
    id: str
    task: str
    version: str
    reply: str
    messages: list = field(default_factory=list)
    finish_reason: str = ""
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass
class HarnessLog:
    harness: str
    harness_version: str
    sha256: str
    samples: list[LogSample]
    model: str = ""
    model_args: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    task_name: str = ""


def _dict(value) -> dict:
    """A JSON object of the log, or {} for anything else where one belongs (a hand-edited or foreign file)."""
    return value if isinstance(value, dict) else {}


def _text(value) -> str:
    # PostgreSQL text cannot hold NUL; a reply is kept otherwise as the harness logged it.
    return str(value).replace("\x00", "")


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31 else 0


def _messages(value) -> list[dict]:
    """Chat messages as role and text (Inspect's content may be a list of parts)."""
    messages = []
    for message in value if isinstance(value, list) else []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        messages.append({"role": _text(message.get("role", "")), "content": _text(content or "")})
    return messages


def _contract(row, where: str, problems: list[str]) -> tuple[str, str, str] | None:
    """(id, vivid_task, vivid_version) of an exported row, or None with the problem noted."""
    if not isinstance(row, dict):
        problems.append(_("%(where)s: no exported VIVID row") % {"where": where})
        return None
    values = [row.get(key) for key in ("id", "vivid_task", "vivid_version")]
    missing = [key for key, value in zip(("id", "vivid_task", "vivid_version"), values, strict=True) if not value]
    if missing:
        problems.append(
            _("%(where)s: the row has no %(fields)s (not exported by export_tasks?)")
            % {"where": where, "fields": ", ".join(missing)}
        )
        return None
    return _text(values[0]), _text(values[1]), _text(values[2])


def lmeval_parse(data: bytes) -> HarnessLog:
    """An lm-eval ``samples_<task>_*.jsonl`` written with ``--log_samples``."""
    problems: list[str] = []
    samples: list[LogSample] = []
    params: dict = {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LogError([_("the file is not UTF-8 (byte %(at)s)") % {"at": exc.start}]) from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = _("line %(n)s") % {"n": number}
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(_("%(where)s: not JSON (%(error)s)") % {"where": where, "error": exc.msg})
            continue
        except RecursionError:
            problems.append(_("%(where)s: nested too deeply") % {"where": where})
            continue
        if not isinstance(record, dict):
            problems.append(_("%(where)s: not an lm-eval sample") % {"where": where})
            continue
        found = _contract(record.get("doc"), where, problems)
        if found is None:
            continue
        replies = record.get("resps")
        # resps is one list of replies per request; a generate_until task sends one request.
        if not (isinstance(replies, list) and replies and isinstance(replies[0], list) and replies[0]):
            problems.append(_("%(where)s: no reply in resps") % {"where": where})
            continue
        reply = replies[0][0]
        messages: list = []
        arguments = _dict(_dict(record.get("arguments")).get("gen_args_0"))
        prompt = arguments.get("arg_0")
        if isinstance(prompt, list) and prompt:
            prompt = prompt[0]
        if isinstance(prompt, str):
            try:
                messages = _messages(json.loads(prompt))
            except json.JSONDecodeError:
                messages = [{"role": "user", "content": prompt}]
        if isinstance(arguments.get("arg_1"), dict) and not params:
            params = dict(arguments["arg_1"])
        samples.append(LogSample(where, *found, reply=_text(reply or ""), messages=messages))
    if problems:
        raise LogError(problems)
    if not samples:
        raise LogError([_("the file holds no sample")])
    return HarnessLog(
        harness="lm-eval", harness_version="", sha256=hashlib.sha256(data).hexdigest(), samples=samples, params=params
    )


def _inspect_sample(sample, problems: list[str]) -> LogSample | None:
    where = _("sample %(id)s") % {"id": sample.get("id") if isinstance(sample, dict) else "?"}
    if not isinstance(sample, dict):
        problems.append(_("%(where)s: not an Inspect sample") % {"where": where})
        return None
    found = _contract({"id": sample.get("id"), **_dict(sample.get("metadata"))}, where, problems)
    if found is None:
        return None
    if sample.get("error"):
        problems.append(_("%(where)s: ended with an error in Inspect") % {"where": where})
        return None
    output = _dict(sample.get("output"))
    choices = [_dict(choice) for choice in output.get("choices") or [] if isinstance(output.get("choices"), list)]
    reply = output.get("completion")
    if reply is None and choices:
        reply = (_messages([choices[0].get("message")]) or [{"content": ""}])[0]["content"]
    if reply is None:
        problems.append(_("%(where)s: no output") % {"where": where})
        return None
    usage = _dict(output.get("usage"))
    messages = _messages(sample.get("messages"))
    # The conversation sent is the messages before the model's own reply.
    if messages and messages[-1]["role"] == "assistant":
        messages = messages[:-1]
    return LogSample(
        where,
        *found,
        reply=_text(reply),
        messages=messages,
        finish_reason=_text((choices[0].get("stop_reason") if choices else "") or "")[:32],
        tokens_in=_count(usage.get("input_tokens")),
        tokens_out=_count(usage.get("output_tokens")),
    )


def _eval_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, *, name: str) -> bytes:
    if info.compress_type != ZIP_ZSTD:
        return zip_read(archive, info, name=name)
    import zstandard

    raw_info = copy.copy(info)
    # The compressed bytes as they are; the CRC is checked below on the inflated ones.
    raw_info.compress_type, raw_info.file_size, raw_info.CRC = zipfile.ZIP_STORED, info.compress_size, None
    try:
        with archive.open(raw_info) as handle:
            raw = handle.read(info.compress_size + 1)
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw))
        data = reader.read(info.file_size + 1)
    except (zipfile.BadZipFile, zstandard.ZstdError, OSError, ValueError):
        data = None
    if data is None or len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise ArchiveError(
            _("%(name)s: “%(entry)s” is damaged or holds more than the size its header declares")
            % {"name": name, "entry": info.filename}
        )
    return data


def _json(data: bytes, what: str):
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise LogError([_("%(what)s: not JSON (%(error)s)") % {"what": what, "error": type(exc).__name__}]) from None


def inspect_parse(data: bytes, *, name: str) -> HarnessLog:
    """An Inspect log: ``.eval`` (zip) or ``.json``."""
    if data[:2] == b"PK":
        try:
            archive = zip_open(data, name=name)
            with archive:
                entries = {info.filename: info for info in archive.infolist()}
                if EVAL_HEADER not in entries:
                    raise LogError([_("%(name)s: no header.json: not an Inspect .eval log") % {"name": name}])
                log = _json(_eval_entry(archive, entries[EVAL_HEADER], name=name), EVAL_HEADER)
                log["samples"] = [
                    _json(_eval_entry(archive, info, name=name), entry)
                    for entry, info in sorted(entries.items())
                    if entry.startswith("samples/") and entry.endswith(".json")
                ]
        except ArchiveError as exc:
            raise LogError([str(exc)]) from None
    else:
        log = _json(data, name)
    if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
        raise LogError([_("%(name)s: not an Inspect log (no eval)") % {"name": name}])
    if log.get("status") not in (None, "success"):
        raise LogError([_("%(name)s: the evaluation ended %(status)s") % {"name": name, "status": log.get("status")}])
    problems: list[str] = []
    found = log.get("samples") if isinstance(log.get("samples"), list) else []
    samples = [s for s in (_inspect_sample(sample, problems) for sample in found) if s]
    if problems:
        raise LogError(problems)
    if not samples:
        raise LogError([_("the log holds no sample")])
    spec = log["eval"]
    model = _text(spec.get("model") or "")[:400]
    return HarnessLog(
        harness="inspect",
        harness_version=_text(_dict(spec.get("packages")).get("inspect_ai") or "")[:50],
        sha256=hashlib.sha256(data).hexdigest(),
        samples=samples,
        # "openai/NAME": the provider Inspect used, then the model's name at it.
        model=model.partition("/")[2] or model,
        model_args={"model": model, "base_url": spec.get("model_base_url") or "", **_dict(spec.get("model_args"))},
        params=dict(_dict(_dict(log.get("plan")).get("config"))),
        task_name=_text(spec.get("task") or "")[:200],
    )


def log_parse(*, fmt: str, data: bytes, name: str) -> HarnessLog:
    if fmt == LM_EVAL:
        return lmeval_parse(data)
    if fmt == INSPECT:
        return inspect_parse(data, name=name)
    raise LogError([_("format must be one of %(values)s") % {"values": ", ".join(LOG_FORMATS)}])
