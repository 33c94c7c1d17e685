"""The README's CI, pre-commit and baseline snippets are the ones that work: each torchlint
command in them is run here as written (the pre-commit snippets in test_precommit_hook.py)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import yaml
from integrations_support import REPO_ROOT, readme_blocks, readme_section, torchlint_argv

from torchlint.formats import FORMAT_NAMES


def _yaml_docs() -> list:
    return [yaml.safe_load(block) for block in readme_blocks("yaml")]


def workflow() -> dict:
    [doc] = [d for d in _yaml_docs() if isinstance(d, dict) and "jobs" in d]
    return doc


def workflow_steps() -> list[dict]:
    [job] = workflow()["jobs"].values()
    return job["steps"]


def torchlint_commands() -> list[str]:
    """Every ``torchlint ...`` command of the section: workflow ``run:`` steps (the full
    workflow and the step snippets) and ``sh`` blocks, in order of appearance."""
    commands = []
    for doc in _yaml_docs():
        steps = workflow_steps() if isinstance(doc, dict) and "jobs" in doc else doc
        if isinstance(steps, list):
            commands += [s["run"] for s in steps if isinstance(s, dict) and str(s.get("run", "")).startswith("torchlint")]
    for block in readme_blocks("sh"):
        commands += [line for line in block.splitlines() if line.startswith("torchlint ")]
    return commands


def test_readme_section_has_the_snippets():
    section = readme_section()
    assert "upload-sarif" in section and "--format sarif" in section
    assert "--format github" in section and "--format junit" in section
    assert "- id: torchlint" in section
    assert "--write-baseline" in section and "--baseline" in section
    assert len(torchlint_commands()) >= 5


def test_workflow_uploads_the_sarif_it_writes():
    wf = workflow()
    assert set(wf[True] if True in wf else wf["on"]) >= {"push", "pull_request"}  # YAML 1.1 reads `on` as True
    [job] = wf["jobs"].values()
    assert job["permissions"]["security-events"] == "write"
    steps = workflow_steps()
    [lint] = [s for s in steps if str(s.get("run", "")).startswith("torchlint")]
    argv = torchlint_argv(lint["run"])
    assert argv[argv.index("--format") + 1] == "sarif"
    output = argv[argv.index("--output-file") + 1]
    [upload] = [s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@")]
    assert upload["with"]["sarif_file"] == output
    assert "always()" in upload["if"] or "!cancelled()" in upload["if"]  # uploads even when findings fail the job
    assert steps.index(upload) > steps.index(lint)
    install = [s["run"] for s in steps if "pip install" in str(s.get("run", ""))]
    assert install and "torch " not in install[0] + " " and "github.com/torchlint/torchlint" in install[0]


def test_every_readme_command_runs_as_written(every_rule_project, run_cli, validate_sarif):
    """Run the README's commands, in order, in a project with findings of every rule."""
    root, written = every_rule_project
    baseline_written = False
    for command in torchlint_commands():
        argv = torchlint_argv(command)
        result = run_cli(root, *argv)
        assert "Traceback" not in result.err and "unrecognized" not in result.err, (command, result.err)
        if "--write-baseline" in argv:
            assert result.code == 0, (command, result.err)
            baseline_written = True
            continue
        if "--baseline" in argv:
            assert baseline_written, "the README uses --baseline before writing one"
            assert result.code == 0, (command, result.out)  # everything is in the baseline
            continue
        assert result.code == 1, (command, result.err)
        fmt = argv[argv.index("--format") + 1] if "--format" in argv else "full"
        output = (root / argv[argv.index("--output-file") + 1]).read_text(encoding="utf-8") \
            if "--output-file" in argv else result.out
        if fmt == "sarif":
            doc = json.loads(output)
            validate_sarif(doc)
            assert doc["runs"][0]["results"]
        elif fmt == "github":
            lines = output.splitlines()
            assert lines and all(re.match(r"::(error|warning) file=[^,]+,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,"
                                          r"title=torchlint \(TL\d{3}\)::.", line) for line in lines), output
        elif fmt == "junit":
            tree = ET.fromstring(output.encode("utf-8"))
            assert tree.tag == "testsuites" and int(tree.get("failures")) > 0
        else:
            assert fmt in FORMAT_NAMES
    assert baseline_written


def test_readme_documents_every_format():
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    [row] = [line for line in text.splitlines() if line.startswith("| `--format FORMAT`")]
    for name in FORMAT_NAMES:
        assert f"`{name}`" in row, name


def test_precommit_snippets_parse():
    docs = _yaml_docs()
    [config] = [d for d in docs if isinstance(d, dict) and "repos" in d]
    [repo] = config["repos"]
    assert repo["repo"] == "https://github.com/torchlint/torchlint"
    assert [h["id"] for h in repo["hooks"]] == ["torchlint"]
    hooks = [d for d in docs if isinstance(d, list) and d and d[0].get("id") == "torchlint"]
    assert sorted(hook[0]["args"][0] for hook in hooks) == ["--baseline", "--fix"]  # the baseline and fixing variants


def test_hook_definition():
    [hook] = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "torchlint"
    assert hook["entry"] == "torchlint check --force-exclude"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["python", "pyi", "jupyter"]
    assert hook["require_serial"] is True
