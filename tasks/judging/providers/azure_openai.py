"""Azure OpenAI's deployment API: chat completions at
https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT/chat/completions?api-version=VERSION,
the key in an `api-key` header instead of `Authorization: Bearer`. The body and answer are OpenAI's,
so only the key's header and the version's query differ. (Azure's newer `/openai/v1` endpoint is
OpenAI-compatible as it is: the default provider.)
Spec: https://learn.microsoft.com/azure/ai-foundry/openai/reference"""

from __future__ import annotations

import os
from typing import Any

from openai import Omit

from . import Provider

DEFAULT_VERSION = "2024-10-21"  # the latest GA data-plane version when this was written


class AzureOpenAI(Provider):
    name = "azure"
    key_variables = ("AZURE_OPENAI_API_KEY",)
    base_url_variable = "AZURE_OPENAI_BASE_URL"  # the deployment's URL; Azure has no public default
    batch = False  # Azure's Batch API takes its own deployments and file routes

    def headers(self, key: str) -> dict[str, Any]:
        return {"api-key": key}

    def request_headers(self) -> dict[str, Any]:
        return {"Authorization": Omit()}  # the key goes in api-key only

    def query(self) -> dict[str, str]:
        return {"api-version": os.environ.get("AZURE_OPENAI_API_VERSION") or DEFAULT_VERSION}
