"""The replication-rubric envelope's JSON Schema (Draft 2020-12), version "3", written from seed 003's
reference of ari-skill-replicate's `schemas/replication_rubric.schema.json` (the envelope, the
`reproduce_contract`, the `TaskNode` tree with its closed category vocabulary, rationale and flags).
`expected_artifacts` is optional, as in ARI's schema: its generator writes a contract without it.
Only `generator.snapshot` is optional in the generator (the seed marks it so; `temperature` and `seed`
are required). A node's `id` is a uuid v4 (the seed's `"id": "<uuid v4>"`; ARI's generator writes
uuid4): in an envelope only, as published PaperBench trees (read without one) have ids that are not.
Kept as a module so it ships with the package."""

from __future__ import annotations

import json

SCHEMA: dict = json.loads(
    r"""
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://rubricflow.invalid/schemas/replication_rubric.schema.json",
  "title": "Replication rubric envelope, version 3 (as seed 003 describes ari-skill-replicate's schema)",
  "type": "object",
  "required": ["version", "paper_sha256", "rubric_sha256", "generator", "reproduce_contract", "rubric"],
  "properties": {
    "version": {"const": "3"},
    "paper_sha256": {"$ref": "#/$defs/sha256"},
    "rubric_sha256": {"$ref": "#/$defs/sha256"},
    "generator": {
      "type": "object",
      "required": ["model", "prompt_sha256", "generated_at", "temperature", "seed"],
      "properties": {
        "model": {"type": "string", "minLength": 1},
        "prompt_sha256": {"$ref": "#/$defs/sha256"},
        "generated_at": {"type": "string", "minLength": 1},
        "temperature": {"type": "number", "minimum": 0},
        "seed": {"type": "integer"},
        "snapshot": {"type": "object"}
      }
    },
    "audit": {
      "type": "object",
      "properties": {
        "auditor_model": {"type": "string"},
        "audited_at": {"type": "string"},
        "flags_count": {"type": "integer", "minimum": 0}
      }
    },
    "reproduce_contract": {
      "type": "object",
      "required": ["script_path", "max_runtime_sec"],
      "properties": {
        "script_path": {"const": "reproduce.sh"},
        "max_runtime_sec": {"type": "integer", "minimum": 60, "maximum": 43200},
        "expected_artifacts": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "execution_profile": {"type": "object"}
      }
    },
    "rubric": {"$ref": "#/$defs/task_node"}
  },
  "$defs": {
    "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    "task_node": {
      "type": "object",
      "required": ["id", "requirements", "weight", "sub_tasks"],
      "properties": {
        "id": {"type": "string", "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$"},
        "requirements": {"type": "string", "minLength": 10},
        "weight": {"type": "number", "minimum": 0},
        "sub_tasks": {"type": "array", "items": {"$ref": "#/$defs/task_node"}},
        "task_category": {"enum": ["Code Development", "Code Execution", "Result Analysis", null]},
        "finegrained_task_category": {
          "enum": [
            "Environment & Infrastructure Setup",
            "Dataset and Model Acquisition",
            "Data Processing & Preparation",
            "Method Implementation",
            "Experimental Setup",
            "Evaluation, Metrics & Benchmarking",
            "Logging, Analysis & Presentation",
            null
          ]
        },
        "rationale_from_paper": {
          "type": "object",
          "required": ["section", "quote"],
          "properties": {
            "section": {"type": "string", "minLength": 1},
            "quote": {"type": "string", "minLength": 10}
          }
        },
        "flags": {
          "type": "array",
          "items": {"enum": ["vague_qualifier", "no_paper_evidence", "duplicate", "unverifiable"]}
        }
      }
    }
  }
}
"""
)

UUID4_PATTERN: str = SCHEMA["$defs"]["task_node"]["properties"]["id"]["pattern"]
