"""Making rubrics better with a model: goldens, drafting a rubric from a source, the reflection step
and the rounds of `improve evolve`.
"""
