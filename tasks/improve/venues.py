"""Venue templates for `rubric generate --from-paper`, as data (seed 003, "Venue-conditioned templates"):
one YAML file per venue (`id`, `version`, `venue`, `domain`, `mode: agent_benchmark | paper_audit`,
`top_level_axes` for an audit, `prompt_overrides {system_hint, leaf_style}`), found on the seed's search
path, first match wins: `$ARI_PAPERBENCH_RUBRIC_DIR`, `./ari-core/config/paperbench_rubrics/` and
`./config/paperbench_rubrics/` in the working folder, then the templates shipped beside this module
(the seed's generic, sc, neurips and nature, and agent_benchmark / paper_audit).
A new venue is a new file, no code change; `--venue` also takes a template file's path."""

from __future__ import annotations

from pathlib import Path

import yaml

from rubricflow.errors import InputError
from rubricflow.settings import endpoint

SHIPPED = Path(__file__).parent / "venues"
ENV_DIR = "ARI_PAPERBENCH_RUBRIC_DIR"  # the seed's env override, searched first
LOCAL = (Path("ari-core/config/paperbench_rubrics"), Path("config/paperbench_rubrics"))  # under <cwd>, in order
MODES = ("agent_benchmark", "paper_audit")


def search_path() -> list[Path]:
    """Seed 003's discovery order, read at each call (the environment and working folder of now)."""
    override = (endpoint(ENV_DIR) or "").strip()
    return ([Path(override)] if override else []) + [Path.cwd() / folder for folder in LOCAL] + [SHIPPED]


def venue_ids() -> list[str]:
    """Every venue id on the search path, in the order found (a local one shadows a shipped one)."""
    found: dict[str, None] = {}
    for folder in search_path():
        found.update(dict.fromkeys(sorted(p.stem for p in folder.glob("*.yaml"))))
    return list(found)


def load_venue(venue: str) -> dict:
    """The template named `venue` (an id on the search path, or a YAML file's path), checked."""
    path = Path(venue) if venue.endswith((".yaml", ".yml")) else None
    if path is None:
        path = next((f / f"{venue}.yaml" for f in search_path() if (f / f"{venue}.yaml").is_file()), None)
    if path is None or not path.is_file():
        raise InputError(f"--venue {venue!r}: no such template; choose one of {', '.join(venue_ids())} or a .yaml file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not YAML: {exc}") from None
    return checked(data, path)


def checked(data: object, path: Path) -> dict:
    """The seed's schema: an id matching the file name, a known mode, axes for an audit, the two hints."""
    if not isinstance(data, dict):
        raise InputError(f"{path}: a venue template is a mapping")
    if data.get("id") != path.stem:
        raise InputError(f"{path}: field id: {data.get('id')!r} must match the file name ({path.stem!r})")
    if data.get("mode") not in MODES:
        raise InputError(f"{path}: field mode: {data.get('mode')!r} is not one of {', '.join(MODES)}")
    axes = data.get("top_level_axes") or []
    if data["mode"] == "paper_audit" and not axes:
        raise InputError(f"{path}: field top_level_axes: required when mode is paper_audit")
    for i, axis in enumerate(axes):
        _check_axis(axis, f"{path}: field top_level_axes[{i}]")
    hints = data.get("prompt_overrides") or {}
    if not isinstance(hints, dict) or not str(hints.get("system_hint") or "").strip():
        raise InputError(f"{path}: field prompt_overrides.system_hint: required")
    axes = axes if data["mode"] == "paper_audit" else []  # ignored for agent_benchmark, as the seed says
    return {**data, "top_level_axes": axes, "prompt_overrides": hints}


AXIS_FIELDS = ("id", "name", "weight", "description")


def _check_axis(axis: object, where: str) -> None:
    """Seed 003's axis: `id`, `name` (human-readable), `weight` (a positive integer; YAML's `true` is a
    bool, not 1) and `description` (the requirement that drops into the tree); each one named when wrong."""
    if not isinstance(axis, dict):
        raise InputError(f"{where}: an axis is a mapping of {', '.join(AXIS_FIELDS)}")
    unknown = sorted(set(axis) - set(AXIS_FIELDS))
    if unknown:  # e.g. an unquoted comma in a flow mapping made a key of half a sentence
        raise InputError(f"{where}: unknown field {unknown[0]!r}")
    for field in ("id", "name", "description"):
        if not isinstance(axis.get(field), str) or not axis[field].strip():
            raise InputError(f"{where}.{field}: a non-empty string is required, found {axis.get(field)!r}")
    weight = axis.get("weight")
    if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
        raise InputError(f"{where}.weight: a positive integer is required, found {weight!r}")
