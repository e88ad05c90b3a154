"""Error messages and the CLI dispatcher's contract (one line, non-zero exit)."""

from __future__ import annotations

from core.base.errors import DataError, UnknownNameError
from core.cli import main


def test_data_error_names_file_line_field():
    err = DataError("expected a number, got 'five'", path="review.json", line=12, field="stars")
    assert str(err) == "review.json:12: field 'stars': expected a number, got 'five'"


def test_unknown_name_lists_valid_ones():
    err = UnknownNameError("formula", "v9", ["v2", "v1"])
    assert str(err) == "unknown formula 'v9'; valid: v1, v2"


def test_cli_without_command_prints_help(capsys):
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out
