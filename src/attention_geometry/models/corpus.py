"""A natural-text corpus that every installation has, and random windows of it.

**Default text.** The English prose in the docstrings of a fixed list of
Python standard-library modules (:data:`STDLIB_MODULES`, in that order). Each
module's source is parsed with :mod:`ast` (nothing is imported); the
docstrings of the module and of every class and function in it are split into
paragraphs at blank lines, and a paragraph is kept only if it reads as prose:
no doctest (``>>>``) or indented code lines, at least 12 words, starts with a
capital letter, ends with ``.``, ``!`` or ``?``, and at least 85 % of its
characters are letters or spaces. Lines are joined with single spaces and
duplicates are dropped (first occurrence kept). The extraction is
deterministic for a given Python version (the text is that of the running
interpreter's standard library).

**Kept on disk.** Parsing the standard library takes a few seconds, in every
process that needs the text; the paragraphs are kept in
``$AG_CACHE_DIR`` (default ``~/.cache/attention_geometry``) in a JSON file named
by the interpreter's version, its standard-library folder and this module's
source, so that a change to any of them extracts the text again. A missing,
unreadable or malformed file is extracted again; a cache that cannot be written
is skipped.

**Any other text.** ``folder=`` names a folder of ``.txt`` files instead: every
file (sorted by name, read as UTF-8) is split into paragraphs at blank lines.

Shapes: ``n_samples`` windows of ``seq_len`` tokens.
"""

import ast
import functools
import hashlib
import json
import re
import sys
import sysconfig
from pathlib import Path
from typing import Any, Sequence

import torch

from .._checks import as_torch_generator, check_int, fail
from .._files import cache_root, write_json_atomic

__all__ = [
    "STDLIB_MODULES",
    "load_corpus",
    "corpus_facts",
    "token_batches",
    "byte_batches",
]

#: Standard-library modules whose docstrings make the default corpus, in order.
STDLIB_MODULES = (
    "argparse", "collections/__init__", "contextlib", "dataclasses", "datetime",
    "_pydecimal", "difflib", "fractions", "functools", "heapq", "inspect",
    "json/__init__", "json/decoder", "logging/__init__", "pathlib", "pickle",
    "random", "shutil", "statistics", "string", "subprocess", "tarfile",
    "textwrap", "threading", "typing", "unittest/case", "urllib/parse",
    "calendar", "csv", "doctest", "pydoc", "os", "re/__init__", "ssl", "abc",
    "enum", "gettext", "imaplib", "smtplib", "ftplib", "http/client",
    "http/cookiejar", "mailbox", "email/message", "email/utils", "configparser",
    "locale", "optparse", "pprint", "queue", "sched", "selectors", "socket",
    "socketserver", "tempfile", "timeit", "trace", "turtle", "uuid", "warnings",
    "weakref", "xml/dom/minidom", "xml/etree/ElementTree", "asyncio/events",
    "asyncio/tasks", "asyncio/locks", "asyncio/streams",
    "concurrent/futures/_base", "multiprocessing/pool", "importlib/__init__",
    "codecs", "copy", "numbers", "operator", "bisect", "shlex", "glob",
    "fnmatch", "filecmp", "cmd", "code", "bdb", "pdb", "profile", "pstats",
    "tokenize", "ast", "dis", "sqlite3/__init__", "wave", "zipapp", "ipaddress",
    "hashlib", "hmac", "secrets", "base64", "netrc", "plistlib", "quopri",
    "signal",
)

_MIN_WORDS = 12
_MIN_LETTER_FRACTION = 0.85


def _is_prose(paragraph: str) -> bool:
    lines = paragraph.splitlines()
    if any(line.lstrip().startswith((">>>", "...")) or line.startswith((" ", "\t")) for line in lines):
        return False
    text = " ".join(paragraph.split())
    if len(text.split()) < _MIN_WORDS or not text[0].isupper() or text[-1] not in ".!?":
        return False
    letters = sum(c.isalpha() or c == " " for c in text)
    return letters / len(text) >= _MIN_LETTER_FRACTION


def _docstrings(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [tree] + [
        n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    for node in nodes:
        doc = ast.get_docstring(node, clean=True)
        if doc:
            yield doc


def _dedupe(paragraphs):
    return list(dict.fromkeys(paragraphs))


def _corpus_cache_file() -> Path:
    stdlib = sysconfig.get_paths()["stdlib"]
    digest = hashlib.sha256("\0".join([sys.version, stdlib, Path(__file__).read_text(encoding="utf-8")]).encode())
    return cache_root() / f"stdlib-corpus-{digest.hexdigest()[:16]}.json"


@functools.cache
def _stdlib_corpus() -> tuple[str, ...]:
    """The default text: read from the disk cache if it is there and well formed, else extracted and kept."""
    cache = _corpus_cache_file()
    try:
        kept = json.loads(cache.read_text(encoding="utf-8"))
        if isinstance(kept, list) and kept and all(isinstance(p, str) for p in kept):
            return tuple(kept)
    except (OSError, ValueError):  # not there yet, unreadable or not JSON: extract again
        pass
    paragraphs = _extract_stdlib_corpus()
    try:
        write_json_atomic(cache, list(paragraphs))
    except OSError:  # a read-only home or a full disk: work without the cache
        pass
    return paragraphs


def _extract_stdlib_corpus() -> tuple[str, ...]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    out = []
    for module in STDLIB_MODULES:
        path = stdlib / f"{module}.py"
        if not path.exists():  # a module removed in a later Python: skip it
            continue
        for doc in _docstrings(path):
            out.extend(" ".join(p.split()) for p in re.split(r"\n\s*\n", doc) if _is_prose(p))
    return tuple(_dedupe(out))


def _folder_corpus(folder: str) -> list[str]:
    root = Path(folder)
    if not root.is_dir():
        raise fail("folder", folder, "a folder of .txt files", "is not a directory")
    files = sorted(root.glob("*.txt"))
    if not files:
        raise fail("folder", folder, "a folder of .txt files", "holds no .txt files")
    out = []
    for f in files:
        text = f.read_text(encoding="utf-8")
        out.extend(" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip())
    return out


def load_corpus(folder: str | None = None) -> list[str]:
    """The corpus as a list of paragraphs (deterministic).

    ``folder=None``: the prose of the standard library's docstrings (see the
    module docstring); otherwise the paragraphs of the ``.txt`` files in
    ``folder``.
    """
    return list(_stdlib_corpus()) if folder is None else _folder_corpus(folder)


def corpus_facts(folder: str | None = None) -> dict:
    """What the text is, in numbers: ``{"folder", "paragraphs", "characters"}`` and, for
    the built-in corpus (``folder=None``), ``"n_modules"`` and ``"python"`` (the
    version, ``"3.12.3"``), otherwise ``"n_files"`` (the ``.txt`` files read).
    :func:`~attention_geometry.words.describe_corpus` words it."""
    paragraphs = load_corpus(folder)
    facts = {"folder": folder, "paragraphs": len(paragraphs), "characters": sum(len(p) for p in paragraphs)}
    if folder is None:
        return facts | {"n_modules": len(STDLIB_MODULES), "python": ".".join(map(str, sys.version_info[:3]))}
    return facts | {"n_files": len(sorted(Path(folder).glob("*.txt")))}


def _check_sizes(n_samples, seq_len, seed):
    for name, value, low in [("n_samples", n_samples, 1), ("seq_len", seq_len, 1), ("seed", seed, 0)]:
        check_int(name, value, low=low)


def _windows(stream: torch.Tensor, n_samples: int, seq_len: int, seed: int, unit: str):
    if stream.numel() < seq_len:
        raise fail("seq_len", seq_len, f"at most the corpus length, {stream.numel()} {unit} (use a larger corpus "
                   "or shorter windows)", "is longer than the corpus")
    g = as_torch_generator("seed", seed)
    starts = torch.randint(stream.numel() - seq_len + 1, (n_samples,), generator=g)
    return stream[starts[:, None] + torch.arange(seq_len)]


_SEPARATOR = "\n\n"


def token_batches(tokenizer: Any, texts: Sequence[str], n_samples: int, seq_len: int, seed: int) -> torch.Tensor:
    """Random windows of the tokenised concatenation of ``texts``.

    ``tokenizer``: a Hugging Face tokenizer (callable on a list of strings, as
    :func:`~attention_geometry.models.pretrained.load_pretrained` returns it).
    The paragraphs are tokenised one by one (no special tokens) and joined with
    the tokens of a blank line. Returns ``(n_samples, seq_len)`` int64; window
    starts are uniform, drawn from ``torch.Generator().manual_seed(seed)``.
    Raises ``ValueError`` if the corpus has fewer than ``seq_len`` tokens.
    """
    _check_sizes(n_samples, seq_len, seed)
    if len(texts) == 0:
        raise fail("texts", texts, "a non-empty list of paragraphs", "is empty")
    ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    sep = tokenizer(_SEPARATOR, add_special_tokens=False)["input_ids"]
    stream = []
    for i, piece in enumerate(ids):
        if i:
            stream.extend(sep)
        stream.extend(piece)
    return _windows(torch.tensor(stream, dtype=torch.long), n_samples, seq_len, seed, "tokens")


def byte_batches(texts: Sequence[str], n_samples: int, seq_len: int, seed: int) -> torch.Tensor:
    """Random windows of the UTF-8 bytes of the concatenation (blank-line separated).

    Returns ``(n_samples, seq_len)`` int64 with values in ``[0, 255]``: a
    256-symbol vocabulary for tiny models trained from scratch.
    """
    _check_sizes(n_samples, seq_len, seed)
    if len(texts) == 0:
        raise fail("texts", texts, "a non-empty list of paragraphs", "is empty")
    data = _SEPARATOR.join(texts).encode("utf-8")
    stream = torch.frombuffer(bytearray(data), dtype=torch.uint8).long()
    return _windows(stream, n_samples, seq_len, seed, "bytes")
