"""The rubric library: folders of rubric files, indexed once, looked up by name, path, artifact
type or tag. Ids are unique per version; asking for a name gives its newest version. A Forge file's
`rubric_id` (seed 002) is unique across the library whatever its version, and names its own file."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import semver

from rubricflow.errors import InputError
from rubricflow.settings import settings

from .compiler import Bundle, RubricNamed, compile_or_raise, content_hash
from .formats import FOLDER_DOCUMENTS, RubricImportError, load_rubrics
from .metrics import library_size, retrieved
from .model import Rubric

BUILTIN = Path(__file__).parent / "library"
RUBRIC_SUFFIXES = {".yaml", ".yml", ".json", ".xml", ".md", ".jsonl", ".prompty"}


class LibraryError(InputError):
    """A rubric name or library folder that cannot be resolved."""


@dataclass(frozen=True)
class Entry(RubricNamed):
    rubric: Rubric
    path: Path


def default_roots(extra: list[Path] | None = None) -> list[Path]:
    """The built-in library, then RUBRICFLOW_LIBRARY (os.pathsep-separated), then `extra`."""
    roots = [BUILTIN]
    env = settings().library or ""
    roots += [Path(p) for p in env.split(os.pathsep) if p]
    return roots + list(extra or [])


class Library:
    def __init__(self, roots: list[Path] | None = None):
        self.roots = [Path(r) for r in (roots if roots is not None else default_roots())]
        self._by_key: dict[tuple[str, str], Entry] = {}
        self._latest: dict[str, Entry] = {}
        self._by_path: dict[Path, Entry] = {}
        self._bundles: dict[tuple[str, str], Bundle] = {}
        self._sorted: list[Entry] | None = None
        self._by_tag: dict[str, set[tuple[str, str]]] = {}
        self._written_ids: dict[str, Entry] = {}  # a Forge rubric_id as written (user_story_quality_v1) -> its file
        self._forge_ids: dict[str, Entry] = {}  # a Forge file's library id (user-story-quality-v1) -> that file
        self.skipped: list[tuple[Path, str]] = []  # files in a library folder that hold no usable rubric
        for root in self.roots:
            if not root.exists():
                raise LibraryError(f"library folder {root} does not exist")
            files = (
                [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix.lower() in RUBRIC_SUFFIXES)
            )
            for path in files:
                if path.name.upper().startswith(FOLDER_DOCUMENTS):
                    continue
                try:
                    rubrics = load_rubrics(path)
                except InputError as exc:  # one stray YAML in a folder must not make every rubric unusable
                    if root.is_file():
                        raise
                    self.skipped.append((path, str(exc)))
                    continue
                for rubric in rubrics:
                    self._add(Entry(rubric, path))
        library_size(len(self._by_key))

    def _add(self, entry: Entry) -> None:
        written = self._claim_forge_id(entry)
        key = (entry.id, entry.version)
        if key in self._by_key:
            first = self._by_key[key]
            raise LibraryError(
                f"duplicate rubric {entry.id} v{entry.version}: {first.path} and {entry.path} "
                + (
                    "hold the same rubric: keep one"
                    if _same(first, entry)
                    else "differ in content: give one of them another version"
                )
            )
        self._by_key[key] = entry
        self._sorted = None
        for tag in entry.rubric.metadata.tags:
            self._by_tag.setdefault(tag, set()).add(key)
        self._by_path.setdefault(entry.path.resolve(), entry)
        if written is not None:
            self._written_ids[written] = entry  # seed 002: "Always reference by ID"
        current = self._latest.get(entry.id)
        if current is None or semver.Version.parse(entry.version) > semver.Version.parse(current.version):
            self._latest[entry.id] = entry

    def _claim_forge_id(self, entry: Entry) -> str | None:
        """Seed 002, RL-01 and RL-08: a Forge `rubric_id` carries its version (`_v1`), so a second Forge
        file with it is refused whatever its `version` says, as is one whose id differs only in case or
        punctuation (`user-story-quality-v1`): both would be the library id user-story-quality-v1, and
        the id as written could no longer name its own file. The written id, or None for other formats."""
        written = entry.rubric.metadata.provenance.get("rubric_id")
        if entry.rubric.metadata.provenance.get("format") != "forge-yaml" or not isinstance(written, str):
            return None
        first = self._forge_ids.setdefault(entry.id, entry)
        if first is not entry:
            theirs = first.rubric.metadata.provenance["rubric_id"]
            raise LibraryError(
                f"duplicate rubric id {entry.id}: {first.path} (rubric_id {theirs!r}, v{first.version}) and "
                f"{entry.path} (rubric_id {written!r}, v{entry.version}); a Forge rubric_id is unique across the "
                "library whatever the version (seed 002, RL-08): "
                + ("they hold the same rubric: keep one" if _same(first, entry) else "give one its own rubric_id")
            )
        return written

    def __len__(self) -> int:
        return len(self._by_key)

    def entries(self) -> list[Entry]:
        if self._sorted is None:
            self._sorted = sorted(self._by_key.values(), key=lambda e: (e.id, semver.Version.parse(e.version)))
        return list(self._sorted)

    def get(self, ref: str) -> Entry:
        """`name`, `name@version` or a path to a file in the library; timed and counted as Forge's
        telemetry (rubrics/metrics.py) when metrics are on."""
        started = time.perf_counter()
        entry = self._lookup(ref)
        retrieved(entry.id, entry.version, (time.perf_counter() - started) * 1000)
        return entry

    def _lookup(self, ref: str) -> Entry:
        name, _, version = ref.partition("@")
        entry = self._written_ids.get(name)  # a Forge id as written names its own file, never a namesake's
        if entry is None or version not in ("", entry.version):
            entry = self._by_key.get((name, version)) if version else self._latest.get(name)
        if entry is None:
            entry = self._by_path.get(Path(ref).resolve()) if os.sep in ref or "." in ref else None
        if entry is None:
            raise LibraryError(f"no rubric named {ref!r} in the library{self._hint(name, version)}")
        return entry

    def _hint(self, name: str, version: str) -> str:
        """What the user may have meant: the versions of a name asked at a version it does not have,
        else names like it."""
        versions = [e.version for e in self.entries() if e.id == name]
        if version and versions:
            return f"; {name} has version(s) {', '.join(versions)}"
        close = [i for i in self._latest if name in i or i in name][:5]
        return f"; did you mean {', '.join(close)}?" if close else "; `rubricflow rubric list` shows them all"

    def bundle(self, ref: str) -> Bundle:
        entry = self.get(ref)
        key = (entry.id, entry.version)
        if key not in self._bundles:
            self._bundles[key] = compile_or_raise(entry.rubric, source=str(entry.path))
        return self._bundles[key]

    def find(self, text: str = "", artifact_type: str | None = None, tags: tuple[str, ...] = ()) -> list[Entry]:
        needle = text.lower()
        candidates = self.entries()
        if tags:  # narrow by the tag index first
            keys = set.intersection(*(self._by_tag.get(t, set()) for t in tags))
            candidates = [e for e in candidates if (e.id, e.version) in keys]
        found = []
        for e in candidates:
            m = e.rubric.metadata
            if artifact_type and m.artifact_type != artifact_type:
                continue
            if tags and not set(tags) <= set(m.tags):
                continue
            if needle and needle not in " ".join((m.id, m.title, m.description, m.artifact_type, *m.tags)).lower():
                continue
            found.append(e)
        return found


def _same(first: Entry, second: Entry) -> bool:
    return content_hash(first.rubric) == content_hash(second.rubric)


def resolve(ref: str, library: Library | None = None) -> Rubric:
    """A rubric from a file path or a library name: the one way every command names a rubric."""
    path = Path(ref)
    if path.is_file():
        return _single(path)
    if path.is_dir() and (os.sep in ref or ref.startswith(".")):  # a path, not a library name that names a folder
        raise RubricImportError(path, "is a folder, not a rubric file (`rubricflow rubric validate` reads a folder)")
    try:
        return (library or Library()).get(ref).rubric
    except LibraryError:
        if path.suffix.lower() in RUBRIC_SUFFIXES:
            raise RubricImportError(path, "no such file (and no library rubric by that name)") from None
        raise


def _single(path: Path) -> Rubric:
    rubrics = load_rubrics(path)
    if len(rubrics) > 1:
        raise RubricImportError(path, f"holds {len(rubrics)} rubrics; convert it to one file per rubric first")
    return rubrics[0]
