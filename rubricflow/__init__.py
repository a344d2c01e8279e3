"""rubricflow: a rubric compiler and LLM-judge engine, run as a Prefect batch pipeline over DuckDB.

The Python API (docs/python.md)::

    import rubricflow as rf

    rubric = rf.load_rubric("llm-slop")
    judge = rf.Judge(base_url="http://127.0.0.1:8000/v1", model="gpt-4.1-mini")
    judge.evaluate(rubric, "some text").score
    rf.Warehouse("scores.duckdb").score("replies", rubric, judge)

The repository's top-level folders install as subpackages of this one namespace:
`rubricflow.rubrics` (the rubric language), `rubricflow.tasks` (the work and its Prefect tasks),
`rubricflow.flows` (the Prefect flows), `rubricflow.warehouse` (DuckDB schema, SQL and writes)
and `rubricflow.cli` (the `rubricflow` command). Importing this package imports nothing else: each
API name is imported on first use (`import rubricflow` stays as cheap as the commands need).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from rubricflow.version import __version__

# name -> the module that defines it, imported on first use
_API = {
    "load_rubric": "rubricflow.api_rubric",
    "guidance": "rubricflow.api_rubric",
    "load_calibration_cases": "rubricflow.api_rubric",
    "CompiledRubric": "rubricflow.api_rubric",
    "Judge": "rubricflow.api_judge",
    "Result": "rubricflow.api_results",
    "Results": "rubricflow.api_results",
    "CriterionScore": "rubricflow.api_results",
    "Usage": "rubricflow.api_results",
    "Warehouse": "rubricflow.api_warehouse",
    "reward_function": "rubricflow.api_verifiers",
    "verifiers_rubric": "rubricflow.api_verifiers",
    "verifiers_env": "rubricflow.api_verifiers",
    "Run": "rubricflow.api_warehouse",
    "RewardService": "rubricflow.api_reward",
    "RewardServer": "rubricflow.api_reward",
    "Ingested": "rubricflow.api_warehouse",
    "RubricflowError": "rubricflow.errors",
    "InputError": "rubricflow.errors",
    "TransientError": "rubricflow.errors",
    "CheckFailed": "rubricflow.errors",
    "EndpointRefused": "rubricflow.errors",
}

__all__ = [
    "CheckFailed",
    "CompiledRubric",
    "CriterionScore",
    "EndpointRefused",
    "Ingested",
    "InputError",
    "Judge",
    "Result",
    "Results",
    "RewardServer",
    "RewardService",
    "RubricflowError",
    "Run",
    "TransientError",
    "Usage",
    "Warehouse",
    "__version__",
    "guidance",
    "load_calibration_cases",
    "load_rubric",
    "reward_function",
    "verifiers_env",
    "verifiers_rubric",
]

if TYPE_CHECKING:
    from rubricflow.api_judge import Judge
    from rubricflow.api_results import CriterionScore, Result, Results, Usage
    from rubricflow.api_reward import RewardServer, RewardService
    from rubricflow.api_rubric import CompiledRubric, guidance, load_calibration_cases, load_rubric
    from rubricflow.api_verifiers import reward_function, verifiers_env, verifiers_rubric
    from rubricflow.api_warehouse import Ingested, Run, Warehouse
    from rubricflow.errors import CheckFailed, EndpointRefused, InputError, RubricflowError, TransientError


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'rubricflow' has no attribute {name!r}")
    value = getattr(import_module(_API[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
