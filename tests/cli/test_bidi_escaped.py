"""F16: bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and kin) in a title are printed as
visible escapes, not obeyed by the terminal."""

import io

import pytest

from rubricflow.cli.common import SafeConsole


@pytest.mark.parametrize("control", ["\u202e", "\u202a", "\u2066", "\u2069", "\u200f", "\u061c"])
def test_bidi_controls_print_escaped(control):
    console = SafeConsole(file=io.StringIO(), width=200)
    console.print(f"title {control}gnp.exe", highlight=False)
    shown = console.file.getvalue()
    assert control not in shown and f"\\u{ord(control):04x}gnp.exe" in shown
