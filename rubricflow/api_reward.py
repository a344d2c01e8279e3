"""`rf.RewardService`: rubrics as rewards at training-loop rates (#55), and `rf.RewardServer`, the
same served over HTTP from a thread of this process (`rubricflow reward-server` serves it from its
own). A group of rollouts comes in; each gets its reward (the rubric's score in [0, 1], a
disqualified rollout 0) and its per-criterion scores. Pointwise, every rollout is one call unit of
`rf.Judge` (the hardened client: retries, rate limits per key shared with every run on the key,
secret scrubbing); listwise, a group is judged in ONE call by the rubric's best-of-n form
(rubrics/best_of.py), again with the order reversed when `swap` is set, each rollout's reward the
mean of its two places. Rollouts from every request in flight are judged together (one submission
per event-loop turn); the cache buys each rollout once; the guard's screens zero judge-fooling
rollouts before any call; a ledger lands every judgment in a warehouse."""

from __future__ import annotations

import asyncio
import json
import math
import os
import stat
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubricflow.api_judge import Item, Judge
from rubricflow.api_results import Result
from rubricflow.api_rubric import CompiledRubric, RubricLike, load_rubric
from rubricflow.errors import InputError
from rubricflow.tasks.reward.cache import RewardCache, reward_key
from rubricflow.tasks.reward.fooling import fooling_rollouts, pass_threshold
from rubricflow.tasks.reward.guard import screens
from rubricflow.tasks.reward.rollouts import Rollout, read_rollouts

MODES = ("pointwise", "listwise", "pairwise")
# The largest group each group mode takes: pairwise judges every ordered pair (32 rollouts: 992
# calls; 600 queued 359,400 calls from a 29 kB request and held the server for minutes), listwise
# puts the whole group in one prompt, which a judge's context and answer must hold.
MAX_GROUP = {"listwise": 64, "pairwise": 32}
MAX_RUBRIC_FILE = 4 * 2**20  # bytes: a rubric is a few kB; a request may name any file


@dataclass
class _Batch:
    bundle: CompiledRubric
    entries: list[tuple[Item, asyncio.Future]] = field(default_factory=list)


class RewardService:
    """`judge`: the rf.Judge every reward is bought from; `rubric`: the one a request that names
    none is scored on; `warehouse`: where every judgment is recorded (None: nowhere); `guard`: zero
    the rollouts a screen catches (tasks/reward/guard.py) without a call."""

    def __init__(
        self,
        judge: Judge,
        rubric: RubricLike | None = None,
        warehouse: str | Path | None = None,
        guard: bool = True,
        cache_size: int = 200_000,
    ) -> None:
        self.judge, self.guard = judge, guard
        self.rubrics: dict[str, CompiledRubric] = {}
        self.stamps: dict[str, bytes | None] = {}  # a rubric file's bytes when compiled (None: a library name)
        # a name or a path: its file read again when it changes; a rubric object: as it is
        self.default_name = str(rubric) if isinstance(rubric, str | Path) else None
        self.default = None if rubric is None else self._default_rubric(rubric)
        self.cache = RewardCache(cache_size)
        self.batches: dict[str, _Batch] = {}
        self.calls = 0
        self.rollouts = 0
        self.screened = 0
        self.fooling_reports: dict[str, dict] = {}
        self.latencies: deque[float] = deque(maxlen=10_000)
        self._hashed: tuple[Any, str] | None = None  # (the judge's config, its judge_hash())
        self.ledger = None
        if warehouse is not None:
            from rubricflow.tasks.reward.ledger import Ledger

            self.ledger = Ledger(warehouse)

    def close(self) -> None:
        """Land what the ledger holds and close its runs."""
        if self.ledger is not None:
            self.ledger.close()

    # ------------------------------------------------------------------ requests

    async def score(self, body: dict) -> dict:
        """One request: `rollouts`, and optionally `rubric`, `mode`, `swap`, `view`."""
        started = time.perf_counter()
        bundle = self.rubric_of(body.get("rubric"))
        mode = body.get("mode", "pointwise")
        if mode not in MODES:
            raise InputError(f"mode {mode!r} is not one of {', '.join(MODES)}")
        rollouts, swap = read_rollouts(body.get("rollouts"), body.get("view", "last_reply")), _flag(body, "swap")
        if mode == "listwise":
            results = await self.listwise(bundle, rollouts, swap)
        elif mode == "pairwise":
            results = await self.pairwise(bundle, rollouts)
        elif len(rollouts) == 1:  # a training loop's usual request: no task of its own (gather makes one)
            results = [await self.pointwise(bundle, rollouts[0])]
        else:
            results = list(await asyncio.gather(*(self.pointwise(bundle, r) for r in rollouts)))
        self.rollouts += len(rollouts)  # answered: a refused request counts none
        self.latencies.append(time.perf_counter() - started)
        return {"rubric": f"{bundle.id}@{bundle.version}", "mode": mode, "results": results}

    async def fooling(self, body: dict) -> dict:
        """The fooling goldens of the rubric, scored as any rollout is (screens on) and, unless
        `unguarded` is false, again with the screens off (the judge alone): each one's reward and
        whether it passed, and the false-positive rates."""
        bundle = self.rubric_of(body.get("rubric"))
        threshold = pass_threshold(bundle.rubric)
        unguarded = _flag(body, "unguarded")
        rows = [await self._fooled(bundle, golden, threshold, unguarded) for golden in fooling_rollouts(bundle.rubric)]
        name = f"{bundle.id}@{bundle.version}"
        report = {
            "rubric": name,
            "pass_threshold": threshold,
            "goldens": rows,
            "false_positive_rate": _false_positive_rate(rows, ""),
            "unguarded_false_positive_rate": _false_positive_rate(rows, "unguarded_") if unguarded else None,
        }
        self.fooling_reports[name] = report
        return report

    async def _fooled(self, bundle: CompiledRubric, golden: Any, threshold: float, unguarded: bool) -> dict:
        rollout = Rollout(golden.name, golden.text)
        guarded = await self.pointwise(bundle, rollout, counted=False)
        row = {
            "name": golden.name,
            "reward": guarded["reward"],
            "passed": _passes(guarded, threshold),
            "flags": guarded["flags"],
            "error": guarded["error"],
        }
        if unguarded:
            bare = await self.pointwise(bundle, rollout, guard=False, counted=False) if golden.text.strip() else guarded
            row |= {
                "unguarded_reward": bare["reward"],
                "unguarded_passed": _passes(bare, threshold),
                "unguarded_error": bare["error"],
            }
        return row

    def stats(self) -> dict:
        ordered = sorted(self.latencies)
        return {
            "rollouts": self.rollouts,
            "judge_calls": self.calls,
            "screened": self.screened,
            "cache": self.cache.stats(),
            "p99_request_s": ordered[int(0.99 * (len(ordered) - 1))] if ordered else None,
            "judge_in_flight": self._in_flight(),
            "ledger": self.ledger.stats() if self.ledger is not None else None,
            "fooling": {
                k: {
                    "false_positive_rate": v["false_positive_rate"],
                    "unguarded_false_positive_rate": v["unguarded_false_positive_rate"],
                }
                for k, v in self.fooling_reports.items()
            },
        }

    def _in_flight(self) -> dict:
        """The judge endpoint's concurrency controller: its limit now, its ceiling (--max-in-flight)
        and the most calls it had in flight (why a server adds latency: requests wait under the limit)."""
        from rubricflow.tasks.judging.shard import Worker

        controller = Worker.get().controller(self.judge.config)
        return {"limit": int(controller.limit), "ceiling": controller.ceiling, "peak": controller.peak}

    def _default_rubric(self, rubric: RubricLike) -> CompiledRubric:
        return load_rubric(rubric) if self.default_name is None else self.rubric_of(self.default_name)

    def rubric_of(self, name: Any) -> CompiledRubric:
        """The request's rubric (a library name or a file), compiled once; none named: the server's."""
        if name is None:
            if self.default is None:
                raise InputError("no rubric: name one in the request ('rubric') or start the server with one")
            return self.default if self.default_name is None else self.rubric_of(self.default_name)
        if not isinstance(name, str):
            raise InputError(f"rubric: expected a library name or a file path, got a {type(name).__name__}")
        if "\0" in name:  # no path holds one (Path.resolve raised ValueError: a 500)
            raise InputError(f"rubric {name[:80]!r}: a NUL character is in no file's name")
        kept = self.rubrics.get(name)
        if kept is not None and self.stamps.get(name) is None:  # a library name: no file of that name to read
            return kept
        stamp = _file_stamp(name)
        if kept is None or self.stamps.get(name) != stamp:  # a rubric file edited since: compiled again
            try:
                kept = self.rubrics[name] = load_rubric(name)
            except OSError as exc:  # a name too long for a path (ENAMETOOLONG): the client's, not a 500
                raise InputError(f"rubric {name[:80]!r}: {exc.strerror or exc}") from None
            self.stamps[name] = stamp
        return kept

    # ------------------------------------------------------------------ pointwise and listwise

    async def pointwise(
        self, bundle: CompiledRubric, rollout: Rollout, guard: bool | None = None, counted: bool = True
    ) -> dict:
        """One rollout's reward: screened, then from the cache, else bought in the next batch
        (`counted`: a screened one counts in `stats`; the fooling goldens' do not)."""
        flags = (
            screens(rollout.text, bundle.rubric, rollout.replies) if (self.guard if guard is None else guard) else []
        )
        if flags or not rollout.text.strip():
            self.screened += counted
            return _reward(rollout.id, None, flags or ["empty"], cached=False)
        key = reward_key(bundle.hash, self._judge_hash(), rollout.text, rollout.input, rollout.context)
        result = self.cache.get(key)
        if result is not None:
            return _reward(rollout.id, result, [], cached=True)
        waiting = self.cache.waiting(key)
        if waiting is not None:
            return _reward(rollout.id, await waiting, [], cached=True)
        self.cache.claim(key)
        try:
            result = await self._judged(bundle, Item(key[:32], rollout.text, rollout.input, rollout.context))
        except BaseException as exc:
            self.cache.fail(key, exc)
            raise
        if result.score is None:
            self.cache.drop(key, result)
        else:
            self.cache.settle(key, result)
        return _reward(rollout.id, result, [], cached=False)

    def _judge_hash(self) -> str:
        """The judge's settings hash, computed again only for a new config (a JudgeConfig is frozen:
        one JSON dump and SHA-256 a rollout was ~1% of the server's CPU, #55)."""
        config = self.judge.config
        if self._hashed is None or self._hashed[0] is not config:
            self._hashed = (config, config.judge_hash())
        return self._hashed[1]

    async def listwise(self, bundle: CompiledRubric, rollouts: list[Rollout], swap: bool) -> list[dict]:
        """The group judged in one call by the rubric's best-of-n form (and once reversed: `swap`)."""
        results = await self._group(bundle, rollouts, "listwise", lambda kept: self._places(bundle, kept, swap))
        return [{"places": []} | r for r in results]

    async def _group(
        self, bundle: CompiledRubric, rollouts: list[Rollout], mode: str, judge_kept: Callable[[list], Awaitable]
    ) -> list[dict]:
        """A group's answers: a rollout a screen catches gets 0 and is in no call (its text never
        reaches the judge beside the others', where an injection could sway them, nor voids the
        group's call); the others are judged together by `judge_kept`, or pointwise if one is left."""
        if len(rollouts) < 2:
            raise InputError(f"{mode} scoring needs a group of at least 2 rollouts")
        if len(rollouts) > MAX_GROUP[mode]:
            raise InputError(
                f"{mode}: a group of {len(rollouts)} rollouts is over the {MAX_GROUP[mode]} this mode takes "
                f"({'n(n-1) calls a group' if mode == 'pairwise' else 'all of them in one prompt'}): send smaller groups"
            )
        _one_prompt(rollouts, mode)  # every rollout's, screened or not: the request is refused as a whole
        flags = [screens(r.text, bundle.rubric, r.replies) if self.guard else [] for r in rollouts]
        judged = [i for i, f in enumerate(flags) if not f]
        kept = [rollouts[i] for i in judged]
        self.screened += len(rollouts) - len(kept)
        if len(kept) > 1:
            answers = await judge_kept(kept)
        else:
            answers = [await self.pointwise(bundle, r, guard=False) for r in kept]
        results = [_reward(r.id, None, f, cached=False) for r, f in zip(rollouts, flags, strict=True)]
        for i, answer in zip(judged, answers, strict=True):
            results[i] = {"id": rollouts[i].id} | answer
        return results

    async def _places(self, bundle: CompiledRubric, rollouts: list[Rollout], swap: bool) -> list[dict]:
        """Each rollout's answer from the group's best-of-n call(s): its reward the mean of its
        candidate scores over the orders asked, its `places` where it stood in each."""
        from rubricflow.rubrics.best_of import best_of_rubric, candidate_id
        from rubricflow.tasks.loaders.candidates import render_candidates

        n = len(rollouts)
        form_name = f"{bundle.hash}/best-of-{n}"
        if form_name not in self.rubrics:
            self.rubrics[form_name] = load_rubric(best_of_rubric(bundle.rubric, n))
        form = self.rubrics[form_name]
        orders = [list(range(n))] + ([list(reversed(range(n)))] if swap else [])
        prompt, context = _given(rollouts, "input"), _given(rollouts, "context")  # the group's one (_one_prompt)
        judged = await asyncio.gather(
            *(
                self.pointwise(
                    form,
                    Rollout("group", render_candidates([rollouts[i].text for i in order]), prompt, context),
                    guard=False,
                )
                for order in orders
            )
        )
        results = []
        for i in range(n):
            places = [order.index(i) + 1 for order in orders]
            scores = [j["criteria"].get(candidate_id(p)) for j, p in zip(judged, places, strict=True)]
            known = [s for s in scores if s is not None]
            reward = sum(known) / len(known) if known else None
            results.append(
                {
                    "reward": reward,
                    "criteria": {"quality": reward},
                    "places": places,
                    "flags": [],
                    "cached": all(j["cached"] for j in judged),
                    "passed": None,  # a place among others is no verdict on the rubric
                    "label": None,
                    "error": None if known else _why_none(judged, "the judge scored no place"),
                }
            )
        return results

    async def pairwise(self, bundle: CompiledRubric, rollouts: list[Rollout]) -> list[dict]:
        """Every ordered pair of the group judged by the rubric's pairwise form (rubrics/pairwise.py:
        each criterion a/b/tie), both orders, so position bias cancels: n(n-1) calls. A rollout's
        reward is its mean preference over the others (1: preferred to every one, 0.5: even)."""
        return await self._group(bundle, rollouts, "pairwise", lambda kept: self._preferences(bundle, kept))

    async def _preferences(self, bundle: CompiledRubric, rollouts: list[Rollout]) -> list[dict]:
        """Each rollout's mean preference over the others, overall and per criterion."""
        from itertools import permutations

        from rubricflow.rubrics.pairwise import pairwise_rubric
        from rubricflow.tasks.loaders.pairs import render_pair

        form_name = f"{bundle.hash}/pairwise"
        if form_name not in self.rubrics:
            self.rubrics[form_name] = load_rubric(pairwise_rubric(bundle.rubric))
        form, prompt, context = self.rubrics[form_name], _given(rollouts, "input"), _given(rollouts, "context")
        pairs = list(permutations(range(len(rollouts)), 2))
        judged = await asyncio.gather(
            *(
                self.pointwise(
                    form,
                    Rollout("pair", render_pair(rollouts[a].text, rollouts[b].text), prompt, context),
                    guard=False,
                )
                for a, b in pairs
            )
        )
        wins: list[list[float]] = [[] for _ in rollouts]
        criteria: list[dict[str, list[float]]] = [{} for _ in rollouts]
        for (a, b), verdict in zip(pairs, judged, strict=True):
            if verdict["reward"] is None:
                continue
            for who, sign in ((a, 1.0), (b, -1.0)):  # the form's score is the preference for the first
                wins[who].append(_preference(verdict["reward"], sign))
                for name, score in verdict["criteria"].items():
                    if score is not None:
                        criteria[who].setdefault(name, []).append(_preference(score, sign))
        return [
            {
                "reward": math.fsum(wins[i]) / len(wins[i]) if wins[i] else None,  # fsum: the same bits in any order
                "criteria": {name: math.fsum(v) / len(v) for name, v in criteria[i].items()},
                "flags": [],
                "passed": None,
                "label": None,
                "cached": all(j["cached"] for j in judged),
                "error": None if wins[i] else _why_none(judged, "no pair judged"),
            }
            for i in range(len(rollouts))
        ]

    # ------------------------------------------------------------------ batching

    async def _judged(self, bundle: CompiledRubric, item: Item) -> Result:
        """The item's Result, judged with every other item of this rubric asked in the same loop turn."""
        future = asyncio.get_running_loop().create_future()
        batch = self.batches.get(bundle.hash)
        if batch is None:
            batch = self.batches[bundle.hash] = _Batch(bundle)
            asyncio.get_running_loop().call_soon(self._send, bundle.hash)
        batch.entries.append((item, future))
        return await future

    def _send(self, rubric_hash: str) -> None:
        batch = self.batches.pop(rubric_hash)
        asyncio.ensure_future(self._judge_batch(batch))

    async def _judge_batch(self, batch: _Batch) -> None:
        """Judge the batch's items, each waiter answered as its item's calls are (with the items
        answered in the same loop turn: `rf.Judge._judge_items_as_answered`), not after the batch's
        slowest call."""
        waiting: dict[str, list[asyncio.Future]] = {}
        for item, future in batch.entries:
            waiting.setdefault(item.text_id, []).append(future)
        items = list({item.text_id: item for item, _ in batch.entries}.values())

        def settle(done: list[Item], results: Any, outcomes: list[Any], error: BaseException | None) -> None:
            if error is not None:
                _tell(done, waiting, error)
                return
            self.calls += len(outcomes)
            by_id = {r.text_id: r for r in results}
            for item in done:
                for future in waiting[item.text_id]:
                    if not future.done():
                        future.set_result(by_id[item.text_id])
            if self.ledger is not None:
                self._record(self.ledger, batch.bundle, done, outcomes)

        try:
            await self.judge._judge_items_as_answered(batch.bundle, items, settle)
        except BaseException as exc:  # every waiter not yet answered hears why
            _tell(items, waiting, exc)

    def _record(self, ledger: Any, bundle: CompiledRubric, items: list[Item], outcomes: list[Any]) -> None:
        """Queue each item's judgments for the warehouse (the ledger lands them in the background)."""
        from rubricflow.tasks.reward.ledger import Judged

        config = self.judge.config.for_rubric(bundle.rubric)
        by_text: dict[str, list[Any]] = {}
        for outcome in outcomes:
            if outcome is not None:
                by_text.setdefault(outcome.completion["text_id"], []).append(outcome)
        for item in items:
            judged = Judged(item.text_id, item.text, item.input, item.context, tuple(by_text.get(item.text_id, ())))
            ledger.record(bundle, config, judged)


def _tell(items: list[Item], waiting: dict[str, list[asyncio.Future]], error: BaseException) -> None:
    """The waiters of `items` not yet answered get `error`."""
    for item in items:
        for future in waiting[item.text_id]:
            if not future.done():
                future.set_exception(error)


def _one_prompt(rollouts: list[Rollout], mode: str) -> None:
    """A group is compared against one prompt and one context: rollouts that give others are refused
    (judged under one of them, the others were compared on a question they were not asked). A
    rollout that gives none is judged under the group's (`_given`)."""
    for name, what in (("input", "prompt"), ("context", "context")):
        given = [r for r in rollouts if getattr(r, name)]
        for other in given[1:]:
            if getattr(other, name) != getattr(given[0], name):
                raise InputError(
                    f"{mode}: rollout {other.id} has another {what} than rollout {given[0].id}: "
                    f"a group is compared on one {what}"
                )


def _file_stamp(name: str) -> bytes | None:
    """A rubric file's bytes (None: a library name, no such file here): a server keeps running while
    its user edits the rubric, and must not score with the old one. The bytes, not the modification
    time: an edit in the same clock tick, of the same size, kept both (a read is ~12 us a request,
    timeit; a library name is not looked for again: its failed read was ~6 us on every request)."""
    try:
        info = os.stat(name)
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(info.st_mode):  # a folder of that name here: the library's rubric is meant
        return None
    if not stat.S_ISREG(info.st_mode):  # a FIFO held the loop until a writer came; /dev/zero filled memory
        raise InputError(f"rubric {name[:80]!r}: not a regular file")
    if info.st_size > MAX_RUBRIC_FILE:
        raise InputError(
            f"rubric {name[:80]!r}: {info.st_size:,} bytes, over the {MAX_RUBRIC_FILE:,} a rubric file may have"
        )
    try:
        with open(name, "rb") as fh:
            return fh.read(MAX_RUBRIC_FILE + 1)
    except OSError:
        return None


def _given(rollouts: list[Rollout], name: str) -> str | None:
    """The group's prompt (`input`) or context: the first rollout's that gives one."""
    return next((getattr(r, name) for r in rollouts if getattr(r, name)), None)


def _why_none(judged: list[dict], otherwise: str) -> str:
    """Why a group's call gave no score: the judge's own error (an answer cut off at max_tokens, for
    a large group), else `otherwise`."""
    return next((j["error"] for j in judged if j.get("error")), otherwise)


def _preference(score: float, sign: float) -> float:
    """A pair verdict's score (the preference for the first response) as the preference for one side."""
    return score if sign > 0 else 1.0 - score


def _flag(body: dict, name: str, default: bool = True) -> bool:
    """A request's true/false switch; any other value is refused (the string "false" read as true
    judged both orders of a group whose client asked for one)."""
    value = body.get(name, default)
    if not isinstance(value, bool):
        raise InputError(f"{name}: expected true or false, got {json.dumps(value)[:40]}")
    return value


def _false_positive_rate(rows: list[dict], prefix: str) -> float | None:
    """The share of the goldens that passed; None when the judge gave any of them no reward (its
    error is in the golden's row): counted as not passed, a judge that scored nothing read 0.0,
    never fooled, and a rate over the few it scored would speak for the ones it did not."""
    if any(r[f"{prefix}reward"] is None for r in rows):
        return None
    return sum(r[f"{prefix}passed"] for r in rows) / len(rows)


def _passes(reward: dict, threshold: float) -> bool:
    return reward["reward"] is not None and reward["reward"] >= threshold


def _reward(rollout_id: str, result: Result | None, flags: list[str], cached: bool) -> dict:
    """One rollout's answer: reward, pass, label and per-criterion scores (a screened rollout: 0)."""
    if result is None:
        return {
            "id": rollout_id,
            "reward": 0.0,
            "passed": False,
            "label": None,
            "criteria": {},
            "flags": flags,
            "cached": cached,
            "error": None,
        }
    return {
        "id": rollout_id,
        "reward": result.score,
        "passed": result.passed,
        "label": result.label,
        "criteria": {name: c.score for name, c in result.criteria.items()},
        "flags": flags,
        "cached": cached,
        "error": _why_unscored(result) if result.score is None else None,
    }


def _why_unscored(result: Result) -> str:
    """Why a judged rollout has no reward: its calls' errors, else each criterion's reason (an
    answer off the scale, say), so a null reward never comes without one."""
    reasons = [f"{c.name}: {c.reason}" for c in result.criteria.values() if c.reason]
    return "; ".join(result.errors) or "; ".join(reasons) or "the judge scored no criterion"


class RewardServer:
    """A RewardService served over HTTP on 127.0.0.1 from this process (a notebook, the tests, the
    bench), on its judge loop as `rubricflow reward-server` serves it from its own. `url` and
    `secret` are what a client needs (the plugin reads the secret from the user's state folder)."""

    def __init__(self, service: RewardService, port: int = 0) -> None:
        import uvicorn

        from rubricflow.tasks.reward.http import reward_app
        from rubricflow.tasks.standins.judge_server import bind

        self.service = service
        self.secret = server_secret()
        self.sock = bind(port=port)
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(reward_config(reward_app(service, self.secret)))
        self.served: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> RewardServer:
        self.served = serving(self.server, self.sock)
        deadline = time.monotonic() + 10
        while not self.server.started and not self.served.done() and time.monotonic() < deadline:
            time.sleep(0.01)
        if self.served.done():
            self.served.result()  # it stopped before serving: its error, here
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.served.result(timeout=10)
        self.service.close()


def serving(server: Any, sock: Any) -> Any:
    """`server` (a uvicorn.Server) serving `sock` on the process's judge loop (tasks/judging/shard.Worker):
    a request and its judge calls on one thread, never waiting on each other for the GIL as two
    loops in two threads do. Its Future."""
    from rubricflow.tasks.judging.shard import Worker

    return asyncio.run_coroutine_threadsafe(server.serve(sockets=[sock]), Worker.get().loop)


def serve_until_interrupted(server: Any, sock: Any) -> None:
    """Serve in the foreground until Ctrl-C, SIGTERM or SIGHUP (`kill`, `timeout`, systemd and docker
    stop send SIGTERM), then finish the requests in flight and return. uvicorn serves on the judge
    loop's thread, where it can install no signal handler: this thread's stop it."""
    import signal

    def stop(*_: Any) -> None:
        server.should_exit = True

    ending = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]
    before = {s: signal.signal(s, stop) for s in ending}
    served = serving(server, sock)
    try:
        served.result()
    except KeyboardInterrupt:
        server.should_exit = True
        served.result(timeout=30)
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def out_of_the_collectors_sight() -> None:
    """Freeze this process's heap as it is (its imports, the rubric, the judge): the cyclic garbage
    collector never walks it again. Each full collection walked every object of the imports
    (Prefect, pydantic, the openai SDK): GC took 0.81 of the reward server's 4.4 s of CPU in
    bench/reward.py's 2,048-rollout phase, 0.07 s after (#55). For a process of its own
    (`rubricflow reward-server`): a caller's heap is its own business."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def server_secret() -> str:
    """The user's reward-server secret (made on first use, 0600 in the state folder)."""
    from rubricflow.tasks.reward.http import SECRET_NAME
    from rubricflow.tasks.runtime.owner import owner_secret
    from rubricflow.tasks.runtime.prefect_server import state_dir

    return owner_secret(SECRET_NAME, state_dir())


def reward_config(app: Any, **tls: Any) -> Any:
    """uvicorn's settings for the reward server: quiet, a deep backlog (a training loop opens
    hundreds of connections at once), keep-alive long enough for a loop's pauses."""
    import uvicorn

    return uvicorn.Config(
        app,
        log_level="error",
        access_log=False,
        lifespan="off",
        timeout_keep_alive=60,
        backlog=4096,
        proxy_headers=False,  # the app reads no client address or scheme: no middleware rewriting them per request
        **tls,
    )
