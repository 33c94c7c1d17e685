"""Fixtures for the integration tests; helpers live in ``integrations_support``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from integrations_support import CLEAN_SOURCE, Run, schema_candidates, write_examples

from torchlint.cli import main


@pytest.fixture(scope="session")
def sarif_schema() -> dict:
    for candidate in schema_candidates():
        if candidate.is_file():
            return json.loads(candidate.read_text(encoding="utf-8"))
    pytest.fail("the official SARIF 2.1.0 schema was not found (SARIF output must be validated against it); "
                "looked in: " + ", ".join(str(c) for c in schema_candidates())
                + "; set TORCHLINT_SARIF_SCHEMA to its path")


@pytest.fixture(scope="session")
def validate_sarif(sarif_schema):
    import jsonschema

    cls = jsonschema.validators.validator_for(sarif_schema)
    cls.check_schema(sarif_schema)
    validator = cls(sarif_schema, format_checker=cls.FORMAT_CHECKER)

    def validate(document: dict) -> None:
        errors = sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
        assert not errors, "SARIF output is not valid against the 2.1.0 schema:\n" + "\n".join(
            f"  at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:20])

    return validate


@pytest.fixture
def run_cli(capsys, monkeypatch):
    """Run the real CLI in-process in a directory: ``run_cli(cwd, "check", "--format", "sarif")``."""

    def run(cwd: Path, *args: str) -> Run:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def every_rule_project(tmp_path) -> tuple[Path, dict[str, str]]:
    """A project with the catalog Example of every rule (findings of every rule, TL000
    included) and one clean file."""
    root = tmp_path / "project"
    root.mkdir()
    written = write_examples(root)
    (root / "clean.py").write_text(CLEAN_SOURCE, encoding="utf-8")
    return root, written
