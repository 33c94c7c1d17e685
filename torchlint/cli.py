"""Command line: ``torchlint check``, ``torchlint rules``, ``torchlint rule CODE``.

Exit codes (as ruff): 0 no findings, 1 findings, 2 usage/configuration/internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from torchlint import __version__
from torchlint.errors import Terminated, TorchlintError, UsageError
from torchlint.finding import escape_path, escape_text

SUBCOMMANDS = ("check", "rules", "rule", "trace")
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


# -j beyond this (or beyond the number of files) only costs process start-ups and memory.
MAX_JOBS = 256


def _jobs(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return n


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: exit 2 with our prefix
        self.print_usage(sys.stderr)
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="torchlint", description="A static linter for PyTorch training and model code.")
    parser.add_argument("--version", action="version", version=f"torchlint {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    check = sub.add_parser("check", help="lint files and directories (the default command)")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or directories (default: .)")
    check.add_argument("--select", type=_codes, action="extend", default=None, metavar="CODES",
                       help="rules to enable, replacing the defaults: codes or prefixes, comma-separated, or ALL")
    check.add_argument("--extend-select", type=_codes, action="extend", default=None, metavar="CODES",
                       help="rules to enable on top of the selection")
    check.add_argument("--ignore", type=_codes, action="extend", default=None, metavar="CODES", help="rules to disable")
    check.add_argument("--format", default="full", metavar="FORMAT",
                       help="full (default), concise, json, json-lines, sarif, github, junit")
    check.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--statistics", action="store_true", help="show counts per rule instead of each finding")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--config", metavar="FILE", help="use this pyproject.toml or torchlint.toml")
    check.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply exclusions to paths given on the command line too (for pre-commit)")
    check.add_argument("--show-files", action="store_true", help="list the files that would be linted, then exit")
    check.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                       help=f"analyse files in N processes (default: the number of CPU cores; "
                            f"at most {MAX_JOBS} and the number of files)")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    check.add_argument("--cache-dir", metavar="DIR", help="cache directory (default: .torchlint_cache next to the configuration)")
    check.add_argument("--baseline", metavar="FILE", help="report only findings not recorded in this baseline file")
    check.add_argument("--write-baseline", metavar="FILE",
                       help="record the current findings in FILE (see --baseline), then exit 0")
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    check.add_argument("-v", "--verbose", action="store_true", help="print progress and tracebacks of internal errors")

    check.add_argument("--trace", action="store_true",
                       help="also build every nn.Module class on the meta device and run it: confirms TL005, "
                            "adds TL100 shape mismatches (imports your code in a child process; needs torchlint[trace])")

    trace = sub.add_parser("trace", help="run a model on fake inputs and report every layer's shapes (needs torchlint[trace])")
    from torchlint.trace.command import add_arguments as add_trace_arguments

    trace.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    add_trace_arguments(trace)

    rules = sub.add_parser("rules", help="list every rule")
    rules.add_argument("--format", choices=("text", "json", "markdown"), default="text")

    rule = sub.add_parser("rule", help="show a rule's catalog page")
    rule.add_argument("code", metavar="CODE", help="rule code (TL001) or name (missing-zero-grad)")
    return parser


def _normalise(argv: list[str]) -> list[str]:
    """``torchlint PATHS...`` is ``torchlint check PATHS...``."""
    if not argv:
        return ["check"]
    first = argv[0]
    if first in SUBCOMMANDS or first in ("-h", "--help", "--version"):
        return argv
    return ["check", *argv]


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in args_list or "--verbose" in args_list
    try:
        args = build_parser().parse_args(_normalise(args_list))
        if args.command == "rules":
            return cmd_rules(args)
        if args.command == "rule":
            return cmd_rule(args)
        with _sigterm_interrupts():
            return cmd_trace(args) if args.command == "trace" else cmd_check(args)
    except TorchlintError as exc:
        print(f"torchlint: error: {escape_text(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except Terminated:
        print("torchlint: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("torchlint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # noqa: BLE001 - never a traceback unless asked
        if verbose:
            traceback.print_exc()
        from torchlint.source import exception_text  # bounded: never a node's recursive repr

        print(f"torchlint: internal error: {type(exc).__name__}: {escape_text(exception_text(exc))}"
              + ("" if verbose else " (run with --verbose for the traceback)"), file=sys.stderr)
        return EXIT_ERROR


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises ``Terminated`` (once) in the main thread while a command runs."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may
        yield
        return

    def terminate(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the cleanup short
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


# -- check -----------------------------------------------------------------------------

def load_settings(args: argparse.Namespace):
    from torchlint.config import build_settings, find_config

    config_path: Path | None = None
    if args.config and not args.isolated:
        config_path = Path(args.config)
        if not config_path.is_file():
            raise UsageError(f"--config {args.config}: no such file")
    elif not args.isolated:
        start = Path(args.paths[0]) if args.paths else Path.cwd()
        config_path = find_config(start if start.exists() else Path.cwd())
    cli = {"select": args.select, "extend-select": args.extend_select, "ignore": args.ignore}
    return build_settings(config_path, cli, force_exclude=args.force_exclude)


def cmd_check(args: argparse.Namespace) -> int:
    from torchlint.engine import lint_files
    from torchlint.files import discover
    from torchlint.formats import FORMAT_NAMES, Report, render
    from torchlint.formats.text import render_statistics

    if args.format not in FORMAT_NAMES:
        raise UsageError(f"--format {args.format}: unknown format (accepted: {', '.join(FORMAT_NAMES)})")
    settings = load_settings(args)
    cwd = Path.cwd().resolve()
    if args.baseline and args.write_baseline:
        raise UsageError("--baseline and --write-baseline cannot be used together")
    known = None
    if args.baseline:
        from torchlint import baseline

        known = baseline.load(args.baseline, cwd)
    files, problems = discover(args.paths, settings, cwd)
    for problem in problems:
        warn(problem.path, problem.reason)
    if args.show_files:
        for f in files:
            print(escape_path(f.display))
        return EXIT_CLEAN
    from torchlint.output import check_target

    linted = [f.path for f in files]
    output = check_target("--output-file", args.output_file, cwd, linted) if args.output_file is not None else None
    if args.write_baseline is not None:
        check_target("--write-baseline", args.write_baseline, cwd, linted)
    if args.verbose:
        where = settings.config_path or "no configuration file"
        print(f"torchlint: {len(files)} file(s), settings from {where}", file=sys.stderr)
    from torchlint.cache import Cache

    cache = None
    if not args.no_cache:
        directory = Path(args.cache_dir) if args.cache_dir else (settings.cache_dir or settings.root / ".torchlint_cache")
        cache = Cache(directory, settings.enabled, settings.rule_options)  # made absolute, links not followed
    transform = None
    if args.trace:
        from torchlint.trace.confirm import apply_trace

        config = str(settings.config_path) if settings.config_path else None
        paths = [f.path for f in files]

        def transform(findings, records):
            return apply_trace(findings, paths, settings.trace, config, records=records)

    jobs = effective_jobs(args.jobs, len(files))
    if args.verbose and args.jobs and jobs < args.jobs:
        print(f"torchlint: -j {args.jobs} capped to {jobs} (at most {MAX_JOBS} and one per file)", file=sys.stderr)
    result = lint_files(files, settings, cwd, jobs=jobs, cache=cache, transform=transform)
    if args.verbose and cache is not None:
        print(f"torchlint: cache {cache.directory}: {cache.hits} hit(s), {cache.misses} miss(es)", file=sys.stderr)
        if cache.disabled:
            print(f"torchlint: cache off: {cache.disabled}", file=sys.stderr)
    if args.write_baseline:
        from torchlint import baseline

        n = baseline.write(args.write_baseline, result.findings, cwd)
        if not args.quiet:
            print(f"torchlint: wrote {n} finding(s) to {escape_path(args.write_baseline)}", file=sys.stderr)
        for err in result.errors:  # the baseline may lack what a failed rule would have found
            print(f"torchlint: error: rule {err.rule} failed on {escape_path(err.path)}: {escape_text(err.error)}",
                  file=sys.stderr)
        return EXIT_ERROR if result.errors else EXIT_CLEAN
    if known is not None:
        result.findings, matched = known.filter(result.findings, cwd)
        if args.verbose:
            print(f"torchlint: {matched} finding(s) hidden by the baseline {args.baseline}", file=sys.stderr)

    color = output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    report = Report(result, settings, cwd, color=color, quiet=args.quiet)
    text = render_statistics(report) if args.statistics else render(args.format, report)
    if output is not None:
        from torchlint.output import write_atomic

        try:
            write_atomic(output, text)
        except OSError as exc:
            raise UsageError(f"cannot write {escape_path(args.output_file)}: {exc.strerror or exc}") from None
    else:
        from torchlint.output import printable

        sys.stdout.write(printable(text))
        sys.stdout.flush()

    for err in result.errors:
        print(f"torchlint: error: rule {err.rule} failed on {escape_path(err.path)}: {escape_text(err.error)}"
              + ("" if args.verbose else " (run with --verbose for the traceback)"), file=sys.stderr)
        if args.verbose and err.traceback:
            print(err.traceback, file=sys.stderr)
    if result.errors:
        return EXIT_ERROR
    if result.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def warn(path: str, reason: str) -> None:
    """The one channel for what torchlint passed over without failing the run: a line on
    stderr, ``torchlint: warning: PATH: reason``. Warnings never change the exit code."""
    print(f"torchlint: warning: {escape_path(path)}: {escape_text(reason)}", file=sys.stderr)


def effective_jobs(requested: int | None, files: int) -> int:
    """Processes for ``files`` files: ``-j`` (default: the CPU cores), at most ``MAX_JOBS`` and
    one per file."""
    from torchlint.pool import default_jobs

    return max(1, min(requested or default_jobs(), MAX_JOBS, files))


def cmd_trace(args: argparse.Namespace) -> int:
    from torchlint.config import find_config, read_table
    from torchlint.trace.command import run

    config_path: Path | None = None
    if args.config and not args.isolated:
        config_path = Path(args.config)
        if not config_path.is_file():
            raise UsageError(f"--config {args.config}: no such file")
    elif not args.isolated:
        config_path = find_config(Path.cwd())
    table = read_table(config_path).get("trace") if config_path else None
    return run(args, table, str(config_path) if config_path else None)


# -- rules / rule ----------------------------------------------------------------------

def cmd_rules(args: argparse.Namespace) -> int:
    from torchlint.rule import all_rules

    rules = all_rules()
    if args.format == "json":
        from torchlint.formats import rule_url

        # "rule" for the code, as in findings (--format json)
        data = [{"rule": r.code, "name": r.name, "severity": r.severity.value, "default": r.default_enabled,
                 "summary": r.summary, "url": rule_url(r.code, r.name)} for r in rules]
        print(json.dumps(data, indent=2))
        return EXIT_CLEAN
    if args.format == "markdown":
        print(rules_markdown(rules), end="")
        return EXIT_CLEAN
    width = max(len(r.name) for r in rules)
    print(f"{'Code':<6} {'Name':<{width}} {'Default':<7} {'Severity':<8} Summary")
    for r in rules:
        print(f"{r.code:<6} {r.name:<{width}} {'on' if r.default_enabled else 'off':<7} {r.severity.value:<8} {r.summary}")
    return EXIT_CLEAN


def rules_markdown(rules) -> str:
    """The README's rules table."""
    lines = ["| Code | Name | Default | Severity | Summary |", "| --- | --- | --- | --- | --- |"]
    for r in rules:
        lines.append(f"| {r.code} | {r.name} | {'on' if r.default_enabled else 'off'} | {r.severity.value} | {r.summary} |")
    return "\n".join(lines) + "\n"


def options_markdown(rules) -> str:
    """The README's table of per-rule options."""
    import json

    lines = ["| Table | Key | Default | Meaning |", "| --- | --- | --- | --- |"]
    for r in rules:
        for key, opt in r.options.items():
            default = json.dumps(opt.default)
            meaning = opt.description.replace("|", "\\|").replace("*", "\\*")  # plain text in a table cell
            lines.append(f"| `[tool.torchlint.{r.name}]` | `{key}` | `{default}` | {meaning} |")
    return "\n".join(lines) + "\n"


def cmd_rule(args: argparse.Namespace) -> int:
    from torchlint import catalog
    from torchlint.rule import all_rules

    wanted = args.code.strip()
    for r in all_rules():
        if r.code == wanted.upper() or r.name == wanted.lower():
            sys.stdout.write(catalog.page(r.code, r.name))
            return EXIT_CLEAN
    raise UsageError(f"unknown rule {wanted!r} (see `torchlint rules`)")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
