"""A run whose every call went unanswered says what to check by what the endpoint said: a 429 storm
is the quota, not the key (the line blamed OPENAI_API_KEY whatever the cause)."""

from rubricflow.tasks.judging.failures import unanswered_advice


def test_a_429_storm_points_at_the_quota_not_the_key():
    advice = unanswered_advice("RateLimitError: Error code: 429 - {'error': 'rate limited'}")
    assert "rate-limited" in advice and "OPENAI_API_KEY" not in advice
    assert "OPENAI_API_KEY (the endpoint refused it)" in unanswered_advice("AuthenticationError: Error code: 401")
    assert "check that it runs" in unanswered_advice("APIConnectionError: Connection error.")
