"""`rf.Judge`: the judge engine called in-process, one text or many, no warehouse.

Every call goes through the same hardened client as the scoring flow (tasks/judging: retries,
output-mode fallback, re-asks, deadline, rate limits, secret scrubbing), run on the process's
judge loop in its own thread (tasks/judging/shard.Worker). So a sync call also works inside a
running event loop (Jupyter): it waits on that thread, never on the caller's loop.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubricflow.api_results import CriterionScore, Result, Results, Usage
from rubricflow.api_rubric import CompiledRubric, RubricLike, load_rubric
from rubricflow.errors import InputError
from rubricflow.rubrics.compiler import Bundle
from rubricflow.tasks.judging.config import OFFLINE_MODEL, JudgeConfig, checked_config

OnStart = Callable[[str], Any]
OnDone = Callable[[CriterionScore], Any]
# (items, their results, their calls' outcomes, None) or (items, None, [], the error they get)
Settle = Callable[[list["Item"], "Results | None", list[Any], "BaseException | None"], Any]


@dataclass(frozen=True)
class Item:
    """One text to judge, as `evaluate_many` takes it."""

    text_id: str
    text: str
    input: str | None = None
    context: str | None = None
    genre: str | None = None


class Judge:
    """A judge setup: the options of `rubricflow score` (model, base_url, provider, strategy,
    samples, temperature, seed, max_tokens, rpm, tpm, max_in_flight, timeout_s, output_mode,
    system_prompt, logprobs, prices, ...), checked as one `JudgeConfig`. The API key comes from
    the provider's usual environment variable, chosen by the base URL's host (GROQ_API_KEY for
    api.groq.com, ...; tasks/judging/providers/keys.py), else OPENAI_API_KEY; never an argument."""

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        strategy: str | None = None,
        **options: Any,
    ) -> None:
        given = {"base_url": base_url, "model": model, "provider": provider, "strategy": strategy, **options}
        self.settings: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        self.config: JudgeConfig = checked_config(self.settings)
        self._server: Any = None
        self._price: tuple[Any, Any] | None = None  # (the price file's path and bytes, the model's price)
        self._engines: dict[tuple, Any] = {}  # (run id, client key) -> its engine, for this object's life
        self._runs: dict[str, tuple[Bundle, JudgeConfig, Any]] = {}  # rubric hash -> (bundle, config, its run)

    @classmethod
    def offline(cls, **options: Any) -> Judge:
        """A judge on the offline stand-in (`rubricflow judge-server`), served from a thread of this
        process on 127.0.0.1 until `close()`: for trying the API and for tests, no model needed."""
        from rubricflow.tasks.standins.judge_server import RunningServer

        server = RunningServer().__enter__()
        judge = cls(base_url=server.base_url, **options)
        judge._server = server
        return judge

    def close(self) -> None:
        """Stop the offline judge this Judge started, if any."""
        if self._server is not None:
            self._server.__exit__(None, None, None)
            self._server = None

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self.config.resolved_base_url() or "the provider's API"
        return f"<Judge {self.config.model} at {where}, {self.config.strategy}>"

    def evaluate(
        self,
        rubric: RubricLike,
        text: str,
        context: str | None = None,
        genre: str | None = None,
        on_criterion_start: OnStart | None = None,
        on_criterion_done: OnDone | None = None,
        input: str | None = None,
        text_id: str = "text",
    ) -> Result:
        """Judge one text now and return its verdict; callbacks run in the calling thread, before
        each criterion's call is sent and as each one's answer is read."""
        bundle, item = load_rubric(rubric), _item(text_id, text, input, context, genre)
        cells = self._cells(bundle, [item])
        _started(self._engine(bundle), cells, on_criterion_start)
        futures = {self._submit(bundle, [cell]): cell for cell in cells}
        outcomes = []
        try:
            for future in as_completed(futures):
                got = future.result()
                outcomes.extend(got)
                _done(bundle, item, got, on_criterion_done)
        except BaseException:  # an interrupt: the calls not yet answered are cancelled
            for future in futures:
                future.cancel()
            raise
        refuse_unanswered(outcomes)
        return self._result(bundle, item, outcomes)

    async def aevaluate(
        self,
        rubric: RubricLike,
        text: str,
        context: str | None = None,
        genre: str | None = None,
        on_criterion_start: OnStart | None = None,
        on_criterion_done: OnDone | None = None,
        input: str | None = None,
        text_id: str = "text",
    ) -> Result:
        """`evaluate` for async code: awaits the judge loop's answers without blocking the caller's loop."""
        bundle, item = load_rubric(rubric), _item(text_id, text, input, context, genre)
        cells = self._cells(bundle, [item])
        _started(self._engine(bundle), cells, on_criterion_start)
        waits = [asyncio.wrap_future(self._submit(bundle, [cell])) for cell in cells]
        outcomes = []
        for next_done in asyncio.as_completed(waits):
            got = await next_done
            outcomes.extend(got)
            _done(bundle, item, got, on_criterion_done)
        refuse_unanswered(outcomes)
        return self._result(bundle, item, outcomes)

    def evaluate_many(self, rubric: RubricLike, texts: Iterable[str | Mapping[str, Any]]) -> Results:
        """Judge many texts concurrently (up to max_in_flight calls at once), results in their order.
        A text is a string, or a mapping with `text` and optionally `id`, `input`, `context`, `genre`."""
        bundle, items = load_rubric(rubric), _items(texts)
        return self._results(bundle, items, self._submit(bundle, self._cells(bundle, items)).result())

    async def aevaluate_many(self, rubric: RubricLike, texts: Iterable[str | Mapping[str, Any]]) -> Results:
        bundle, items = load_rubric(rubric), _items(texts)
        return (await self._judge_items(bundle, items))[0]

    async def _judge_items(self, bundle: Bundle, items: list[Item]) -> tuple[Results, list[Any]]:
        """The items' results and the outcomes of their calls (the reward server records those).
        On the judge loop itself (the reward server), awaited there: no hop through another thread's
        future and back for a loop that is already the one the calls run on."""
        from rubricflow.tasks.judging.shard import Worker

        judged = self._judged(bundle, self._cells(bundle, items))
        if asyncio.get_running_loop() is Worker.get().loop:
            outcomes = await judged
        else:
            outcomes = await asyncio.wrap_future(Worker.get().submit(judged))
        return self._results(bundle, items, outcomes), outcomes

    async def _judge_items_as_answered(self, bundle: Bundle, items: list[Item], settle: Settle) -> None:
        """The items' results handed to `settle(items, results, outcomes, error)` as their calls are
        answered: the items answered in one turn of the judge loop together (one `_results` for them:
        patterns, price and keys read once, the refusal check over their calls), never held for the
        slowest call of all `items`. The reward server's batches held every rollout for the batch's
        slowest call: at 512 requests in flight they grew to ~140 rollouts, the answers came back
        together and the next requests came in together (#55). An item whose call raised gets its
        error alone. Off the judge loop: `_judge_items`, settled once."""
        from rubricflow.tasks.judging.shard import Worker

        if asyncio.get_running_loop() is not Worker.get().loop:
            settle(items, *await self._judge_items(bundle, items), None)
            return
        engine, cells = self._engine(bundle), self._cells(bundle, items)
        of_item: dict[str, list[Any]] = {item.text_id: [] for item in items}
        for cell in cells:
            of_item[cell.text_id].append(cell)
        answers = _Answers(self, bundle, items, settle)
        calls = [answers.follow(item, engine, of_item[item.text_id]) for item in items]
        try:
            await answers.finished
        except BaseException:  # cancelled: the calls still out go with it, as gather's did
            for call in calls:
                if call is not None:
                    call.cancel()
            raise

    def test(self, rubric: RubricLike) -> list[Any]:
        """Run the rubric's goldens (and calibration cases, `rf.load_calibration_cases`) through this
        judge, as `rubricflow rubric test` does: one GoldenResult each (`.ok`, `.mismatches`)."""
        from rubricflow.tasks.improve.goldens import run_goldens

        return run_goldens(load_rubric(rubric), self.config)

    # ------------------------------------------------------------------ the engine underneath

    def _engine(self, bundle: Bundle) -> Any:
        """The run's judge on the process's judge loop: one per rubric and Judge object (its prompts
        rendered once, its limiter, retry budget and output-mode fallback shared by every call), held
        by this object, so it goes with it (the process keeping it, a later Judge at the same address
        got this one's spent budget). A key set since is a new engine (its client is the key's)."""
        from rubricflow.tasks.judging.shard import Worker, judge_key
        from rubricflow.tasks.judging.stop_rule import StopRule

        if not self.config.resolved_base_url() and self.config.model == OFFLINE_MODEL:
            raise InputError(
                "no judge endpoint: pass base_url= (or set OPENAI_BASE_URL) and model=, or use rf.Judge.offline()"
            )
        run = self._run(bundle)
        key = judge_key(run)
        if key not in self._engines:
            self._engines[key] = Worker.get().build(run)
        engine = self._engines[key]
        if engine.stop_rule.why_not_send():  # an earlier call's outage stopped it: this call tries again
            engine.stop_rule = StopRule(engine.timeout_s)  # (a reward server is many runs, and lives past one)
        return engine

    def _run(self, bundle: Bundle) -> Any:
        """The run `bundle` is judged in, made again only for another bundle or config (its id
        dumps and hashes every setting: ~2% of a reward server batch's CPU, #55)."""
        from rubricflow.tasks.judging.run import Run

        made = self._runs.get(bundle.hash)
        if made is None or made[0] is not bundle or made[1] is not self.config:
            made = self._runs[bundle.hash] = (bundle, self.config, Run.outside("api", "api", bundle, self.config))
        return made[2]

    def _cells(self, bundle: Bundle, items: Sequence[Item]) -> list[Any]:
        from rubricflow.rubrics.render import call_units
        from rubricflow.tasks.judging.judge import Cell

        strategy = self.config.for_rubric(bundle.rubric).strategy
        units: dict[str | None, list[Any]] = {}  # per genre, once for the items (the same for each)
        cells = []
        for item in items:
            sha = hashlib.sha256(item.text.encode()).hexdigest()
            if item.genre not in units:
                units[item.genre] = call_units(bundle.rubric, strategy, item.genre)
            for unit in units[item.genre]:
                key = f"api-{item.text_id}-{unit.id}"
                cells.append(Cell(key, item.text_id, sha, unit.id, 0, item.text, item.input, item.context, item.genre))
        return cells

    def _submit(self, bundle: Bundle, cells: list[Any]) -> Future:
        """The cells' outcomes in their order, judged concurrently on the judge loop."""
        from rubricflow.tasks.judging.shard import Worker

        return Worker.get().submit(self._judged(bundle, cells))

    def _judged(self, bundle: Bundle, cells: list[Any]) -> Any:
        """The coroutine judging `cells` concurrently, to run on the judge loop; its engine found now."""
        engine = self._engine(bundle)

        async def judged() -> list[Any]:
            return list(await asyncio.gather(*(engine.judge(c) for c in cells)))

        return judged()

    def _results(
        self, bundle: Bundle, items: list[Item], outcomes: list[Any], price: Any = ..., keys: list[str] | None = None
    ) -> Results:
        """The items' Results from their calls' outcomes; `price` and `keys` (the model's price, the
        API keys scrubbed) read here when not given."""
        from rubricflow.tasks.judging.secrets import configured_keys

        refuse_unanswered(outcomes)
        by_text: dict[str, list[Any]] = {item.text_id: [] for item in items}
        for outcome in outcomes:
            if outcome is not None:
                by_text[outcome.completion["text_id"]].append(outcome)
        hits = patterns_of([item.text for item in items], bundle, verdict_patterns(bundle.rubric))
        # Once for the batch (reading the settings cost ~1 ms a text), or once for several: the caller's.
        price = self._model_price() if price is ... else price
        keys = configured_keys() if keys is None else keys
        return Results(
            self._result(bundle, item, by_text[item.text_id], hit, price, keys)
            for item, hit in zip(items, hits, strict=True)
        )

    def _result(
        self,
        bundle: Bundle,
        item: Item,
        outcomes: list[Any],
        hits: set[str] | None = None,
        price: Any = ...,
        keys: list[str] | None = None,
    ) -> Result:
        """The reference scorer's verdict over the outcomes of one text's calls (`hits`: the
        patterns of `verdict_patterns` that match the text, `price`: the model's, `keys`: the API
        keys scrubbed from its texts, each read here when not given)."""
        from rubricflow.rubrics.scoring import fixed, verdict
        from rubricflow.tasks.judging.secrets import configured_keys, scrub
        from rubricflow.tasks.judging.verify import hard_violations, judgment_problems

        keys = configured_keys() if keys is None else keys
        outcomes = [o for o in outcomes if o is not None]
        rubric = bundle.rubric
        judged = [j for o in outcomes for j in o.judgments]
        problems = judgment_problems(rubric, judged)  # once: the soft ones warn, the hard ones disqualify
        soft = tuple(f"{c.id}: {problem}" for c, problem in problems if c.severity == "soft")
        scores = {s.name: s for s in (_criterion(bundle, j, keys) for o in outcomes for j in o.judgments)}
        values = {name: s.value for name, s in scores.items() if s.status == "scored"}
        declared = {d for o in outcomes for d in o.completion["declared_disqualifiers"] or ()}
        matched = patterns_of([item.text], bundle, verdict_patterns(rubric))[0] if hits is None else hits
        v = verdict(rubric, values, item.genre, matched, declared, hard_violations(rubric, judged, problems))
        rows = [o.completion for o in outcomes]
        usage = Usage(
            sum(r["attempts"] or 0 for r in rows),
            sum(r["prompt_tokens"] or 0 for r in rows),
            sum(r["completion_tokens"] or 0 for r in rows),
        )
        return Result(
            rubric=f"{bundle.id}@{bundle.version}",
            text_id=item.text_id,
            score=v.score,
            label=v.label,
            passed=v.passed,
            disqualifiers=v.disqualified,
            criteria={
                c.id: scores[c.id] if c.id in scores else CriterionScore(c.id, None)  # made only where none was given
                for c in rubric.active_criteria(item.genre)
            },
            usage=usage,
            cost_usd=self._cost(rows, self._model_price() if price is ... else price),
            coverage=v.coverage,
            risk=fixed(1.0 - v.score) if bundle.profile == "detection" and v.score is not None else None,
            errors=tuple(scrub(r["error"], keys) or "" for r in rows if r["status"] != "ok"),
            warnings=soft
            + tuple(j.overruled for j in judged if j.overruled),  # the decision rules replaced its verdict
        )

    @staticmethod
    def _cost(rows: list[dict], price: Any) -> float | None:
        """USD of the calls at the model's price (None when no price is known: the offline judge)."""
        if price is None:
            return None
        return sum(
            price.cost(r["prompt_tokens"] or 0, r["completion_tokens"] or 0, r["cached_tokens"] or 0) for r in rows
        )

    def _model_price(self) -> Any:
        """The model's price, parsed again only when the price file (the option's, else
        RUBRICFLOW_PRICES) or its contents changed: a rate corrected in a notebook prices the next
        result, and a thousand results read one small file, not parse it a thousand times."""
        from rubricflow.settings import settings
        from rubricflow.tasks.judging.costs import price_of, price_table

        path = self.config.prices or settings().prices
        try:
            source = (path, Path(path).read_bytes() if path else None)
        except OSError:
            source = (path, None)  # price_table says what is wrong with it
        if self._price is None or self._price[0] != source:
            self._price = (source, price_of(self.config.model, price_table(path)))
        return self._price[1]


class _Answers:
    """The items of one `_judge_items_as_answered`, gathered as their calls are answered and settled
    once a loop turn: the first answer of a turn schedules the settling of all the turn's answers."""

    def __init__(self, judge: Judge, bundle: Bundle, items: list[Item], settle: Settle) -> None:
        self.judge, self.bundle, self.settle = judge, bundle, settle
        self.loop = asyncio.get_running_loop()
        self.finished: asyncio.Future = self.loop.create_future()
        self.left = len(items)
        self.ready: list[tuple[Item, list[Any] | BaseException]] = []
        self.read: tuple[Any, list[str]] | None = None

    def follow(self, item: Item, engine: Any, cells: list[Any]) -> asyncio.Future | None:
        """The item's calls, sent now; its answer joins the turn's when they all are."""
        if not cells:  # nothing to ask (no criterion applies): answered as it stands
            self._answered(item, [])
            return None
        if len(cells) == 1:  # its one call's task (a gather of one would add a future)
            call: asyncio.Future = self.loop.create_task(engine.judge(cells[0]))
            call.add_done_callback(lambda done: self._answered(item, _got(done, one=True)))
        else:
            call = asyncio.gather(*(engine.judge(c) for c in cells))
            call.add_done_callback(lambda done: self._answered(item, _got(done)))
        return call

    def _answered(self, item: Item, got: list[Any] | BaseException) -> None:
        self.ready.append((item, got))
        if len(self.ready) == 1:
            self.loop.call_soon(self._settle)

    def _settle(self) -> None:
        ready, self.ready = self.ready, []
        try:
            self._settle_all(ready)
        except BaseException as exc:  # the caller's settle failed: its await raises it
            if not self.finished.done():
                self.finished.set_exception(exc)
        self.left -= len(ready)
        if self.left == 0 and not self.finished.done():
            self.finished.set_result(None)

    def _settle_all(self, ready: list[tuple[Item, list[Any] | BaseException]]) -> None:
        from rubricflow.tasks.judging.secrets import configured_keys

        answered = [(item, got) for item, got in ready if not isinstance(got, BaseException)]
        for item, got in ready:
            if isinstance(got, BaseException):
                self.settle([item], None, [], got)
        if answered:
            items, outcomes = [item for item, _ in answered], [o for _, got in answered for o in got]
            if self.read is None:  # the price and keys, read once for all the items (~90 us a read)
                self.read = (self.judge._model_price(), configured_keys())
            try:
                results = self.judge._results(self.bundle, items, outcomes, *self.read)
            except Exception as exc:  # the endpoint refused them (refuse_unanswered): they hear why
                self.settle(items, None, [], exc)
            else:
                self.settle(items, results, outcomes, None)


def _got(call: asyncio.Future, one: bool = False) -> list[Any] | BaseException:
    """A finished call's outcomes (`one`: the outcome of a single call, as a list), or what it
    raised (cancelled: CancelledError)."""
    if call.cancelled():
        return asyncio.CancelledError()
    error = call.exception()
    if error is not None:
        return error
    return [call.result()] if one else call.result()


def verdict_patterns(rubric: Any) -> frozenset[str]:
    """The patterns a verdict reads (rubrics/scoring.verdict): those a pattern disqualifier names.
    Only these are searched for a Result: llm-slop's other five were ~2% of a reward's CPU (#55)."""
    return frozenset(p for d in rubric.disqualifiers if d.kind == "pattern" for p in d.patterns)


def patterns_of(texts: list[str], bundle: Bundle, only: frozenset[str] | None = None) -> list[set[str]]:
    """The rubric's pattern ids (`only`: of these) matching each text, by the engine the warehouse
    uses for each (DuckDB's RE2, or the backtracking engine for a pattern RE2 refuses): one query
    for every RE2 pattern over every text (a connection per text cost 90% of evaluate_many's time; a
    query per pattern, 13% of the reward server's)."""
    from rubricflow.rubrics.regex import backtracking, backtracking_hits, re2_errors

    found: list[set[str]] = [set() for _ in texts]
    regexes = {p.id: p.effective_regex() for p in bundle.rubric.patterns if only is None or p.id in only}
    if not regexes or not texts:
        return found
    refused = re2_errors(list(regexes.values()))
    for pid, source in regexes.items():
        if refused[source]:
            compiled = backtracking(source)
            for i, t in enumerate(texts):
                if compiled is not None and backtracking_hits(compiled, t):
                    found[i].add(pid)
    re2 = [(pid, source) for pid, source in regexes.items() if not refused[source]]
    for i, matched in _re2_hits(texts, [source for _, source in re2]):
        found[i].update(pid for (pid, _), hit in zip(re2, matched, strict=True) if hit)
    return found


def _re2_hits(texts: list[str], sources: list[str]) -> list[tuple[int, tuple[bool, ...]]]:
    """(text index, whether each of `sources` matches it) for the texts any of them matches: by
    RE2 in this process (rubrics/regex.Re2Matcher), by DuckDB's when that build refuses one."""
    from rubricflow.rubrics.regex import re2_matcher

    if not sources:
        return []
    matcher = re2_matcher(tuple(sources))
    if matcher is None:
        return [(i, hit) for i, hit in _duckdb_hits(texts, sources) if any(hit)]
    hits = []
    for i, text in enumerate(texts):
        found = matcher(text)
        if found:
            hits.append((i, tuple(k in found for k in range(len(sources)))))
    return hits


def _duckdb_hits(texts: list[str], sources: list[str]) -> list[tuple[int, tuple[bool, ...]]]:
    """(text index, whether each of `sources` matches it) by DuckDB's RE2, the warehouse's engine."""
    import pyarrow as pa

    from rubricflow.rubrics.regex import re2_cursor

    columns = ", ".join(f"regexp_matches(t, ${k})" for k in range(1, len(sources) + 1))
    with re2_cursor() as con:  # the process's one database: a database a call was ~100 ms a batch
        con.register("api_texts", pa.table({"i": list(range(len(texts))), "t": texts}))
        rows = con.execute(f"SELECT i, {columns} FROM api_texts", sources).fetchall()
    return [(row[0], tuple(row[1:])) for row in rows]


def refuse_unanswered(outcomes: list[Any]) -> None:
    """Raise what `Warehouse.score` raises when the endpoint gave these calls no usable answer (a
    closed port, a wrong path, an unknown host, a refused key): a setup no retry fixes is an error,
    not a result whose score is None with the reason in `errors`."""
    from rubricflow.errors import EndpointRefused
    from rubricflow.tasks.judging.failures import rows_refusal
    from rubricflow.tasks.judging.secrets import scrub

    message = rows_refusal([o.completion for o in outcomes if o is not None])
    if message:
        raise EndpointRefused(scrub(message) or message)


def _criterion(bundle: Bundle, j: Any, keys: list[str] | None = None) -> CriterionScore:
    """One judgment as the API gives it, its texts scrubbed (`keys`: the API keys, read now when not given)."""
    from rubricflow.tasks.judging.secrets import configured_keys, scrub

    keys = configured_keys() if keys is None else keys

    return CriterionScore(
        name=j.criterion_id,
        score=j.unit_score,
        value=j.value,
        confidence=getattr(j, "confidence", None),
        rationale=scrub(j.rationale, keys),
        evidence=tuple(scrub(e, keys) or "" for e in j.evidence),
        evidence_verified=j.evidence_verified,
        status=j.status,
        reason=scrub(j.reason, keys),
        warnings=tuple(j.warnings),
    )


def _started(engine: Any, cells: list[Any], on_start: OnStart | None) -> None:
    if on_start is not None:
        for cell in cells:
            for criterion in engine.unit(cell.unit_id, cell.genre)[0].criteria:
                on_start(criterion)


def _done(bundle: Bundle, item: Item, outcomes: list[Any], on_done: OnDone | None) -> None:
    if on_done is None:
        return
    for outcome in outcomes:
        if outcome is not None:
            for j in outcome.judgments:
                on_done(_criterion(bundle, j))


def _item(text_id: str, text: Any, input: Any = None, context: Any = None, genre: Any = None) -> Item:
    """One text as judged; anything but a non-empty string is refused, naming the text."""
    if not isinstance(text, str) or not text.strip():
        kind = "empty" if isinstance(text, str) else f"a {type(text).__name__}, not a string"
        raise InputError(f"text {text_id!r}: the text is {kind}")
    for name, value in (("input", input), ("context", context), ("genre", genre)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"text {text_id!r}: {name} is a {type(value).__name__}, not a string")
    return Item(text_id, text, input, context, genre)


def _items(texts: Iterable[str | Mapping[str, Any]]) -> list[Item]:
    """`evaluate_many`'s texts, each checked (a bad one is named by its id or position); ids unique."""
    if isinstance(texts, str):
        raise InputError("evaluate_many takes a list of texts; for one text use evaluate")
    items: list[Item] = []
    for n, entry in enumerate(texts):
        if isinstance(entry, Mapping):
            if "text" not in entry:
                raise InputError(f"text {n}: no 'text' key (keys are {sorted(entry)})")
            text_id = str(entry.get("id", entry.get("text_id", n)))
            items.append(_item(text_id, entry["text"], entry.get("input"), entry.get("context"), entry.get("genre")))
        else:
            items.append(_item(str(n), entry))
    repeated = sorted(i for i, n in Counter(item.text_id for item in items).items() if n > 1)
    if repeated:
        raise InputError(f"text ids repeat: {repeated[:5]}")
    return items


__all__ = ["CompiledRubric", "Judge", "Result", "Results"]
