"""The judge setup refuses settings that would silently mean something else."""

import pytest

from rubricflow.tasks.judging.config import JudgeConfig


@pytest.mark.parametrize("field", ["rpm", "tpm"])
def test_a_zero_rate_limit_is_refused_not_taken_as_unlimited(field):
    with pytest.raises(ValueError, match="greater than 0"):
        JudgeConfig(**{field: 0})
