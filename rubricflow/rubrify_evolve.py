"""rubrify's evolution API (seed 001: `AnnotatedExample`, `evolve_rubric`, `RubricEvolutionConfig`,
`evolve_rubric_v3`, `CoEvolutionConfig`) on rubricflow's `improve evolve`: the annotated examples
become a corpus and its human labels in a warehouse of their own, the same Prefect flow evolves the
rubric, and the result carries rubrify's field names. Re-exported by `rubricflow.rubrify`."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubricflow.errors import InputError
from rubricflow.rubrics import model as ir
from rubricflow.rubrics.formats import load_rubric

# The label every example carries, the mean of its human_scores: the texts split are those it labels, and
# each round reflects on the criterion agreeing least with it (the objectives use the criteria's own labels).
TARGET = "overall"


@dataclass(frozen=True)
class AnnotatedExample:
    id: str
    response_text: str
    context_text: str | None = None
    human_scores: dict[str, float] = field(default_factory=dict)  # criterion id -> the human's score
    human_label: str | None = None
    genre: str | None = None


@dataclass(frozen=True)
class RubricEvolutionConfig:
    """rubrify's settings, with its defaults: `train_split` trains, the rest validates (no test part),
    `max_metric_calls` bounds the judge calls, the three weights are the objectives' (tasks/improve/
    objectives.py), `consistency_runs` > 1 asks the judge that many samples per criterion (consistency
    is measured across them). `max_rounds` is rubricflow's: how many reflection rounds at most."""

    train_split: float = 0.7
    max_metric_calls: int | None = 200
    reflection_minibatch_size: int = 3
    agreement_weight: float = 0.6
    consistency_weight: float = 0.2
    discrimination_weight: float = 0.2
    consistency_runs: int = 1
    max_rounds: int = 3
    seed: int = 42
    invariants: bool = True  # rubrify never changes the structure

    def __post_init__(self) -> None:
        if not 0 < self.train_split <= 1:
            raise InputError(f"RubricEvolutionConfig: train_split must be in (0, 1], not {self.train_split}")
        if self.consistency_runs < 1:
            raise InputError(f"RubricEvolutionConfig: consistency_runs must be 1 or more, not {self.consistency_runs}")


@dataclass(frozen=True)
class CoEvolutionConfig(RubricEvolutionConfig):
    max_metric_calls: int | None = 500  # rubrify's: co-evolution has more components
    evolve_gate: bool = True
    evolve_reflection_templates: bool = True
    evolve_acceptance_params: bool = True


@dataclass(frozen=True)
class EvolutionResult:
    best_rubric: ir.Rubric
    best_role: ir.Role
    best_score: float | None  # the weighted objectives of the best version on validation
    total_iterations: int
    report: dict  # the flow's own report: rounds, figures on validation and test, the front
    evolved_gate_rubric: Any = None  # evolve_rubric_v3 only: the co-evolved meta-components
    evolved_reflection_templates: Any = None
    evolved_acceptance_params: Any = None


def evolve_rubric(
    seed_rubric: ir.Rubric,
    annotated_dataset: list[AnnotatedExample],
    judge_model: Any,
    reflection_model: Any = None,
    role: ir.Role | None = None,
    config: RubricEvolutionConfig | None = None,
) -> EvolutionResult:
    """Evolve `seed_rubric` towards the humans' scores of `annotated_dataset` (any number of examples)."""
    return _evolve(
        seed_rubric, annotated_dataset, judge_model, reflection_model, role, config or RubricEvolutionConfig()
    )


def evolve_rubric_v3(
    seed_rubric: ir.Rubric,
    annotated_dataset: list[AnnotatedExample],
    judge_model: Any,
    reflection_model: Any = None,
    role: ir.Role | None = None,
    config: CoEvolutionConfig | None = None,
) -> EvolutionResult:
    """`evolve_rubric` whose rounds take turns with the search's meta-components (`--co-evolve`)."""
    return _evolve(seed_rubric, annotated_dataset, judge_model, reflection_model, role, config or CoEvolutionConfig())


def judge_options(
    model: Any,
    temperature: float = 0.0,
    max_tokens: int = 2048,
    parallel: bool = False,
    use_tool: bool | None = None,
) -> dict[str, Any]:
    """The rf.Judge options of a harn_ai model record and rubrify's JudgeConfig settings. `use_tool`:
    True asks for a tool call where the provider takes tools (rubrify's tool-based strategy), False
    for JSON in plain text (its text-based one), None leaves rubricflow's negotiation (auto)."""
    from rubricflow.tasks.judging.providers import provider

    name = model.provider if model.provider in ("anthropic", "gemini", "azure") else "openai"
    tools = use_tool and "tools" in provider(name).capabilities.output_modes
    return {
        "base_url": model.baseUrl,
        "model": model.id,
        "provider": name,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "max_in_flight": 64 if parallel else 1,
        "output_mode": "tools" if tools else "text" if use_tool is False else "auto",
    }


def _evolve(rubric, examples, judge_model, reflection_model, role, config) -> EvolutionResult:
    """`improve evolve`'s flow on the examples, under rubrify's rules (its option `rubrify`): agreement
    per criterion, candidates kept by the weighted objectives, a train / validation split."""
    import rubricflow as rf
    from rubricflow.tasks.improve.objectives import weighted

    if role is not None:
        rubric = rubric.model_copy(update={"role": role})
    folder = Path(tempfile.mkdtemp(prefix="rubrify-evolve-"))
    warehouse = rf.Warehouse(folder / "evolve.duckdb")
    texts, labels = _corpus(examples)
    columns: dict[str, Any] = {k: k for k in ("context", "genre") if k in texts[0]}
    warehouse.ingest(texts, corpus="annotated", **columns)
    warehouse.import_labels(labels, corpus="annotated")
    judge = rf.Judge(**judge_options(judge_model, parallel=True), samples=config.consistency_runs)
    reflection = rf.Judge(**judge_options(reflection_model)) if reflection_model is not None else None
    weights = {
        "agreement": config.agreement_weight,
        "consistency": config.consistency_weight,
        "discrimination": config.discrimination_weight,
    }
    weights = {k: w for k, w in weights.items() if w > 0} or {"agreement": 1.0}
    co = isinstance(config, CoEvolutionConfig)
    options = {"minibatch": config.reflection_minibatch_size, "invariants": config.invariants, "rubrify": True}
    options |= {"co_evolve": co, "gate": co and config.evolve_gate}
    report = _run_flow(warehouse.path, rf.load_rubric(rubric), judge, reflection, config, weights, options)
    best = load_rubric(Path(report["best_file"]))
    meta = report.get("co_evolution") or {}
    return EvolutionResult(
        best_rubric=best,
        best_role=best.role,
        best_score=weighted(report["objectives"]["validation"]["best"], weights),
        total_iterations=len(report["rounds"]),
        report=report,
        evolved_gate_rubric=meta.get("gate_rubric") if co and config.evolve_gate else None,
        evolved_reflection_templates=meta.get("reflection_template")
        if co and config.evolve_reflection_templates
        else None,
        evolved_acceptance_params=meta.get("acceptance") if co and config.evolve_acceptance_params else None,
    )


def _run_flow(path: Path, bundle, judge, reflection, config, weights: dict, options: dict) -> dict:
    """The evolve flow itself, as rf.Warehouse.evolve runs it, with the option `rubrify` that it does
    not pass on: `1 - train_split` of the texts validate, none are held out for test."""
    from rubricflow.api_rubric import flow_reference
    from rubricflow.cli.flow_start import start_flows

    start_flows()
    from rubricflow.flows.evolve import evolve_flow

    return evolve_flow(
        "annotated", flow_reference(bundle, path.parent / "rubrics"), str(path), ["human"], TARGET, judge.config,
        reflection.config if reflection else None, config.max_rounds, config.max_metric_calls, config.seed,
        1 - config.train_split, 0.0, str(path.parent / f"evolve-{bundle.id}"), settings={"weights": weights},
        options=options,
    )  # fmt: skip


def _corpus(examples: list[AnnotatedExample]) -> tuple[list[dict], list[dict]]:
    """The examples as texts, and their human scores as labels (each criterion's, and their mean as
    the evolution's target)."""
    if not examples or any(not e.human_scores for e in examples):
        raise InputError("evolve_rubric: every AnnotatedExample needs human_scores ({criterion_id: score})")
    texts = []
    for e in examples:
        row = {"id": e.id, "text": e.response_text}
        if any(x.context_text for x in examples):
            row["context"] = e.context_text or ""
        if any(x.genre for x in examples):
            row["genre"] = e.genre or ""
        texts.append(row)
    labels = [
        {"text_id": e.id, "criterion": cid, "score": float(score)}
        for e in examples
        for cid, score in e.human_scores.items()
    ]
    labels += [
        {"text_id": e.id, "criterion": TARGET, "score": sum(e.human_scores.values()) / len(e.human_scores)}
        for e in examples
    ]
    return texts, labels
