"""Servers that stand in for a model on this machine: the offline judge (deterministic, no model) and
its OpenAI-compatible HTTP server with its Batch API, and llama.cpp serving a real small model.
"""
