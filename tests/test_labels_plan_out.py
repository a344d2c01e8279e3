"""`labels plan --out` that cannot be written is refused before the plan is recorded (a plan whose
chosen ids went nowhere was recorded all the same, and `estimate` weighted by it)."""

import pytest

from rubricflow.cli.labelling import refuse_unwritable
from rubricflow.errors import InputError


def test_an_out_that_cannot_be_written_is_refused_first(tmp_path):
    with pytest.raises(InputError, match=r"--out .* is a folder"):
        refuse_unwritable(tmp_path)
    with pytest.raises(InputError, match=r"no folder .*missing"):
        refuse_unwritable(tmp_path / "missing" / "ids.txt")
    refuse_unwritable(tmp_path / "ids.txt")
