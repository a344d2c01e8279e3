"""A routed score: the rubric algebra's coproduct (`rubrics/algebra.Coproduct`), executed. Each text
of a corpus goes to the one rubric its field selects (`genre`, or `metadata.KEY`); each rubric judges
only its own texts through the ordinary scoring flow, and the choice is recorded per text
(`text_routes`), so the views (`routed_texts`, `text_outcomes`) say which rubric judged which text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from rubricflow.errors import InputError
from rubricflow.rubrics.algebra import AlgebraError, Coproduct
from rubricflow.rubrics.compiler import Bundle, compile_for_scoring
from rubricflow.rubrics.library import resolve
from rubricflow.tasks.judging.run_options import RunOptions
from rubricflow.warehouse import steps
from rubricflow.warehouse.store import Store

if TYPE_CHECKING:
    from rubricflow.tasks.judging.config import JudgeConfig

SELECTORS = "genre, or metadata.KEY"


def parse_choices(refs: list[str]) -> tuple[dict[str, str], str | None]:
    """`VALUE=RUBRIC` choices, and at most one plain RUBRIC: the default for any other value."""
    choices: dict[str, str] = {}
    defaults = []
    for ref in refs:
        value, sep, rubric = ref.partition("=")
        if sep and value and rubric and not Path(ref).exists():
            if value in choices:
                raise InputError(f"--route: the value {value!r} is given two rubrics")
            choices[value] = rubric
        else:
            defaults.append(ref)
    if len(defaults) > 1:
        raise InputError(f"--route: at most one --rubric without VALUE= (the default); found {', '.join(defaults)}")
    if not choices:
        raise InputError("--route needs --rubric VALUE=RUBRIC choices (e.g. -r essay=writing-quality)")
    return choices, (defaults[0] if defaults else None)


def check_selector(selector: str) -> None:
    head, _, key = selector.partition(".")
    if not (selector == "genre" or (head == "metadata" and key)):
        raise InputError(f"--route {selector!r}: route by {SELECTORS}")


def route_corpus(warehouse: Path, corpus: str, refs: list[str], selector: str) -> dict[str, list[str]]:
    """Each rubric reference and the texts routed to it; the routes are recorded. A text no choice
    takes, with no default, is an error naming it, before any call."""
    check_selector(selector)
    choices, default = parse_choices(refs)
    refs_used = sorted(set(choices.values()) | ({default} if default else set()))
    rubrics = {ref: resolve(ref) for ref in refs_used}
    bundles = {ref: compile_for_scoring(rubrics[ref], source=ref) for ref in refs_used}
    hashes = {ref: bundle.hash for ref, bundle in bundles.items()}
    ref_of = {id(rubrics[ref]): ref for ref in refs_used}
    coproduct = Coproduct({v: rubrics[r] for v, r in choices.items()}, selector, rubrics[default] if default else None)
    routed: dict[str, list[str]] = {ref: [] for ref in refs_used}
    rows = []
    store = Store(warehouse)
    texts = store.execute_fn(steps.route_texts, corpus)
    if not texts:
        raise InputError(f"corpus {corpus!r} has no texts to route (see `rubricflow ingest`)")
    for text_id, genre, metadata in texts:
        record = {"genre": genre, "metadata": json.loads(metadata) if metadata else {}}
        try:
            choice, rubric = coproduct.choose(record)
        except AlgebraError as exc:
            raise InputError(f"corpus {corpus!r}, text {text_id!r}: {exc}") from None
        ref = ref_of[id(rubric)]
        routed[ref].append(text_id)
        rows.append((text_id, coproduct.value(record), choice, hashes[ref]))
    if choices and all(value in (None, "") for _, value, _, _ in rows):  # a misspelt key: all to the default
        raise InputError(
            f"--route {selector}: no text of corpus {corpus!r} has a value there, so no choice "
            f"({', '.join(sorted(choices))}) could take any; is the field spelt as the texts have it?"
        )
    store.execute_fn(check_routed_inputs, corpus, {ref: (bundles[ref], ids) for ref, ids in routed.items()})
    store.execute_write_fn(steps.record_routes, corpus, selector, rows)
    return routed


def check_routed_inputs(con, corpus: str, routes: dict[str, tuple[Bundle, list[str]]]) -> None:
    """Each text against the required inputs of the rubric it is routed to, and only that one
    (context only on the RAG texts is a mixed corpus, not an error), before any route is judged."""
    from rubricflow.tasks.pipeline.score import check_required_inputs

    for ref, (bundle, text_ids) in routes.items():
        if not text_ids:
            continue
        try:
            check_required_inputs(con, corpus, bundle, text_ids)
        except InputError as exc:
            raise InputError(f"--route: the texts routed to {ref}: {exc}") from None


def score_routed(
    warehouse: Path,
    corpus: str,
    refs: list[str],
    selector: str,
    judge: JudgeConfig,
    options: RunOptions | None = None,
    workers: int = 0,
) -> list[dict]:
    """Route the corpus's texts, then score each rubric on its own texts (a rubric no text chose
    makes no run). The run summaries, one per rubric that judged."""
    from rubricflow.flows.score import scoring_flow

    routed = route_corpus(warehouse, corpus, refs, selector)
    return [
        scoring_flow(workers)(corpus, ref, str(warehouse), judge, options or RunOptions(), workers=workers, texts=texts)
        for ref, texts in routed.items()
        if texts
    ]
