"""Everything the flows and the CLI call, by kind, each layer importing only the ones before it:
runtime (process plumbing), judging (the model client), loaders, stats, standins (servers in a
model's place), improve, presentation, pipeline (the Prefect @task wrappers). tests/test_structure.py
holds the order."""
