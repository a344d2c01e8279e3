"""`improve evolve` as one Prefect flow: rounds of pick the criterion that agrees least with the
humans (training texts), ask the reflection model for mutations, judge the candidate (only the cells
of changed criteria: the rest are adopted by unit fingerprint), and keep it only if the agreement on
the validation texts improves. The test texts are read once, for the final version. Every round is
recorded in `evolution_rounds`; the same command again resumes.
"""

# No `from __future__ import annotations` here: a deployment's run builds the flow's parameter model
# from the annotations, and there a string `JudgeConfig` cannot be resolved (see flows/score.py).
import json
from dataclasses import dataclass, field
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from rubricflow.flows import evolve_meta
from rubricflow.flows.score import score_corpus
from rubricflow.rubrics.compiler import Bundle, compile_or_raise
from rubricflow.rubrics.documents import rubric_to_data
from rubricflow.rubrics.formats import dump_yaml
from rubricflow.rubrics.library import resolve
from rubricflow.rubrics.model import Rubric
from rubricflow.tasks.improve import coevolve, evolve, invariants, objectives, reflect
from rubricflow.tasks.improve.objectives import Objectives
from rubricflow.tasks.judging.chat import ask
from rubricflow.tasks.judging.config import JudgeConfig
from rubricflow.tasks.judging.run_options import RunOptions
from rubricflow.tasks.judging.verify import AnswerError
from rubricflow.tasks.runtime.progress import notify
from rubricflow.warehouse.store import Store


@task(name="propose-mutations", cache_policy=NO_CACHE)
def propose(
    reflect_config: JudgeConfig, messages: list[dict], parent: Bundle, invariants: bool = False
) -> tuple[list[dict], Bundle] | reflect.Tried:
    """Ask the reflection model: the mutations and the candidate, or the refusal (why, and what it
    proposed, if that could be read: an expected outcome, not a failed task)."""
    try:
        return reflect.candidate(parent.rubric, ask(reflect_config, messages), invariants)
    except reflect.ReflectionRefused as exc:
        return reflect.Tried(exc.mutations, "refused", str(exc))
    except AnswerError as exc:  # no usable text (null message, no choices, cut off): a refused round
        return reflect.Tried(None, "refused", f"the reflection model's answer was unusable ({exc.kind}): {exc}")


def unless_set(config: JudgeConfig, **defaults) -> JudgeConfig:
    """`config` with `defaults` for the fields its maker left unset (the user's options name only
    what they chose: an unset strategy is evolve's own default, not JudgeConfig's)."""
    return JudgeConfig(**{**defaults, **config.model_dump(exclude_unset=True)})


@dataclass
class Evolution:
    """One evolution's fixed settings and where it stands."""

    eid: str
    corpus_id: str
    warehouse_path: str
    judge_config: JudgeConfig
    reflect_config: JudgeConfig
    target: str
    where: dict
    split: evolve.Split
    folder: Path
    shard_size: int
    start: Bundle
    first_calls: int
    recorded: dict[int, dict]
    best: Bundle = None  # type: ignore[assignment]
    settings: Objectives = field(default_factory=Objectives)
    options: dict = field(default_factory=dict)  # minibatch, invariants, gate, co_evolve
    points: dict[str, dict] = field(default_factory=dict)  # validation objectives of each version scored
    meta: coevolve.Meta = field(default_factory=coevolve.Meta)  # the search's meta-components in force
    meta_rows: dict[int, dict] = field(default_factory=dict)  # meta rounds recorded (--co-evolve)
    meta_history: list[dict] = field(default_factory=list)
    versions: dict[str, Rubric] = field(default_factory=dict)  # every version seen, by hash
    spent: int = 0
    spent_now: int = 0
    history: list[dict] = field(default_factory=list)

    @property
    def store(self) -> Store:
        return Store(self.warehouse_path)

    def metric(self, rubric_hash: str, texts: list[str]) -> float | None:
        look = dict(rubric_hash=rubric_hash, judge_hash=self.judge_config.judge_hash(), texts=texts, **self.where)
        return self.store.execute_fn(evolve.metric, **look)

    def values(self, rubric_hash: str, texts: list[str]) -> objectives.Values:
        """Every objective of one version on one split."""
        look = dict(rubric_hash=rubric_hash, judge_hash=self.judge_config.judge_hash(), texts=texts, **self.where)
        rows = self.store.execute_fn(evolve.objective_rows, **look)
        return objectives.compute(rows, per_criterion=self.options.get("rubrify", False))

    def remember(self, version: Bundle) -> Bundle:
        self.versions[version.hash] = version.rubric
        return version

    def point(self, rubric_hash: str) -> objectives.Values:
        """A version's validation objectives, computed once."""
        if rubric_hash not in self.points:
            self.points[rubric_hash] = self.values(rubric_hash, self.split.validation)
        return self.points[rubric_hash]


@flow(name="evolve-rubric", log_prints=True)
def evolve_flow(
    corpus_id: str,
    rubric: str,
    warehouse_path: str,
    raters: list[str],
    label: str = "overall",
    judge: JudgeConfig | None = None,
    reflection: JudgeConfig | None = None,
    max_rounds: int = 3,
    max_calls: int | None = None,
    seed: int = 0,
    validation_share: float = 0.2,
    test_share: float = 0.2,
    output_dir: str = ".",
    shard_size: int = 2000,
    settings: dict | None = None,
    options: dict | None = None,
) -> dict:
    """`judge` and `reflection`: the two models (a field left unset: the judge makes per_criterion
    calls, so a candidate re-judges only its changed criteria; the reflection model is the judge's
    model at the judge's endpoint). `max_calls` stops before a round once the judge calls spent reach it. `settings`:
    Objectives fields (weights, select, tolerances); `options`: minibatch (examples shown, 12),
    invariants (only text and weights evolve), gate (the lattice validators judge each proposal),
    rubrify (seed 001's evolve_rubric: agreement per criterion with the labels of the rubric's criteria,
    candidates kept by the objectives, and a train / validation split of any size, `test_share` unused)."""
    logger = get_run_logger()
    shares = (validation_share, test_share)
    chosen = Objectives(**(settings or {}))
    opts = {
        "minibatch": 12,
        "invariants": False,
        "gate": False,
        "co_evolve": False,
        "rubrify": False,
        **(options or {}),
    }
    ev = _begin(
        corpus_id, rubric, warehouse_path, raters, label, judge, reflection, seed, shares, shard_size, chosen, opts
    )
    ev.folder = Path(output_dir)
    (ev.folder / "candidates").mkdir(parents=True, exist_ok=True)
    turns = coevolve.components(opts["gate"]) if opts["co_evolve"] else ("target",)
    ev.meta = coevolve.Meta(acceptance=dict(chosen.tolerances))
    ev.meta_rows = ev.store.execute_fn(coevolve.recorded, ev.eid) if opts["co_evolve"] else {}
    ev.versions[ev.start.hash] = ev.start.rubric
    ev.point(ev.start.hash)  # first: the Pareto front lists versions in the order scored, on a replay too
    for number in range(1, max_rounds + 1):
        if (name := coevolve.component(number, turns)) != "target":
            evolve_meta.meta_round(ev, number, name, logger)  # costs no judge call
            continue
        row = ev.recorded.get(number)
        if row and row["status"] in evolve.FINISHED:  # done before this run: replay its outcome
            ev.spent += row["calls"] or 0
            if row["candidate_hash"] and row["status"] != "refused":
                ev.points[row["candidate_hash"]] = ev.values(row["candidate_hash"], ev.split.validation)
                ev.remember(evolve.rubric_of(row))
            ev.best = evolve.rubric_of(row) if row["status"] == "accepted" else ev.best
            ev.history.append(_slim(row))
            continue
        if max_calls is not None and ev.spent >= max_calls:
            logger.info("stopping before round %s: %s judge calls spent (--max-calls %s)", number, ev.spent, max_calls)
            break
        _round(ev, number, row, logger)
    return _finish(ev)


def _begin(
    corpus_id: str,
    rubric: str,
    warehouse_path: str,
    raters: list[str],
    label: str,
    judge: JudgeConfig | None,
    reflection: JudgeConfig | None,
    seed: int,
    shares: tuple[float, float],
    shard_size: int,
    settings: Objectives,
    options: dict,
) -> Evolution:
    """Score the starting version, register the evolution (keyed by every setting that changes its
    answers) and split the labelled texts."""
    judge_config = unless_set(judge or JudgeConfig(), strategy="per_criterion")
    reflect_config = unless_set(reflection or JudgeConfig(), base_url=judge_config.base_url, model=judge_config.model)
    start = compile_or_raise(resolve(rubric), source=rubric)
    target = f"{','.join(raters)}:{label}"
    validation_share, test_share = shares
    key = (seed, validation_share, test_share, reflect_config.judge_hash())
    extra = settings.key() + _options_key(options)
    eid = evolve.evolution_id(corpus_id, start.hash, judge_config.judge_hash(), target, *key, extra=extra)
    first = score_corpus(corpus_id, rubric, warehouse_path, judge_config, RunOptions(shard_size=shard_size))
    store = Store(warehouse_path)
    store.execute_write(
        "register_evolution.sql",
        evolution=eid,
        corpus=corpus_id,
        rubric=start.hash,
        judge=judge_config.judge_hash(),
        target=target,
        seed=seed,
        share=validation_share,
        test_share=test_share,
        reflection_model=reflect_config.model,
        reflection_hash=reflect_config.judge_hash(),
    )
    if options["rubrify"]:
        texts = store.execute_fn(evolve.train_validation_split, corpus_id, raters, label, seed, validation_share)
    else:
        texts = store.execute_fn(evolve.split, corpus_id, raters, label, seed, validation_share, test_share)
    recorded = store.execute_fn(evolve.rounds, eid)
    where = dict(corpus=corpus_id, raters=raters, label=label)
    return Evolution(
        eid,
        corpus_id,
        warehouse_path,
        judge_config,
        reflect_config,
        target,
        where,
        texts,
        Path("."),
        shard_size,
        start,
        first["calls"],
        recorded,
        best=start,
        settings=settings,
        options=options,
    )


def _options_key(options: dict) -> str:
    """What the evolution id adds for the options: nothing for the defaults, nor for co_evolve or rubrify
    off (so evolutions started before them keep their ids)."""
    keyed = {k: v for k, v in options.items() if k not in ("co_evolve", "rubrify") or v}
    return "" if keyed == {"minibatch": 12, "invariants": False, "gate": False} else json.dumps(sorted(keyed.items()))


def _round(ev: Evolution, number: int, row: dict | None, logger) -> None:
    """One round: the least-agreeing criterion on the training texts, a proposal (or the one a killed
    run recorded), the candidate judged, kept if the validation r improves."""
    judge_hash = ev.judge_config.judge_hash()
    before = ev.metric(ev.best.hash, ev.split.validation)
    look = dict(rubric_hash=ev.best.hash, judge_hash=judge_hash, texts=ev.split.train, **ev.where)
    criterion, agreement = ev.store.execute_fn(evolve.least_agreeing, **look)
    shown = ev.store.execute_fn(evolve.examples, criterion=criterion, limit=ev.options["minibatch"], **look)
    base = dict(
        evolution=ev.eid,
        round=number,
        parent=ev.best.hash,
        criterion=criterion,
        metric_before=before,
        metric_after=None,
        calls=None,
        full_rescore_calls=None,
        changed_criteria=None,
        total_criteria=None,
        run_id=None,
    )
    if row is None:
        row = _propose(ev, base, criterion, agreement, shown, logger)
        if row is None:
            return
    candidate = ev.remember(evolve.rubric_of(row))
    path = ev.folder / "candidates" / f"{candidate.id}@{candidate.version}-{candidate.hash[:12]}.yaml"
    path.write_text(dump_yaml(candidate.rubric), encoding="utf-8")
    notify("evolve", {"round": number, "criterion": criterion, "candidate": candidate.hash})
    run = score_corpus(
        ev.corpus_id, str(path), ev.warehouse_path, ev.judge_config, RunOptions(shard_size=ev.shard_size)
    )
    after = ev.metric(candidate.hash, ev.split.validation)
    why_not = _decide(ev, candidate.hash, before, after)
    accepted = why_not is None
    outcome = {
        **base,
        "status": "accepted" if accepted else "rejected",
        "reason": why_not,
        "mutations": row["mutations"],
        "candidate_hash": candidate.hash,
        "candidate": row["candidate"],
        "metric_after": after,
        "calls": run["calls"],
        "full_rescore_calls": run["planned_cells"],
        "changed_criteria": evolve.changed(ev.best.rubric, candidate.rubric),
        "total_criteria": len(candidate.rubric.criteria),
        "run_id": run["run_id"],
    }
    ev.store.execute_write_fn(evolve.record, **outcome)
    logger.info(
        "round %s: %s %s (validation r %s -> %s), %s judge calls",
        number,
        criterion,
        outcome["status"],
        before,
        after,
        run["calls"],
    )
    ev.spent, ev.spent_now = ev.spent + run["calls"], ev.spent_now + run["calls"]
    ev.history.append(_slim(outcome))
    ev.best = candidate if accepted else ev.best


def _decide(ev: Evolution, candidate: str, before: float | None, after: float | None) -> str | None:
    """None if the candidate is kept, else why not: by default its validation r must rise; with
    objectives (always under rubrify), tasks/improve/objectives.refusal decides on every objective's
    validation figure."""
    ev.points.setdefault(ev.best.hash, ev.values(ev.best.hash, ev.split.validation))
    ev.points[candidate] = ev.values(candidate, ev.split.validation)
    if not ev.settings.default or ev.options.get("rubrify"):
        return objectives.refusal(ev.points[ev.best.hash], ev.points[candidate], ev.settings)
    improved = after is not None and (before is None or after > before + objectives.NOISE)
    return None if improved else "the validation agreement did not improve"


def _screen(ev: Evolution, candidate: Bundle) -> str | None:
    """Before a candidate is scored: with --invariants, its structure must be the parent's; with --gate,
    the lattice validator rubrics (tasks/improve/lattice.py) judge parent and candidate, and a candidate
    that lowers any property is refused. None: it may be scored."""
    if ev.options["invariants"] and (broken := invariants.broken(ev.best.rubric, candidate.rubric)):
        return broken
    if ev.options["gate"]:
        gate = getattr(ev, "meta", coevolve.Meta()).gate  # co-evolved (--co-evolve), else every property, no slack
        return coevolve.gate_refusal(
            ev.best.rubric, candidate.rubric, gate, ev.reflect_config, ev.folder / ".gate.jsonl"
        )
    return None


def _propose(ev: Evolution, base: dict, criterion: str, agreement: dict, shown: list, logger) -> dict | None:
    """Ask for mutations and record the proposal before its candidate is judged (a killed run
    resumes it); None, with the round recorded as refused, when the answer cannot be used."""
    tried = [
        reflect.Tried(json.loads(r["mutations"]) if r["mutations"] else None, r["status"], r["reason"] or "")
        for r in ev.history
        if r["status"] in ("rejected", "refused") and r["parent"] == ev.best.hash and r["criterion"] == criterion
    ]
    invariant = ev.options["invariants"]
    messages = reflect.messages(
        ev.best.rubric, criterion, agreement, shown, ev.target, tried, ev.meta.template, invariant
    )
    proposal = propose(ev.reflect_config, messages, ev.best, invariant)
    if not isinstance(proposal, reflect.Tried) and (screened := _screen(ev, proposal[1])):
        proposal = reflect.Tried(proposal[0], "refused", screened)
    if isinstance(proposal, reflect.Tried):  # fed back to the next round's reflection for this criterion
        logger.warning("round %s: the reflection answer was refused: %s", base["round"], proposal.reason)
        refused_mutations = json.dumps(proposal.mutations) if proposal.mutations else None
        refused = {**base, "status": "refused", "reason": proposal.reason, "mutations": refused_mutations}
        ev.store.execute_write_fn(evolve.record, **refused, candidate_hash=None, candidate=None)
        ev.history.append(_slim({**refused, "calls": 0}))
        return None
    mutations, candidate = proposal
    row = {
        **base,
        "status": "proposed",
        "reason": None,
        "mutations": json.dumps(mutations),
        "candidate_hash": candidate.hash,
        "candidate": json.dumps(rubric_to_data(candidate.rubric)),
    }
    ev.store.execute_write_fn(evolve.record, **row)
    return row


def _finish(ev: Evolution) -> dict:
    """The best version's file, and the figures: validation r of the start and the best (what the
    rounds were accepted on), and test r of both, read here once and never selected on."""
    final = ev.folder / f"{ev.best.id}@{ev.best.version}.yaml"
    final.write_text(dump_yaml(ev.best.rubric), encoding="utf-8")
    figures = {
        "validation_start": ev.metric(ev.start.hash, ev.split.validation),
        "validation_best": ev.metric(ev.best.hash, ev.split.validation),
        "test_start": ev.metric(ev.start.hash, ev.split.test),
        "test_best": ev.metric(ev.best.hash, ev.split.test),
    }
    per_objective = _objective_figures(ev)
    ev.store.execute_write("finish_evolution.sql", evolution=ev.eid, best=ev.best.hash, **figures)
    if ev.options["co_evolve"]:  # the evolved meta-components beside the best version
        co = {**ev.meta.as_data(), "rounds": ev.meta_history}
        (ev.folder / "co-evolved.json").write_text(json.dumps(co, indent=2) + "\n", encoding="utf-8")
        per_objective["co_evolution"] = {**co, "file": str(ev.folder / "co-evolved.json")}
    return {
        "evolution_id": ev.eid,
        "start": ev.start.hash,
        "best": ev.best.hash,
        "best_file": str(final),
        "first_run_calls": ev.first_calls,
        "rounds": ev.history,
        "calls": ev.spent,
        "calls_this_run": ev.spent_now,
        "training_texts": len(ev.split.train),
        "validation_texts": len(ev.split.validation),
        "test_texts": len(ev.split.test),
        **figures,
        **per_objective,
    }


def _objective_figures(ev: Evolution) -> dict:
    """Every objective on validation (what rounds were accepted on) and on test (read here, once, for
    the start, the best and the Pareto front of the versions scored; never selected on)."""
    ev.points.setdefault(ev.start.hash, ev.values(ev.start.hash, ev.split.validation))
    ev.points.setdefault(ev.best.hash, ev.values(ev.best.hash, ev.split.validation))
    names = list(ev.settings.weights)
    members = objectives.front(ev.points, names)
    shown = dict.fromkeys([ev.start.hash, ev.best.hash, *members])
    test = {h: ev.values(h, ev.split.test) for h in shown}
    return {
        "objectives": {
            "weights": ev.settings.weights,
            "select": ev.settings.select,
            "tolerances": ev.settings.tolerances,
            "validation": {"start": ev.points[ev.start.hash], "best": ev.points[ev.best.hash]},
            "test": {"start": test[ev.start.hash], "best": test[ev.best.hash]},
        },
        "front": [{"version": h, "validation": ev.points[h], "test": test[h]} for h in members],
    }


def _slim(row: dict) -> dict:
    """A round as the flow returns it: everything but the candidate's document."""
    keep = (
        "round",
        "status",
        "reason",
        "mutations",
        "candidate_hash",
        "metric_before",
        "metric_after",
        "calls",
        "full_rescore_calls",
        "changed_criteria",
        "total_criteria",
        "run_id",
    )
    return {
        **{k: row.get(k) for k in keep},
        "criterion": row.get("criterion", row.get("criterion_id")),
        "parent": row.get("parent", row.get("parent_hash")),
    }
