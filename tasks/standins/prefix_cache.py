"""A simulated prefix cache for the offline judge: what a provider's or a local server's KV cache
would have served of each prompt, so tests and benches measure what a run pays without a provider.

Like vLLM's automatic prefix caching, the prompt is cut into fixed blocks of tokens, each block
named by a hash of everything up to its end (so a block is reused only after the same prefix), and
the blocks live in an LRU bounded in tokens. `minimum_tokens` is OpenAI's rule: a prompt shorter
than it, or a match shorter than it, is served uncached (OpenAI caches from 1,024 tokens on).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

CHARS_PER_TOKEN = 4  # the offline judge's token count (judge_server.token_count): ~4 ASCII characters a token


@dataclass(frozen=True)
class CacheRules:
    """How the simulated cache behaves: its size, its block, the shortest prefix it serves."""

    capacity_tokens: int = 4_000_000  # about the KV cache of one mid-size GPU; 0 turns the cache off
    block_tokens: int = 16  # vLLM's default block size (OpenAI counts hits in 128-token steps)
    minimum_tokens: int = 0  # OpenAI: 1024


class PrefixCache:
    """An LRU of prompt-prefix blocks; `serve` answers how many of a prompt's tokens were cached."""

    def __init__(self, rules: CacheRules | None = None):
        self.rules = rules or CacheRules()
        self.blocks: OrderedDict[int, None] = OrderedDict()  # a block's chained hash (this process's)
        self.prompt_tokens = 0  # totals over every prompt served (GET /stats)
        self.cached_tokens = 0

    def serve(self, prompt: str, prompt_tokens: int) -> int:
        """The cached tokens of `prompt` (whose full count is `prompt_tokens`), then its blocks cached."""
        rules = self.rules
        self.prompt_tokens += prompt_tokens
        if rules.capacity_tokens <= 0:
            return 0
        step = rules.block_tokens * CHARS_PER_TOKEN
        # a block's key: Python's hash of it and the key before it (a 64-bit chain, in C; blake2b
        # a block was ~10% of the judge's CPU on a group of 8, #55)
        key = 0
        matched, still_matching = 0, True
        for start in range(0, len(prompt) - step + 1, step):  # whole blocks only, as a KV cache holds them
            key = hash((key, prompt[start : start + step]))
            if still_matching and key in self.blocks:
                matched += 1
                self.blocks.move_to_end(key)
                continue
            still_matching = False
            self.blocks[key] = None
        while len(self.blocks) * rules.block_tokens > rules.capacity_tokens:
            self.blocks.popitem(last=False)
        cached = min(matched * rules.block_tokens, prompt_tokens)
        if prompt_tokens < rules.minimum_tokens or cached < rules.minimum_tokens:
            cached = 0
        self.cached_tokens += cached
        return cached


def prompt_of(messages: list[dict]) -> str:
    """The prompt as a chat template lays it out: each message's role, then its content, in order
    (what the server prefills, and so what a prefix of it can share with another request's)."""
    return "".join(f"<|{m.get('role', '')}|>{m.get('content') or ''}" for m in messages if isinstance(m, dict))
