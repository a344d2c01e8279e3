"""rubricflow: a rubric compiler and LLM-judge engine, run as a Prefect batch pipeline over DuckDB.

The repository's top-level folders install as subpackages of this one namespace:
`rubricflow.rubrics` (the rubric language), `rubricflow.tasks` (the work and its Prefect tasks),
`rubricflow.flows` (the Prefect flows), `rubricflow.warehouse` (DuckDB schema, SQL and writes)
and `rubricflow.cli` (the `rubricflow` command). Importing this package imports nothing else.
"""

__version__ = "0.1.0"
