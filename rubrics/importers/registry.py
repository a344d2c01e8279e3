"""The one registry of rubric formats: each importer declares how it recognises a file, the fields
it reads (and how it uses them), the fields it leaves alone (and why), and its row of the docs'
table. Detection (`importers.detect_and_import`), `rubricflow doctor` (`rubrics/explain.py`) and the
table in docs/rubrics.md (`docs_table()`, held equal by a test) are all read from here, so a new
format is one entry."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..documents import rubric_from_data
from ..model import Rubric
from . import (
    dispatcher,
    evals,
    evaluator_yaml,
    forge,
    healthbench,
    markdown,
    openai_graders,
    paperbench,
    phoenix,
    prometheus,
    prompt_text,
    promptfoo,
    prompty,
    skillset,
    waza_eval,
    xml_spec,
)
from .common import TEXT_SUFFIXES

Importer = Callable[[Any, Path], list[Rubric]]


@dataclass(frozen=True)
class Family:
    """A row of the docs' table: the format as a user knows it (several importers may share one)."""

    title: str
    files: str
    notes: str


@dataclass(frozen=True)
class Format:
    """One importer. `text` formats are recognised on the raw text and path, the others on the
    parsed YAML/JSON data. `fields` and `left` are fnmatch globs over dotted field paths (list
    items as `[]`): what the importer reads and how it uses it, what it leaves alone and why."""

    name: str
    family: str
    recognised_by: str
    detect: Callable[[Any, Path], bool]
    read: Importer
    text: bool = False
    fields: Mapping[str, str] = field(default_factory=dict)
    left: Mapping[str, str] = field(default_factory=dict)

    def how(self, path: str) -> str | None:
        """How the importer uses the field at `path` (the first glob that names it), or None."""
        return next((how for glob, how in self.fields.items() if fnmatch.fnmatchcase(path, glob)), None)

    def why_left(self, path: str) -> str | None:
        return next((why for glob, why in self.left.items() if fnmatch.fnmatchcase(path, glob)), None)


def _one(read: Callable[[Any, Path], Rubric]) -> Importer:
    return lambda data, path: [read(data, path)]


def _mapping(test: Callable[[dict], bool]) -> Callable[[Any, Path], bool]:
    return lambda data, path: isinstance(data, dict) and test(data)


def _stripped(text: str) -> str:
    return text.lstrip("\ufeff \t\r\n")


def _prompt_text(test: Callable[[str], bool]) -> Callable[[Any, Path], bool]:
    """A prompt as text: a text suffix, no frontmatter, and the prompt's own shape."""
    return lambda text, path: (
        path.suffix.lower() in TEXT_SUFFIXES and not _stripped(text).startswith("---") and test(text)
    )


def _registry(data: dict) -> bool:
    specs = [v for v in data.values() if isinstance(v, dict) and "prompt" in v]
    return bool(specs) and len(specs) == len(data)


def _import_jsonl(text: str, path: Path) -> list[Rubric]:
    return dispatcher.import_jsonl(text, path)  # the dispatcher reads each line by the registry


FAMILIES: dict[str, Family] = {
    "native": Family(
        "native",
        "`.yaml`, `.yml`, `.json` with a `metadata` key",
        "round trip `load(dump(r)) == r` (property-tested)",
    ),
    "xml": Family(
        "`<LLM_JUDGE_SPEC>` XML",
        "`.xml`",
        'lenient: raw `&` and `<` in regexes and notes are repaired; DOCTYPE/entities refused; `\\uXXXX` regex escapes rewritten as RE2 `\\x{...}`. A ComplianceJudge keeps everything it states: `<what_to_judge>` (instructions), `<definitions><def id>`, `<decision_logic><rule id>` (each rule\'s `=> Judgement = X` is its verdict), `<mapping_examples>` (`<user>`, `<assistant>`, `<verdict>Somewhat (reason).</verdict>`), `<allowed_judgements>` as the rubric\'s `verdicts` with scores from `<scoring_guidance><mapping>Yes=1.0, ...`, and the `<template>`; a grouped regex list (`<refusal_regexes><r>..</r><r>..</r>`) is one pattern per member (`refusal_regexes.1`, ...). A spec with scored verdicts and decision rules is judged by its verdict (seed 000\'s `Result_compliance`): the judge is asked for it as one more criterion, named by the template\'s tag (`Judgement`), whose categories are the verdicts, each described by the rules that give it; the anchored criteria are still asked but weigh 0 (a ComplianceJudge\'s C2 = 2 is an outright refusal, not "better"); the verdicts are the decision labels, and the rule that fires on a disqualifier (R1) gives the disqualified label. A detection spec whose `<scoring><formula>` states `risk = N - score` and risk bands (`risk ≥12 → "Severe"; risk 8–11 → "High"; ...`) gets those bands as decision labels on the unit score (floored at 6 decimals), the DQ band (`band="FAIL"`) as the disqualified label, and passes in the bands whose floor is above half the scale (AntiLLMY: Minimal, Low, Moderate, as the library\'s `anti-llmy`)',
    ),
    "markdown": Family(
        "Markdown + YAML frontmatter (waza)",
        "`.md`",
        "one pass/fail criterion (`scale: pass-fail`), or a graded one (`scale: 1-5`, ordinal); the frontmatter fields seed 004 requires (`name`, `version`, `scale`, `description`) are errors naming the field when missing, as are a `name` not kebab-case, a `version` not a semver string (`1.0`, `v2`) and any other `scale` (nothing is rewritten); the body is kept as the judge's instructions, sent as written; goldens kept (one without `expected: pass` or `fail` is an error naming it; a body that does not name both verdict tools gets `W_WAZA_NO_VERDICT_TOOLS`); the rubric passes when the judge says pass (or, graded, at the upper half), so goldens can pass",
    ),
    "waza-eval": Family(
        "waza eval YAML (rubric references)",
        "`.yaml`",
        "each `type: prompt` grader's `config.rubric`: a built-in by its exact name (a file of waza's namespace, `rubrics/waza/`, where waza's pass-fail `groundedness`, `helpfulness` and `instruction-following` are; then of rubricflow's built-in library folder) or a local file by path, relative to the eval file; a name with glob characters is an error; one rubric per grader, read by its own format (the rubric named directly, plus the grader's name and model in provenance as `grader` / `grader_model`); a name no library holds or a missing file is an error naming `graders[N].config.rubric`; the judge stays rubricflow's",
    ),
    "forge": Family(
        "Forge YAML",
        "`.yaml`",
        "`rubric_id` (the rubric's id, kebab-cased; the original kept in provenance), `artifact_type` (look-up: `Library.find(artifact_type=...)`), anchors as a map, `score_N` examples, `essential`/`important` weights, `negative_criteria.fail_patterns`, thresholds on the 1-5 scale, `scoring: {pass_threshold, essential_minimum}` (also read at the top level), `calibration_dataset` (must be a URI, in every format). The seed's rules are errors naming the field: an anchor for every level 1-5, examples `score_1` and `score_5`, a `weight` of `essential` or `important` (or a number), each anchor's and example's text (no `null`, no empty string), `score_N` examples only at levels 1-5, thresholds that are numbers (not `true`, not a quoted `\"3.5\"`); a file in the seed's schema (with `rubric_id`) also needs a `name`, an `artifact_type` and, per criterion, a `name`, a `description`, a `threshold` (RL-05) and a `weight` of the enum, not a number (RL-06), and a `MAJOR.MINOR.PATCH` version (RL-04). rubricflow's addition: optional `goldens`",
    ),
    "paperbench": Family(
        "PaperBench / ARI",
        "`.json` tree or envelope",
        "leaves binary, parents weighted-mean groups; single-child chains folded as ARI's generator folds them (the wrapper keeps its id and weight, its requirements joined with the child's as `<parent> — <child>`, the child's leaf-only fields adopted, both nodes' `flags` kept), except a wrapper whose only child weighs 0 (kept as a group: PaperBench's 0); every node needs `id`, `requirements`, a numeric `weight` (>= 0) and `sub_tasks` (PaperBench's required fields: else an error naming the node and field, never a default); a node repeating an earlier node's id (its parent's, a sibling's, another branch's) gets `:2`, `:3`...; `task_category` / `finegrained_task_category` from the closed vocabulary and, with `rationale_from_paper`, on leaves only (null on a parent; else an error naming the node); a leaf's `rationale_from_paper` kept as its note; `flags` (on any node, from the closed list) as a leaf's `flag:` tags and a parent's in provenance `group_flags`; a graded tree's scores become a golden (and, with `rubricflow labels`, labels of every node). An ARI envelope (`version: \"3\"`) is validated against its JSON Schema (Draft 2020-12, `rubrics/importers/replication_schema.py`; the first violation names its field; `generator.temperature` and `generator.seed` required, every node `id` a uuid v4, where a bare tree's ids may be anything), its `rubric_sha256` is verified over the envelope minus itself and `audit` (an envelope without `version`: over the tree), and `reproduce_contract`, `generator` and `audit` are kept in provenance",
    ),
    "healthbench": Family(
        "HealthBench",
        "`.json`, `.jsonl`",
        "signed-point items, `points` scoring; the released files (`2025-05-07-06-14-12_oss_eval.jsonl`: one example a line) import as one rubric a line, an error naming the line",
    ),
    "evals": Family(
        "OpenAI Evals model-graded",
        "`.yaml`",
        "`choice_strings` (a string of one-character choices, a list, or `from_n` / `from_n_abc` / `from_n_ABC`: one choice per numbered `{completionN}` slot of the prompt) as a nominal scale, `choice_scores` (a map, or `from_strings`) normalised to [0, 1]; `args.criteria` gives one criterion per entry; `format_type` (`in_message` by default; `out_message`: the prompt follows the input and the completion as a conversation) and `output_template` (or the earlier `completion_sample_templates`: how several completions fill one `{completion}` slot) read as openai/evals reads them and told to the judge; a registry file with several specs imports as several rubrics, and a file holding one spec at the top level (as `evals/registry/modelgraded/` keeps them) is named by the file",
    ),
    "prometheus": Family(
        "Prometheus",
        "`.jsonl`, `.json`, `.yaml`",
        "one rubric per line: `criteria` and `scoreN_description` levels (also inside `score_rubric` or prometheus-eval's `rubric_data` with an `instruction` beside it, a map of such records by name, or with the Preference Collection's `orig_` prefix); a bare map of levels as Ragas' `RubricsScore` takes it (0-based or not); levels must be consecutive and texts, or the field is named in an error",
    ),
    "prometheus_prompt": Family(
        "Prometheus grading prompt",
        "`.txt`, `.md`",
        "the `###Score Rubrics:` block inside an absolute-grading prompt: `[criteria]`, `Score 1:` .. `Score 5:`",
    ),
    "geval": Family(
        "G-Eval criteria prompt",
        "`.txt`, `.md`",
        "`Evaluation Criteria:` (`Coherence (1-5) - ...`, levels inline or not), `Evaluation Steps:` (if any) kept as instructions, `{{Document}}` slots noted",
    ),
    "prompty": Family(
        "Prompty (Azure AI Evaluation's built-in evaluators, Prompt flow)",
        "`.prompty`; `.jinja2`, `.txt` without frontmatter",
        'frontmatter `name`, `description`, `inputs` (kept in provenance), `model` named as ignored (the judge settings are rubricflow\'s); the template\'s `system:` turn becomes the persona; the scale from `## [Trait: N] (Label)` headings under `# Ratings` (their `**Definition:**` text; examples left in the prompt) or `One star:` ... `Five stars:` lines, or as Prompt flow\'s own evaluators state it in prose (`This correctness value should always be an integer between 1 and 5`: a criterion per sentence, its two ends as levels; a 0/1 answer `{"apology": 0} or {"apology": 1}`: a yes/no criterion); turns also as `# system:` headings; `# Definition` is the goal; a template without frontmatter (Prompt flow\'s `.jinja2` evaluation prompts: `system:` / `user:` turns with a scale in them, or "a score from 1 to 5 for X, where 1 means poor") is read the same way; G-Eval, Prometheus and FLASK prompts are read from `.jinja2` files too',
    ),
    "scored_prompt": Family(
        "Judge prompt with a scoring scale (Azure AI Foundry's prompt-based evaluators)",
        "`.txt`, `.md`",
        "a prompt with a scoring-scale section (`### Scoring Scale (1–5):`, `Rating scale`, `Score rubric`...) holding at least two levels (`5 → Fully grounded. ...`, `1: ...`): one criterion named by the evaluator the prompt says it is (`You are a Groundedness Evaluator`) or the file, the text before the first heading as the goal, slots noted; a heading with no levels under it is no rubric",
    ),
    "evaluator": Family(
        "Evaluator YAML (Azure AI Evaluation / waza style)",
        "`.yaml`",
        "`evaluation_criteria` with weights and `rating_levels` (or one `rating_levels`), `threshold`, `input_mapping`, `chain_of_thought`; an umbrella (`sub_rubrics: [{file, weight}]`) reads its sibling files into weighted groups. `evaluation_criteria` written as PROSE is the judge's instructions, with one `rating_levels` list `[{value, label, normalized_score, description}]`: `score_type: binary` (levels 0 and 1, or written `value: true` / `false`, which alone also mean pass/fail; `binary_flag` is binary too) or `ordinal`; a `chain_of_thought` text is kept as the author's reasoning instruction (`true`: a generic one); levels whose `normalized_score` (or `score_normalization.mapping`) is not the linear min-max map keep the author's scores (a nominal scale); levels written as a map (`{1: {...}}`, `{true: ..., false: ...}`) read as the list, each level's `examples` kept; a pass/fail evaluator without a threshold passes on its pass level; `output_format` is shown to the judge as the author's output template; `source`, `score_type`, `score_normalization` are kept in provenance",
    ),
    "graders": Family(
        "OpenAI Evals grader export",
        "`.json`",
        'an eval object (or the API\'s `{"object": "list", "data": [...]}`: one rubric per eval) with `testing_criteria`: `label_model` (labels as categories, `passing_labels` score 1, its `input` messages as instructions), `score_model` (a number over `range`, `pass_threshold`), `string_check` and `text_similarity` (deterministic checks rubricflow has no engine for: a criterion the judge decides, the check as its mechanical rule, `pass_threshold` kept); every grader must pass; `python` / `multi` graders are refused by name',
    ),
    "phoenix": Family(
        "Phoenix classification evaluator",
        "`.yaml`",
        "Arize Phoenix's evaluator configs: `messages` (the grader's template) as instructions, `choices` (label: score) as a nominal scale normalised to 0-1, `optimization_direction: minimize` inverts the score, `details` describes the criterion; a choice score that is not a number is an error naming it",
    ),
    "promptfoo": Family(
        "promptfoo",
        "`promptfooconfig.yaml`, asserts file, test-case file",
        "`llm-rubric` (pass/fail) and `g-eval` (1-5 levels; `threshold` 0 to 1, as promptfoo scores it) assertions of `defaultTest`, every test and `assert-set`s; `value` as text, a list of criteria or `file://PATH` beside the config; `metric` names the criterion, `weight` weighs it; a `threshold` or `weight` that is not a number, or out of range, is an error naming it; other assertion types are promptfoo's own checks and are left out; a custom grading prompt (`rubricPrompt`, text, chat messages or a file of them) becomes the instructions; one rubric asserted once per judge is one criterion, each judge's `metric` kept as a `metric:` tag; and a config graded by that prompt alone one pass/fail criterion, as is an `llm-rubric` assertion with no `value` that the prompt grades",
    ),
    "flask": Family(
        "FLASK-style skill sets",
        "`.json`, `.yaml`; `.txt`",
        "each skill a criterion with its 1-5 scoring levels, grouped by primary ability; FLASK's grading prompt as text: a `[Skill 1. Name]` block per skill (its question, then `Score 1:` .. `Score 5:`), the text before the first skill as the goal, `{question}`-style slots noted; a skill without levels is an error naming it",
    ),
    "jsonl": Family(
        "JSON Lines",
        "`.jsonl`",
        "one record a line, each read by the format its shape belongs to (a Prometheus record, a HealthBench example, or any YAML/JSON format above); an error names the line",
    ),
}

_PROMPTFOO_LEFT = {
    "prompts*": "the prompts under test are promptfoo's, not the rubric's",
    "providers*": "the judge is rubricflow's (`--model`, `--base-url`)",
    "defaultTest.options.provider*": "the judge is rubricflow's (`--model`, `--base-url`)",
    "redteam*": "promptfoo's red-team generator, not a rubric",
    "*vars*": "a test's inputs: the texts rubricflow scores come from the corpus",
    "[].description": "a test case's label, not a criterion",
    "tests[].description": "a test case's label, not a criterion",
    "*assert[].provider*": "the judge is rubricflow's (`--model`, `--base-url`)",
    "[].tags": "a test case's label, not a criterion",
    "*.assert[].value": "promptfoo's own check (javascript, contains, ...), not a judge criterion",
    "*assert[].config*": "the grading model's settings (temperature, tokens): the judge is rubricflow's",
    "env*": "promptfoo's run environment (timeouts, keys), not the rubric's",
}

_XML_HOW = {
    "mission*": "the rubric's goal",
    "goal*": "the rubric's goal",
    "purpose*": "the rubric's goal",
    "what_to_judge*": "the judge's instructions",
    "inputs*": "the required inputs",
    "definitions*": "definitions, in the prompt",
    "decision_logic*": "decision rules, each with its verdict",
    "mapping_examples*": "mapping examples (input, response => verdict), in the prompt",
    "scoring_guidance*": "each verdict's score",
    "output_schema*": "the verdict space, output constraints and template",
    "output.*": "the verdict space, output constraints and template",
    "*disqualifiers*": "disqualifiers",
    "*criterion*": "criteria: description, anchors, patterns, rules, notes",
    "regex_library*": "patterns (a grouped list: one per member)",
    "pattern_library*": "patterns (a grouped list: one per member)",
    "patterns*": "patterns",
    "advice_rules*": "advice rules",
    "validation*": "validation rules",
    "scoring*": "the scoring formula and labels",
    "rubricflow_document*": "rubricflow's lossless copy (an export re-imports to the same hash)",
    "*": "read by the spec reader",
}

FORMATS: list[Format] = [
    # text formats, recognised on the raw text, in order
    Format(
        "Prompty",
        "prompty",
        "a `.prompty` file (frontmatter, then a template)",
        prompty.looks_like_prompty,
        _one(prompty.import_prompty),
        text=True,
    ),
    Format(
        xml_spec.FORMAT_NAME,
        "xml",
        "a `.xml` file, or text opening with `<LLM_JUDGE_SPEC`",
        lambda text, path: path.suffix.lower() == ".xml" or _stripped(text).startswith("<LLM_JUDGE_SPEC"),
        _one(xml_spec.import_xml),
        text=True,
        fields=_XML_HOW,  # what is read: xml_spec.READ, by element
    ),
    Format(
        "Prometheus grading prompt",
        "prometheus_prompt",
        "a text prompt with a `###Score Rubrics:` block",
        _prompt_text(prompt_text.looks_like_prometheus_block),
        _one(prompt_text.import_prometheus_block),
        text=True,
    ),
    Format(
        "G-Eval criteria prompt",
        "geval",
        "a text prompt with `Evaluation Criteria:`",
        _prompt_text(prompt_text.looks_like_geval),
        _one(prompt_text.import_geval),
        text=True,
    ),
    Format(
        "FLASK evaluation prompt",
        "flask",
        "a text prompt with `[Skill 1. Name]` blocks",
        _prompt_text(prompt_text.looks_like_flask_prompt),
        _one(prompt_text.import_flask_prompt),
        text=True,
    ),
    Format(
        "judge prompt with a scoring scale",
        "scored_prompt",
        "a text prompt with a scoring-scale section of two levels or more",
        _prompt_text(prompt_text.looks_like_scored_prompt),
        _one(prompt_text.import_scored_prompt),
        text=True,
    ),
    Format(
        "chat template (a Prompty body)",
        "prompty",
        "a template without frontmatter in `system:` / `user:` turns",
        prompty.looks_like_chat_template,
        _one(prompty.import_chat_template),
        text=True,
    ),
    Format(
        "Markdown with YAML frontmatter",
        "markdown",
        "any other `.md` / `.txt` / `.prompt` / `.jinja2` file",
        lambda text, path: path.suffix.lower() in TEXT_SUFFIXES,
        _one(markdown.import_markdown),
        text=True,
        fields={
            "name": "the rubric's id (kebab-case, as written) and its criterion's title",
            "version": "the rubric's version",
            "description": "the rubric's goal and its criterion's description",
            "scale": "the criterion's scale (pass-fail, or graded 1-5)",
            "goldens*": "the rubric's goldens (input, output, expected)",
        },
    ),
    Format(
        "JSON Lines (a rubric a line)",
        "jsonl",
        "a `.jsonl` file",
        lambda t, p: p.suffix.lower() == ".jsonl",
        _import_jsonl,
        text=True,
    ),
    # data formats, recognised on parsed YAML/JSON, in order: the first that takes the data reads it
    Format(
        "waza eval YAML",
        "waza-eval",
        "`graders` with a `type: prompt` grader naming a `config.rubric`",
        _mapping(waza_eval.looks_like_waza_eval),
        waza_eval.import_waza_eval,
        fields={
            "graders": "the eval's graders: each prompt grader's rubric is read",
            "graders[].type": "`prompt` graders name a rubric; others are waza's own checks",
            "graders[].config": "the grader's settings",
            "graders[].config.rubric": "the rubric: a built-in by name, or a file by path",
            "graders[].name": "kept in the rubric's provenance as `grader`",
            "graders[].config.model": "kept in provenance as `grader_model`; the judge stays rubricflow's (`--model`, `--base-url`)",
        },
    ),
    Format(
        "OpenAI Evals grader export",
        "graders",
        "`testing_criteria` (an eval object, or the API's `{object: list, data: [...]}`)",
        _mapping(openai_graders.looks_like_export),
        openai_graders.import_export,
        fields={
            "testing_criteria*": "one criterion per grader",
            "data*": "one rubric per eval of a list",
            "name": "the rubric's title and id",
            "id": "kept in provenance",
            "metadata*": "kept in provenance",
            "created_at": "kept in provenance",
            "object": "tells an eval from a list of them",
            "data_source_config*": "the item schema, kept in provenance",
        },
        left={
            "first_id": "the API's paging",
            "last_id": "the API's paging",
            "has_more": "the API's paging",
            "data[].object": "the API's type tag of each eval",
            "*content[].type": "a content part's type: its text is read",
        },
    ),
    Format(
        "native",
        "native",
        "a `metadata` key",
        _mapping(lambda d: "metadata" in d),
        _one(rubric_from_data),
        fields={"*": "rubricflow's own schema (an unknown field is an error)"},
    ),
    Format(
        "PaperBench envelope",
        "paperbench",
        "`rubric_sha256`",
        _mapping(lambda d: "rubric_sha256" in d),
        _one(paperbench.import_envelope),
        fields={
            "rubric*": "the tree (criteria and weighted groups)",
            "rubric_sha256": "verified over the envelope minus itself and `audit`",
            "version": "the envelope's schema version (3: validated by JSON Schema)",
            "*": "kept in provenance",
        },
    ),
    Format(
        "PaperBench tree",
        "paperbench",
        "`sub_tasks` and `requirements`",
        _mapping(lambda d: "sub_tasks" in d and "requirements" in d),
        _one(paperbench.import_tree),
        fields={"*": "the tree: leaves as criteria, parents as weighted groups; a graded leaf's score as a golden"},
        left={
            "*score": "a graded parent's score: recomputed as the weighted mean of its children",
            "*explanation": "the grader's explanation of one grading run",
            "*judge_metadata*": "the grader's metadata of one grading run",
            "*valid_score": "whether one grading run's score was valid",
            "id": "the inner ids of a folded single-child chain: the chain keeps its wrapper's id (seed 003, ARI's fold)",
            "*.id": "the inner ids of a folded single-child chain: the chain keeps its wrapper's id (seed 003, ARI's fold)",
        },
    ),
    Format(
        "HealthBench",
        "healthbench",
        "a `rubrics` list",
        _mapping(lambda d: isinstance(d.get("rubrics"), list)),
        _one(healthbench.import_healthbench),
        fields={"rubrics*": "one signed-point criterion per item", "*": "kept in provenance"},
        left={
            "canary": "the data set's contamination canary, not a rubric",
            "ideal_completions_data*": "reference completions, not a rubric",
        },
    ),
    Format(
        "Prometheus record",
        "prometheus",
        "`score_rubric` or `rubric_data`, or `scoreN_description` levels",
        _mapping(lambda d: any(k in d for k in prometheus.RUBRIC_KEYS) or prometheus.looks_like_levels(d)),
        _one(prometheus.import_record),
        fields={"*": "the criterion and its levels"},
    ),
    Format(  # prometheus-eval's {name: {instruction, rubric_data}}: one rubric per name
        "Prometheus records by name",
        "prometheus",
        "a map of names to records with `rubric_data`",
        _mapping(prometheus.looks_like_named_records),
        lambda d, p: [prometheus.import_record(r, p, name=str(n)) for n, r in d.items()],
        fields={"*": "one rubric per name: the criterion and its levels"},
    ),
    Format(  # a registry file: one rubric per spec
        "OpenAI Evals registry",
        "evals",
        "a map of names to specs, each with a `prompt`",
        _mapping(_registry),
        lambda d, p: [evals.import_evals({n: s}, p) for n, s in d.items()],
        fields={
            "*": "one rubric per spec: prompt, choice_strings, choice_scores, args, eval_type; format_type "
            "(out_message: the prompt follows the input and the completion as a conversation, told to the judge) "
            "and output_template / completion_sample_templates (how several completions fill one slot, told to "
            "the judge), both kept in provenance; input_outputs checked for out_message (one pair)"
        },
        left={
            "*.prompt[].role": "the chat roles: the messages' contents are joined as instructions",
            "*.input_outputs*": "which sample fields fill the prompt: the corpus's columns do",
        },
    ),
    Format(  # one spec at the top level, named by its file (openai/evals' modelgraded/)
        "OpenAI Evals model-graded spec",
        "evals",
        "`prompt` and `choice_strings` at the top level",
        _mapping(evals.looks_like_spec),
        lambda d, p: [evals.import_evals({p.stem: d}, p)],
        fields={
            "prompt*": "the grader's instructions",
            "choice_strings*": "a nominal scale (or best-of-n with `from_n`)",
            "choice_scores*": "each choice's score, normalised to [0, 1]",
            "args*": "`criteria`: one criterion per entry",
            "eval_type": "how the answer is given (cot_classify, classify_cot, classify)",
            "format_type": "in_message (the prompt holds the sample in its slots) or out_message (the prompt follows "
            "the input and the completion as a conversation, told to the judge); kept in provenance",
            "output_template": "how several completions fill one `{completion}` slot (`{i}. {output}`), told to the "
            "judge and kept in provenance",
            "completion_sample_templates*": "output_template's earlier form (slot -> template), read as it",
            "input_outputs": "with format_type out_message: checked to hold one input: completion pair",
        },
        left={
            "input_outputs*": "which sample fields fill the prompt: the corpus's columns do",
            "prompt[].role": "the chat roles: the messages' contents are joined as instructions",
        },
    ),
    Format(
        "Phoenix classification evaluator",
        "phoenix",
        "`messages` and `choices`",
        _mapping(phoenix.looks_like_phoenix),
        _one(phoenix.import_phoenix),
        fields={
            "messages*": "the grader's template, as instructions",
            "inputs": "the template's slots (what the corpus must hold)",
            "choices*": "a nominal scale (label: score)",
            "optimization_direction": "minimize inverts the score",
            "details": "the criterion's description",
            "description": "the rubric's goal",
            "name": "the rubric's id",
            "category": "kept as a tag",
        },
        left={
            "inputs.*": "the template's slots: the corpus's columns fill them",
            "labels*": "Phoenix's own catalogue labels",
            "substitutions*": "Phoenix's template substitutions",
            "kind": "Phoenix's evaluator kind",
            "recommended": "Phoenix's catalogue flag",
            "scope": "Phoenix's catalogue scope",
            "specification*": "Phoenix's catalogue entry",
        },
    ),
    Format(
        "promptfoo",
        "promptfoo",
        "`llm-rubric` / `g-eval` assertions (`assert`, `tests`, `defaultTest`, or a list of them)",
        lambda data, path: promptfoo.looks_like_promptfoo(data),
        _one(promptfoo.import_promptfoo),
        fields={
            "*assert*": "llm-rubric / g-eval assertions: one criterion each (value, metric, weight, threshold)",
            "defaultTest.options*": "`rubricPrompt`: the grading prompt, as instructions",
            "defaultTest": "assertions and options every test shares",
            "description": "the rubric's goal",
            "tests*": "each test's assertions",
            "[]*": "a list of assertions or test cases",
        },
        left=_PROMPTFOO_LEFT,
    ),
    Format(
        "evaluator YAML",
        "evaluator",
        "`evaluation_criteria` or `rating_levels`",
        _mapping(evaluator_yaml.looks_like_evaluator),
        _one(evaluator_yaml.import_evaluator),
        fields={
            "evaluation_criteria*": "criteria with weights (a list) or the judge's instructions (prose)",
            "rating_levels*": "the scale's levels (value, label, normalized_score, description)",
            "score_type": "binary (or binary_flag) or ordinal scale",
            "score_normalization*": "the levels' scores; kept in provenance",
            "threshold": "the pass threshold",
            "input_mapping*": "the required inputs",
            "chain_of_thought": "asks for reasoning first (its text, when it is text, kept as the instruction)",
            "output_format*": "the author's answer shape, shown to the judge as the output template (and kept in provenance)",
            "sub_rubrics*": "sibling files read into weighted groups",
            "name": "the rubric's id and title",
            "description": "the rubric's goal",
            "version": "the rubric's version",
            "source": "kept in provenance",
        },
    ),
    Format(
        "FLASK-style skill set",
        "flask",
        "skills with `Scoring` levels (a list, or a map under `skills`)",
        lambda data, path: skillset.looks_like_skillset(data),
        _one(skillset.import_skillset),
        fields={"*": "each skill a criterion with its 1-5 levels, grouped by ability"},
    ),
    Format(
        "Forge YAML",
        "forge",
        "`criteria` with `anchors` (and `rubric_id` / `artifact_type`)",
        _mapping(forge.looks_like_forge),
        _one(forge.import_forge),
        fields={
            "rubric_id": "the rubric's id (kebab-cased; the original kept in provenance)",
            "artifact_type": "the rubric's artifact type (library look-up)",
            "criteria*": "criteria: anchors, examples, weight, threshold",
            "negative_criteria*": "disqualifiers with their fail patterns",
            "scoring*": "pass_threshold and essential_minimum",
            "pass_threshold": "the pass threshold",
            "essential_minimum": "the minimum of every essential criterion",
            "calibration_dataset": "kept (must be a URI)",
            "goldens*": "the rubric's goldens",
            "name": "the rubric's title",
            "id": "the rubric's id (when there is no `rubric_id`)",
            "title": "the rubric's title",
            "tags": "the rubric's tags",
            "goal": "the rubric's goal",
            "description": "the rubric's description (and goal)",
            "version": "the rubric's version",
        },
    ),
]


def family_of(fmt: Format) -> Family:
    return FAMILIES[fmt.family]


def docs_table() -> str:
    """The table of formats in docs/rubrics.md, row by row from the registry."""
    rows = ["| format | file | recognised by | notes |", "|---|---|---|---|"]
    for key, family in FAMILIES.items():
        signs = "; ".join(f.recognised_by for f in FORMATS if f.family == key)
        rows.append(f"| {family.title} | {family.files} | {signs} | {family.notes} |")
    return "\n".join(rows)


def expected_shapes() -> str:
    """What a data file may look like, for the error that refuses one no format takes."""
    return "; ".join(f"{f.name} ({f.recognised_by})" for f in FORMATS if not f.text)
