"""deploy/prefect.yaml as Prefect reads it: its site-specific parameters come from the environment
(`prefect deploy`'s own templating), a placeholder left unset is refused by the flow in one line,
every parameter is one its flow takes (Prefect's own validation), and the score-on-ingest trigger is
a valid Prefect deployment trigger on the event the ingest flow emits. (The trigger firing for real,
on a Prefect server with a worker: tests/flows/test_production_layout.py.)"""

import datetime as dt
import os
from pathlib import Path
from uuid import uuid4

import pytest
import yaml
from prefect.cli.deploy._triggers import _initialize_deployment_triggers
from prefect.events import DeploymentEventTrigger
from prefect.flows import load_flow_from_entrypoint
from prefect.utilities.templating import apply_values

from rubricflow.errors import InputError
from rubricflow.flows.deploy_params import refuse_unset

ROOT = Path(__file__).resolve().parents[1]
ENV = {
    "RUBRICFLOW_HOME": "/srv/rubricflow",
    "RUBRICFLOW_SOURCE": "/srv/corpus.jsonl",
    "RUBRICFLOW_WAREHOUSE": "/srv/w.duckdb",
    "RUBRICFLOW_RUBRIC": "llm-slop",
    "RUBRICFLOW_RUBRIC_B": "/srv/llm-slop-v2.yaml",
    "RUBRICFLOW_MODEL": "gpt-4.1-mini",
}


def _deployments(monkeypatch, env: dict) -> dict[str, dict]:
    """The deployments as `prefect deploy` resolves them (it reads `{{ $NAME }}` from os.environ)."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = apply_values(yaml.safe_load((ROOT / "deploy/prefect.yaml").read_text()), os.environ, remove_notset=False)
    return {d["name"]: d for d in config["deployments"]}


def test_site_parameters_come_from_the_environment_and_each_is_one_its_flow_takes(monkeypatch):
    deployments = _deployments(monkeypatch, ENV)
    assert set(deployments) == {"nightly", "score-on-ingest", "compare"}
    nightly = deployments["nightly"]["parameters"]
    assert nightly["source"] == "/srv/corpus.jsonl" and nightly["warehouse_path"] == "/srv/w.duckdb"
    assert nightly["rubrics"] == ["llm-slop"] and nightly["judge"] == {"model": "gpt-4.1-mini"}
    assert "/data/" not in (ROOT / "deploy/prefect.yaml").read_text()  # no path that exists nowhere
    for d in deployments.values():
        flow = load_flow_from_entrypoint(str(ROOT / d["entrypoint"]))
        triggered = {k: v for t in d.get("triggers", []) for k, v in t.get("parameters", {}).items()}
        flow.validate_parameters(d["parameters"] | triggered)  # raises on a name or type the flow refuses
        refuse_unset(**d["parameters"])


def test_each_deployment_takes_its_judge_as_a_typed_parameter_whose_fields_prefect_shows(monkeypatch):
    """`judge` is a JudgeConfig parameter (the scoring runs' settings a RunOptions): Prefect's schema
    for the deployment lists their fields with their help, and validates the deployed dict into one."""
    from prefect.utilities.callables import parameter_schema

    from rubricflow.tasks.judging.config import JudgeConfig

    for d in _deployments(monkeypatch, ENV).values():
        flow = load_flow_from_entrypoint(str(ROOT / d["entrypoint"]))
        schema = parameter_schema(flow.fn).model_dump_for_openapi()
        fields = schema["definitions"]["JudgeConfig"]["properties"]
        assert {"model", "top_p", "rpm", "budget_usd"} <= set(fields) and "api_key" not in fields
        assert fields["top_p"]["description"].startswith("Nucleus sampling")
        given = d["parameters"] | {k: v for t in d.get("triggers", []) for k, v in t.get("parameters", {}).items()}
        judges = {k: v for k, v in flow.validate_parameters(given).items() if k in ("judge", "judge_a", "judge_b")}
        assert judges and all(isinstance(j, JudgeConfig) and j.model == "gpt-4.1-mini" for j in judges.values())
        if d["name"] != "compare":
            assert "max_cells" in schema["definitions"]["RunOptions"]["properties"]


def test_a_placeholder_left_unset_is_refused_naming_its_variable(monkeypatch):
    nightly = _deployments(monkeypatch, {})["nightly"]["parameters"]
    assert nightly["source"] == "{{ $RUBRICFLOW_SOURCE }}"  # what Prefect deploys when the variable is unset
    with pytest.raises(InputError, match=r"parameter source .*RUBRICFLOW_SOURCE was unset.*export RUBRICFLOW_SOURCE"):
        refuse_unset(**nightly)
    with pytest.raises(InputError, match=r"parameter judge .*RUBRICFLOW_MODEL was unset"):  # once validated, too
        refuse_unset(
            judge=load_flow_from_entrypoint(str(ROOT / "flows/score.py:score_corpus")).validate_parameters(
                {"corpus_id": "c", "rubric": "r", "warehouse_path": "w", "judge": nightly["judge"]}
            )["judge"]
        )


def test_the_score_on_ingest_trigger_is_a_valid_prefect_trigger_on_the_ingest_event(monkeypatch):
    """Parsed as `prefect deploy` parses it, made the automation it creates, read by the Prefect
    server's own automation model: it covers the ingest's event (and not a run's), and its
    parameters render from that event as the server's RunDeployment action renders them."""
    from prefect.server.events.actions import RunDeployment
    from prefect.server.events.schemas.automations import AutomationCore
    from prefect.server.events.schemas.events import ReceivedEvent
    from prefect.utilities.schema_tools.hydration import HydrationContext, hydrate

    spec = _deployments(monkeypatch, ENV)["score-on-ingest"]
    [trigger] = _initialize_deployment_triggers("score-on-ingest", spec["triggers"])
    assert isinstance(trigger, DeploymentEventTrigger)
    trigger.set_deployment_id(uuid4())
    automation = AutomationCore.model_validate(trigger.as_automation().model_dump(mode="json"))
    ingested = _event(
        "rubricflow.corpus.ingested", "rubricflow.corpus.replies", corpus_id="replies", warehouse_path="/srv/w.duckdb"
    )
    assert automation.trigger.covers(ReceivedEvent.model_validate(ingested))
    assert not automation.trigger.covers(
        ReceivedEvent.model_validate(_event("rubricflow.run.completed", "rubricflow.run.r1"))
    )
    [action] = automation.actions
    assert isinstance(action, RunDeployment)
    parameters = dict(action.parameters or {})
    RunDeployment._upgrade_v1_templates(parameters)
    context = HydrationContext(render_jinja=True, jinja_context={"event": ReceivedEvent.model_validate(ingested)})
    assert hydrate(parameters, context) == {"corpus_id": "replies", "warehouse_path": "/srv/w.duckdb"}


def _event(name: str, resource_id: str, **payload) -> dict:
    return {
        "id": str(uuid4()),
        "occurred": dt.datetime.now(dt.UTC).isoformat(),
        "event": name,
        "resource": {"prefect.resource.id": resource_id},
        "payload": payload,
    }


def test_an_empty_parameter_as_the_real_prefect_deploy_leaves_it_is_refused_naming_its_variable():
    """The real CLI templates twice, so an unset variable deploys '' (tests/flows/test_deploy_unset.py
    runs it): an empty source was the current folder, ingested and judged whole."""
    for given, variable in (
        ({"source": ""}, "RUBRICFLOW_SOURCE"),
        ({"rubrics": [""]}, "RUBRICFLOW_RUBRIC"),
        ({"warehouse_path": "  "}, "RUBRICFLOW_WAREHOUSE"),
        ({"judge": {"model": ""}}, "RUBRICFLOW_MODEL"),
    ):
        with pytest.raises(InputError, match=rf"parameter {next(iter(given))} is empty: .*export {variable} "):
            refuse_unset(**given)
    with pytest.raises(InputError, match=r"parameter corpus_id is empty: give it a value$"):
        refuse_unset(corpus_id="")
    refuse_unset(source="s.jsonl", rubrics=["r"], judge={"model": "m"}, limit=None)


def test_an_empty_command_line_argument_is_refused_before_the_command_runs():
    from rubricflow.cli import refuse_empty_arguments

    with pytest.raises(InputError, match=r"an argument of `rubricflow ingest` is empty"):
        refuse_empty_arguments(["ingest", ""])
    with pytest.raises(InputError, match=r"option --corpus is empty"):
        refuse_empty_arguments(["score", "--corpus=", "-r", "r"])
    with pytest.raises(InputError, match=r"option -w is empty"):
        refuse_empty_arguments(["labels", "plan", "-w", " "])
    refuse_empty_arguments(["ingest", "x.jsonl", "-c", "c"])


def test_a_path_variable_set_but_empty_is_refused_not_read_as_the_default(tmp_path):
    """An outside probe: `RUBRICFLOW_WAREHOUSE= rubricflow ingest ...` (a shell variable that expanded
    to nothing) wrote ./warehouse/rubricflow.duckdb in the current folder and ended successful."""
    import subprocess

    from tests.conftest import EXE

    (tmp_path / "c.jsonl").write_text('{"id": "a", "text": "hello there"}\n')
    for variable in ("RUBRICFLOW_WAREHOUSE", "RUBRICFLOW_STATE_DIR"):
        env = {**os.environ, variable: " "}
        done = subprocess.run(
            [EXE, "ingest", "c.jsonl", "-c", "c"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"{variable} is set but empty: unset it for the default, or name a path" in done.stderr
    assert not (tmp_path / "warehouse").exists()
