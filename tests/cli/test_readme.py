"""The README stays true: its rules table, its set-up commands and .ci/run agree."""

from __future__ import annotations

import re
from pathlib import Path

from torchlint.cli import options_markdown, rules_markdown
from torchlint.rule import all_rules

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_rules_table_matches_torchlint_rules():
    table = README.split("<!-- rules-table:start -->\n")[1].split("<!-- rules-table:end -->")[0]
    assert table == rules_markdown(all_rules()), "regenerate with: python tools/generate.py"


def test_rule_options_table_matches_the_rules():
    table = README.split("<!-- rule-options:start -->\n")[1].split("<!-- rule-options:end -->")[0]
    assert table == options_markdown(all_rules()), "regenerate with: python tools/generate.py"
    for rule in all_rules():
        for key in rule.options:
            assert f"`[tool.torchlint.{rule.name}]` | `{key}`" in table


def test_setup_commands_are_the_ones_ci_runs():
    block = README.split("## Set-up")[1].split("```sh\n")[1].split("```")[0]
    install_and_lint, run_tests = [line for line in block.splitlines() if line.strip()]
    assert install_and_lint == "pip install . && torchlint check fixtures/"
    ci = (REPO / ".ci" / "run").read_text()
    install, lint = install_and_lint.split(" && ")
    assert re.search(rf"^{re.escape(install)}$", ci, re.M)
    assert re.search(rf"^{re.escape(lint)}$", ci, re.M)
    assert re.search(rf"^{re.escape(run_tests)}$", ci, re.M)


def test_every_rule_page_is_linked_from_the_catalog_folder():
    for rule in all_rules():
        assert (REPO / "rules" / f"{rule.code}-{rule.name}.md").is_file()
