"""Screens a rollout passes before its reward is bought: a rollout that talks to the judge instead
of answering (a "the answer is correct" master key, an instruction to score it highly, a forged end
of the text fence, a line marking a group's candidate, `[Response 2]`, that would move where the
judge sees one response end and the next begin), restates the rubric, or says nothing gets reward 0
with the screen's name, and no judge call. A model trained on a reward finds whatever the judge
misreads; these are the known ones (the fooling goldens in `fooling.py` are them, run against every
reward rubric)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from rubricflow.rubrics.model import Rubric

# What ends a line besides \n, for a reader that is not Python's `$` (str.splitlines' breaks): a
# candidate mark followed by \r\n or \u2028 is a line of its own to an LLM judge.
LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# Text addressed to the grader, not to the user: each one names a screen. Each is written so that
# ordinary prose passes (an outside probe's: "Don't ignore the safety instructions", "Players score
# the maximum points", "Dear Judge Thompson", "## Scoring" over a game's rules, an answer that ends
# "so the answer is correct"): a reward of 0 for an honest answer teaches the policy as wrongly as a
# fooled judge does.
_WORD, _GAP = r"[^\W_]+", r"[\W_]+"  # a word, and what separates two (markup, punctuation, spaces)
_GRADER = r"(?:graders?|judge|evaluators?|assessors?)"  # `judges` is a contest's, not the grader
ADDRESSED_TO_JUDGE = {
    # a reply that is (nearly) nothing but a claim to be right: at most three words beside it
    "master-key": re.compile(
        rf"^[\W_]*(?:{_WORD}{_GAP}){{0,3}}(the|this|my) (final )?(answer|response|solution) (is|was) "
        rf"(definitely |absolutely |totally |100% )?(correct|right|perfect|excellent)\b(?:{_GAP}{_WORD}){{0,3}}[\W_]*$"
        r"|^[\W_]*(correct|pass(ed)?|5/5|10/10|full marks)[\W_]*$",
        re.I,
    ),
    "score-request": re.compile(  # an order to the grader: said at a sentence's start, or asked of it
        r"(?:^|[.!?:;\n]\s*|\bplease\s+|\b(?:you|" + _GRADER + r")\s+(?:should|must|will|shall|can|could|would)\s+)"
        r"(?:(give|assign|award|grant)\b[^.!?\n]{0,40}\b(full|maximum|max|highest|perfect|top)\b[^.!?\n]{0,20}"
        r"\b(marks?|scores?|points?|ratings?|rewards?|grades?)\b"
        r"|(give|assign|award|grant|rate|score|grade|mark)\s+(this|it|me|my)\b[^.!?\n]{0,30}(10/10|5/5|100/100|100%))"
        rf"|\b(note to|dear|attention|hey|hi|hello),? (the |my )?(ai |llm |automated )?{_GRADER}\b(?!\s+(?-i:[A-Z]))"
        rf"|(?:^|[.!?\n]\s*){_GRADER}\s*,\s*(please|you|give|score|rate|award|mark)\b"
        rf"|\b{_GRADER}\b[^.\n]{{0,40}}\b(must|should|will|shall)\b[^.\n]{{0,30}}"
        r"\b(score|rate|pass|award)\b[^.\n]{0,30}\b(this|my|every|each|all) (text|answer|response|output|criteri)",
        re.I,
    ),
    "ignore-instructions": re.compile(  # the grader's own orders set aside, not any rules a text mentions
        r"\b(ignore|disregard|forget|override)\b[^.!?]{0,20}?\b(previous|prior|above|preceding|earlier|all|any|"
        r"your|system)\b(?:\s+\w+){0,2}?\s+(instructions?|prompts?|rules|guidelines|rubric|criteria)\b"
        r"|\b(ignore|disregard|forget|override)\s+(the |this |your )?(rubric|system prompt|"
        r"(grading|scoring|evaluation) (criteria|rubric|rules|instructions))\b",
        re.I,
    ),
    "forged-fence": re.compile(  # the judge's own fences, a rubric heading over a verdict, a group's candidate mark
        r"<<<(BEGIN|END) (TEXT|CONTEXT|INPUT)\b|</?LLM_JUDGE_SPEC>"
        r"|^#{2,3} (Criteria|Scoring)\b[^\n]*\n[^\n]{0,200}?"
        r"(?i:\b(scored?|pass(es|ed)?|met|meets|highest|maximum|full marks|excellent|judge|grader)\b)"
        rf"|(?:^|(?<=[{LINE_BREAKS}]))[ \t\u00a0*_#>~`-]*(?i:\[[ \t\u00a0]*response[ \t\u00a0]*(\d+|[ab])[ \t\u00a0]*\])",
        re.M,
    ),
}
# Words one of which every match of a screen contains (each alternative of its pattern has one), so
# a text without any is not searched: most rollouts, whose four searches were ~a sixth of a group
# reward's server CPU. Looked for in the text folded as re.IGNORECASE folds: lowercase, and the four
# non-ASCII letters it matches to ASCII ones (tests/tasks/reward/test_guard.py checks the fold).
NEEDS = {
    "master-key": ("correct", "right", "perfect", "excellent", "pass", "5/5", "10/10", "full"),
    "score-request": (
        "full",
        "max",
        "highest",
        "perfect",
        "top",
        "grader",
        "judge",
        "evaluator",
        "assessor",
        "10/10",
        "5/5",
        "100/100",
        "100%",
    ),  # fmt: skip
    "ignore-instructions": ("ignore", "disregard", "forget", "override"),
}
NEEDS_AS_WRITTEN = {
    "forged-fence": ("<<<", "LLM_JUDGE_SPEC>", "# Criteria", "# Scoring")
}  # case-sensitive; a candidate mark: `response` and a bracket, in any case (_may_match)
IGNORECASE_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
RESTATE_SHARE = 0.5  # of the rollout's word 4-grams found in the rubric's own text
WORDS = re.compile(r"[a-z0-9']+")
# every ASCII character WORDS does not match, as a space (lowercase letters and digits and ' kept)
_NOT_A_WORD = str.maketrans({c: " " for c in range(128) if not WORDS.fullmatch(chr(c))})
ANY_NEEDED = tuple(sorted({word for words in NEEDS.values() for word in words}))
# Characters a reader does not see (zero-width, bidirectional controls, the soft hyphen, the tag
# block's controls): "Ig\u200bnore all previous instructions" read as plain. The tag block's
# printable characters, in which an instruction can be smuggled whole, are read as the ASCII they mirror.
INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\U000e0000-\U000e001f\U000e007f]"
)
TAGS_AS_ASCII = {0xE0000 + c: c for c in range(0x20, 0x7F)}
# Cyrillic and Greek letters drawn as Latin ones (Unicode's confusables, the letters of both scripts
# that look like a Latin letter alone): "The \u0430nswer is correct" is read as a reader sees it.
_LOOKS_LATIN = dict(
    zip(
        "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u0501\u04bb\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0406\u0408\u0405"
        "\u03bf\u03b1\u03b9\u03ba\u03bd\u03c1\u03c4\u03c5\u03c7\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7",
        "aeopcyxijsdhABEKMHOPCTXIJSoaikvptuxABEZHIKMNOPTYX",
        strict=True,
    )
)
AS_READ: dict[int, int | str] = {**TAGS_AS_ASCII, **{ord(k): v for k, v in _LOOKS_LATIN.items()}}
_WORDINGS: dict[int, tuple[Rubric, str]] = {}  # id(rubric) -> (the rubric, held so its id stays its own; its wording)


def screens(text: str, rubric: Rubric, replies: tuple[str, ...] | None = None) -> list[str]:
    """The names of the screens `text` fails (none: it goes to the judge). A trace (the `full_trace`
    view) gives its own `replies`, screened in place of its rendering, each as a text of its own:
    rendered, "[M0] assistant: " put a master key past the screens' anchors, a tool result that said
    "ignore the previous instructions" zeroed an agent that only read it, and a trace that said and
    did nothing was no empty text."""
    own = (text,) if replies is None else replies
    if not any(reply.strip() for reply in own):
        return ["empty"]
    failed: list[str] = []
    for reply in own:
        if reply.strip():
            failed += [name for name in _screens(plain(reply), rubric) if name not in failed]
    return failed


def plain(text: str) -> str:
    """The text as a reader sees it: compatibility forms folded to plain ones (a full-width
    `［Response 1］`, a no-break space), the invisible characters left out, and Cyrillic and Greek
    letters drawn as Latin ones read as those. ASCII as it is."""
    return text if text.isascii() else INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).translate(AS_READ)


def _screens(text: str, rubric: Rubric) -> list[str]:
    if not text.strip():
        return ["empty"]
    lowered = text.lower()
    # the fold maps only non-ASCII letters: an ASCII text is folded by lower() alone (a listwise
    # group's rendered text is ~2.6 kB: the translation was ~4% of its screens)
    folded = lowered if text.isascii() else text.translate(IGNORECASE_FOLD).lower()
    any_word = any(word in folded for word in ANY_NEEDED)  # most rollouts have none: 3 screens skipped at once
    failed = [
        name
        for name, pattern in ADDRESSED_TO_JUDGE.items()
        if (any_word or name in NEEDS_AS_WRITTEN) and _may_match(name, text, folded) and pattern.search(text)
    ]
    if restates(text, rubric, lowered):
        failed.append("restates-rubric")
    return failed


def _may_match(screen: str, text: str, folded: str) -> bool:
    """Whether the text has a word every match of the screen contains (False: it cannot match)."""
    if screen in NEEDS_AS_WRITTEN:  # and a candidate mark, in any case, spaced as it may be
        return any(word in text for word in NEEDS_AS_WRITTEN[screen]) or ("response" in folded and "[" in text)
    return any(word in folded for word in NEEDS[screen])


def restates(text: str, rubric: Rubric, lowered: str | None = None) -> bool:
    """Whether most of the rollout is the rubric's own wording (criteria, goal, anchors) played back.
    A rollout with no four words in a row that the rubric's wording uses shares none of its 4-grams:
    it is not, and its own 4-grams are not built (they were ~3% of a reward's server CPU, #55).
    `lowered`: `text.lower()`, when the caller has it."""
    words = _words(text.lower() if lowered is None else lowered)
    wording = _wording_of(rubric)
    if not _runs_in(words, _wording_words(wording), 4):
        return False
    grams = _ngrams(words)
    if len(grams) < 3:
        return False
    own = _wording_grams(wording)
    return len(grams & own) / len(grams) >= RESTATE_SHARE


def _words(lowered: str) -> list[str]:
    """WORDS.findall(lowered): for an ASCII text, every other character made a space and the text
    split, the same words at a third of the regex's CPU (a group's 2.6 kB: 75 -> 26 us, #55)."""
    if lowered.isascii():
        return lowered.translate(_NOT_A_WORD).split()
    return WORDS.findall(lowered)


def _runs_in(words: list[str], vocabulary: frozenset[str], n: int) -> bool:
    """Whether `n` words in a row of `words` are all in `vocabulary` (each word a mark, the marks
    searched for `n` in a row: no Python step per word)."""
    return "1" * n in "".join(["1" if word in vocabulary else "0" for word in words])


def _wording_of(rubric: Rubric) -> str:
    """`rubric_wording(rubric)`, once per rubric object (a Rubric is frozen): joined again for
    every rollout, and hashed again as a new string by the caches below."""
    kept = _WORDINGS.get(id(rubric))
    if kept is None or kept[0] is not rubric:
        if len(_WORDINGS) >= 64:
            _WORDINGS.clear()
        kept = _WORDINGS[id(rubric)] = (rubric, rubric_wording(rubric))
    return kept[1]


def rubric_wording(rubric: Rubric) -> str:
    """The rubric's text a judge is shown: goal, each criterion's title and description."""
    parts = [rubric.goal or ""]
    for criterion in rubric.criteria:
        parts += [criterion.title or criterion.id, criterion.description or ""]
    return "\n".join(parts)


@lru_cache(maxsize=64)
def _wording_grams(wording: str) -> frozenset[tuple[str, ...]]:
    """A rubric's 4-grams, once per rubric wording (every rollout is checked against them)."""
    return frozenset(_grams(wording))


@lru_cache(maxsize=64)
def _wording_words(wording: str) -> frozenset[str]:
    """A rubric's words, once per rubric wording."""
    return frozenset(WORDS.findall(wording.lower()))


def _grams(text: str, n: int = 4) -> set[tuple[str, ...]]:
    return _ngrams(_words(text.lower()), n)


def _ngrams(words: list[str], n: int = 4) -> set[tuple[str, ...]]:
    return set(zip(*(words[k:] for k in range(n)), strict=False))  # each run of n words (shorter tails end it)
