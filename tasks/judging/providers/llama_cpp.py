"""llama.cpp's OpenAI-compatible servers (the C++ `llama-server` and llama-cpp-python's
`python -m llama_cpp.server`): chat completions as OpenAI's, plus the request fields llama.cpp
adds, of which the judge sends one: `grammar` (GBNF), which holds a decision's answer to the
criterion's levels (Gemma 3 270M, asked for a level in words alone, answered "You are").
Both servers constrain `{"type": "json_object", "schema": ...}` by grammar, and llama-cpp-python
answers json_schema with a 500, so the output modes start at json_object. No Batch API, no
`prompt_cache_key` (the server caches its last prompt's prefix by itself).
Spec: https://github.com/ggml-org/llama.cpp/tree/master/tools/server (`grammar`);
llama_cpp/server/types.py `CreateChatCompletionRequest.grammar` (llama-cpp-python)."""

from __future__ import annotations

from .base import Capabilities, Provider


class LlamaCpp(Provider):
    name = "llamacpp"
    otel_name = "llama.cpp"  # not among the GenAI conventions' names: the project's own spelling
    default_base_url = "http://127.0.0.1:8080/v1"  # llama-server's default; OPENAI_BASE_URL overrides it
    capabilities = Capabilities(
        batch=None,
        prompt_cache_key=False,
        decision_grammar=True,
        output_modes=("json_object", "tools", "text"),
    )
