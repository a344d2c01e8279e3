"""Azure OpenAI's deployment API: chat completions at
https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT/chat/completions?api-version=VERSION,
the key in an `api-key` header instead of `Authorization: Bearer`. The body and answer are OpenAI's,
so only the key's header and the version's query differ. Azure has no public endpoint: the URL is
--base-url, AZURE_OPENAI_BASE_URL, or built from AZURE_OPENAI_ENDPOINT (the resource's URL, as
Azure's own SDKs read it) and the model, which on Azure names the deployment. (Azure's newer `/openai/v1` endpoint is
OpenAI-compatible as it is: the default provider.)
Spec: https://learn.microsoft.com/azure/ai-foundry/openai/reference"""

from __future__ import annotations

from typing import Any

from openai import Omit

from rubricflow.errors import InputError
from rubricflow.settings import endpoint

from .base import Capabilities, Provider

DEFAULT_VERSION = "2024-10-21"  # the latest GA data-plane version when this was written


class AzureOpenAI(Provider):
    name = "azure"
    otel_name = "azure.ai.openai"
    key_variables = ("AZURE_OPENAI_API_KEY",)
    base_url_variable = "AZURE_OPENAI_BASE_URL"  # the deployment's URL; Azure has no public default
    batch = False  # Azure's Batch API takes its own deployments and file routes
    capabilities = Capabilities(prompt_cache_key=False)  # an argument Azure may not recognise: a 400
    endpoint_variable = "AZURE_OPENAI_ENDPOINT"  # https://RESOURCE.openai.azure.com

    def base_url(self, given: str | None = None) -> str:
        """Never OpenAI's public endpoint (the Azure key would go there): no URL is an error."""
        url = given or endpoint(self.base_url_variable)
        if not url:
            raise InputError(no_endpoint())
        return url

    def derived_base_url(self, model: str) -> str | None:
        resource = (endpoint(self.endpoint_variable) or "").strip().rstrip("/")
        return f"{resource}/openai/deployments/{model}" if resource else None

    def headers(self, key: str) -> dict[str, Any]:
        return {"api-key": key}

    def request_headers(self) -> dict[str, Any]:
        return {"Authorization": Omit()}  # the key goes in api-key only

    def query(self) -> dict[str, str]:
        return {"api-version": endpoint("AZURE_OPENAI_API_VERSION") or DEFAULT_VERSION}


def no_endpoint() -> str:
    return (
        "the azure provider has no public endpoint: set AZURE_OPENAI_ENDPOINT "
        "(https://RESOURCE.openai.azure.com; --model names the deployment), or pass --base-url "
        "https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT (or set AZURE_OPENAI_BASE_URL)"
    )
