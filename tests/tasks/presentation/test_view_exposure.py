"""`rubricflow view --host 0.0.0.0` says it listens on every interface (the address it prints names
this machine, so the bind to all of them went unsaid)."""

from rubricflow.cli.view import exposure_note


def test_a_viewer_bound_to_every_interface_says_so():
    assert "every interface (0.0.0.0" in exposure_note("0.0.0.0")
    assert "listening on 10.0.0.5; plain HTTP" in exposure_note("10.0.0.5")
    assert exposure_note("127.0.0.1") is None
