"""Where a judge's API key is read from: the providers' usual environment variables (seed 001's
table), chosen by the endpoint's host, else the wire API's own variable (OPENAI_API_KEY,
ANTHROPIC_API_KEY). The key is read when a client is made and never stored: not in JudgeConfig,
flow parameters, run records or logs (secrets.scrub removes every one of these variables' values)."""

from __future__ import annotations

from urllib.parse import urlsplit

# host (or a parent domain of it) -> the variable that provider's key is usually kept in
HOST_KEYS = {
    "api.deepseek.com": "DEEPSEEK_API_KEY",
    "api.openai.com": "OPENAI_API_KEY",
    "api.anthropic.com": "ANTHROPIC_API_KEY",
    "generativelanguage.googleapis.com": "GEMINI_API_KEY",
    "api.groq.com": "GROQ_API_KEY",
    "api.x.ai": "XAI_API_KEY",
    "api.mistral.ai": "MISTRAL_API_KEY",
    "openrouter.ai": "OPENROUTER_API_KEY",
    "api.together.xyz": "TOGETHER_API_KEY",
    "api.together.ai": "TOGETHER_API_KEY",
    "api.fireworks.ai": "FIREWORKS_API_KEY",
    "api.cerebras.ai": "CEREBRAS_API_KEY",
    "huggingface.co": "HF_TOKEN",
}


def key_variable_for(base_url: str | None, default: str) -> str:
    """The variable holding the key for `base_url`: its host's provider's, else `default`."""
    host = (urlsplit(base_url).hostname or "") if base_url else ""
    for known, variable in HOST_KEYS.items():
        if host == known or host.endswith("." + known):
            return variable
    return default
