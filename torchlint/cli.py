"""Command line: ``torchlint check``, ``torchlint rules``, ``torchlint rule CODE``,
``torchlint server`` (the language server, ``torchlint.server``).

Exit codes (as ruff): 0 no findings, 1 findings, 2 usage/configuration/internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

from torchlint import __version__, speedups
from torchlint.errors import Terminated, TorchlintError, UsageError
from torchlint.finding import escape_path, escape_text

SUBCOMMANDS = ("check", "run", "rules", "rule", "trace", "server", "clean", "version")
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


# -j beyond this (or beyond the number of files) only costs process start-ups and memory.
MAX_JOBS = 256


def _jobs(value: str) -> int:
    """A whole number of 1 or more (``-j``, ``--steps``, ``--passes``, ``--eval-batches``)."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return n


def _patterns(value: str) -> list[str]:
    """``--exclude a,b/``: gitignore-style patterns, comma-separated (checked with the settings)."""
    return [v.strip() for v in value.split(",") if v.strip()]


def _per_file_ignore(value: str) -> tuple[str, list[str]]:
    """``PATTERN:CODES`` (the codes comma-separated), split at the last colon."""
    pattern, colon, codes = value.rpartition(":")
    if not colon or not pattern.strip() or not _codes(codes):
        raise argparse.ArgumentTypeError(f"expected PATTERN:CODES (such as 'tests/*:TL004,TL006'), got {value!r}")
    return pattern.strip(), _codes(codes)


class _Parser(argparse.ArgumentParser):
    commands: dict[str, argparse.ArgumentParser]  # the top-level parser's subcommands, by name

    def error(self, message: str):  # argparse's own errors: exit 2 with our prefix
        self.print_usage(sys.stderr)
        raise UsageError(message)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``command``, one that parses only that subcommand's
    arguments in full (``trace``'s need the trace machinery imported: a ``check`` does not
    pay for that)."""
    parser = _Parser(prog="torchlint", description="A static linter for PyTorch training and model code.")
    parser.add_argument("--version", action="version", version=f"torchlint {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    check = sub.add_parser("check", help="lint files and directories (the default command)")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                       help="files or directories (default: .); - lints standard input")
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="with -, the file standard input stands for: its settings apply and reports name it")
    check.add_argument("--select", type=_codes, action="extend", default=None, metavar="CODES",
                       help="rules to enable, replacing the defaults: codes or prefixes, comma-separated, or ALL")
    check.add_argument("--extend-select", type=_codes, action="extend", default=None, metavar="CODES",
                       help="rules to enable on top of the selection")
    check.add_argument("--ignore", type=_codes, action="extend", default=None, metavar="CODES", help="rules to disable")
    check.add_argument("--extend-ignore", type=_codes, action="extend", default=None, metavar="CODES",
                       help="rules to disable, on top of --ignore (as ruff's)")
    check.add_argument("--per-file-ignores", type=_per_file_ignore, action="append", default=None,
                       metavar="PATTERN:CODES",
                       help="ignore CODES in files matching PATTERN (gitignore style, relative to the working "
                            "directory); repeatable; replaces the configuration's per-file-ignores")
    check.add_argument("--extend-per-file-ignores", type=_per_file_ignore, action="append", default=None,
                       metavar="PATTERN:CODES", help="as --per-file-ignores, added to the configuration's")
    check.add_argument("--exclude", type=_patterns, action="extend", default=None, metavar="PATTERNS",
                       help="files and directories to leave out (gitignore style, comma-separated, relative to the "
                            "working directory); replaces the configuration's exclude")
    check.add_argument("--extend-exclude", type=_patterns, action="extend", default=None, metavar="PATTERNS",
                       help="as --exclude, added to the configuration's exclude and extend-exclude")
    check.add_argument("--format", "--output-format", dest="format", default="full", metavar="FORMAT",
                       help="full (default), concise, json, json-lines, sarif, github, gitlab, junit, pylint")
    check.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--statistics", action="store_true", help="show counts per rule instead of each finding")
    check.add_argument("-e", "--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--exit-non-zero-on-fix", action="store_true",
                       help="exit 1 when a fix was applied, even if no finding is left")
    check.add_argument("--show-fixes", action="store_true", help="with --fix/--diff, list the fixes applied, per rule")
    check.add_argument("-w", "--watch", action="store_true",
                       help="lint again whenever a linted file or a configuration changes (Ctrl-C to stop)")
    check.add_argument("--fail-on", choices=("error", "warning"), default="warning",
                       help="exit 1 only for findings of this severity or higher (default: warning, any finding)")
    check.add_argument("--add-noqa", action="store_true",
                       help="add a `# noqa: CODE` comment for every current finding, then exit")
    check.add_argument("--fix", action="store_true", default=None,
                       help="apply the safe fixes in place (config: fix = true)")
    check.add_argument("--no-fix", dest="fix", action="store_false", help="do not fix, whatever the configuration says")
    check.add_argument("--unsafe-fixes", action="store_true", default=None,
                       help="with --fix/--diff/--fix-only, apply the unsafe fixes too (config: unsafe-fixes = true)")
    check.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false",
                       help="apply only safe fixes, whatever the configuration says")
    check.add_argument("--diff", action="store_true",
                       help="print a unified diff of what --fix would change, write nothing (exit 1 when there is one)")
    check.add_argument("--fix-only", action="store_true",
                       help="apply the fixes and report nothing else (exit 0 unless a fix failed)")
    check.add_argument("--config", metavar="FILE", help="use this pyproject.toml or torchlint.toml")
    check.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply exclusions to paths given on the command line too (for pre-commit)")
    check.add_argument("--show-files", action="store_true", help="list the files that would be linted, then exit")
    check.add_argument("--show-settings", metavar="FILE",
                       help="print the settings FILE is linted with (configuration files, rules, options), then exit")
    check.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                       help=f"analyse files in N processes (default: the number of CPU cores; "
                            f"at most {MAX_JOBS} and the number of files)")
    check.add_argument("-n", "--no-cache", action="store_true", help="neither read nor write the cache")
    check.add_argument("--cache-dir", metavar="DIR", help="cache directory (default: .torchlint_cache next to the configuration)")
    check.add_argument("--baseline", metavar="FILE", help="report only findings not recorded in this baseline file")
    check.add_argument("--write-baseline", metavar="FILE",
                       help="record the current findings in FILE (see --baseline), then exit 0")
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    check.add_argument("-v", "--verbose", action="store_true", help="print progress and tracebacks of internal errors")

    check.add_argument("--trace", action="store_true",
                       help="also build every nn.Module class on the meta device and run it: confirms TL005, "
                            "adds TL100 shape mismatches (imports your code in a child process; needs torchlint[trace])")

    add_run_arguments(check)

    trace = sub.add_parser("trace", help="run a model on fake inputs and report every layer's shapes (needs torchlint[trace])")
    trace.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    if command in (None, "trace"):
        from torchlint.trace.command import add_arguments as add_trace_arguments

        add_trace_arguments(trace)

    rules = sub.add_parser("rules", help="list every rule")
    rules.add_argument("--format", "--output-format", dest="format", choices=("text", "json", "markdown"),
                       default="text")

    rule = sub.add_parser("rule", help="show a rule's catalog page")
    rule.add_argument("code", metavar="CODE", nargs="?", help="rule code (TL001) or name (missing-zero-grad)")
    rule.add_argument("--all", action="store_true", help="show every rule's page")
    rule.add_argument("--format", "--output-format", dest="format", choices=("text", "json"), default="text")
    server = sub.add_parser("server", help="run the language server on stdio, for editors (needs torchlint[lsp])")
    clean = sub.add_parser("clean", help="remove the caches (.torchlint_cache) under the working directory and "
                                         "the project's own")
    version = sub.add_parser("version", help="print the version")
    version.add_argument("--format", "--output-format", dest="format", choices=("text", "json"), default="text")
    parser.commands = {"check": check, "trace": trace, "rules": rules, "rule": rule, "server": server,
                       "clean": clean, "version": version}
    return parser


def add_run_arguments(check: argparse.ArgumentParser) -> None:
    """``check --run SCRIPT`` (``torchlint run SCRIPT -- ARGS`` is its short form)."""
    group = check.add_argument_group("dry run of a training script (runs your code; needs torchlint[trace])")
    group.add_argument("--run", metavar="SCRIPT", default=None,
                       help="run SCRIPT for a few steps with models and batches on a fake CUDA device (meta): "
                            "confirms static findings and adds what the run sees (torchlint run SCRIPT -- ARGS)")
    group.add_argument("--run-args", metavar="ARGS", default=None, dest="run_args",
                       help="the script's command-line arguments, as one shell-quoted string")
    group.add_argument("--steps", type=_jobs, default=3, metavar="N",
                       help="optimizer steps per epoch of the dry run (default 3)")
    group.add_argument("--passes", type=_jobs, default=2, metavar="N",
                       help="training epochs (DataLoader passes) of the dry run (default 2)")
    group.add_argument("--eval-batches", type=_jobs, default=2, metavar="M", dest="eval_batches",
                       help="batches per evaluation pass of the dry run (default 2)")
    group.add_argument("--synthetic-data", action="store_true", dest="synthetic_data",
                       help="batches made of each DataLoader's first sample; torchvision datasets stand in "
                            "for their files (no download)")
    group.add_argument("--run-device", choices=("fake-cuda", "meta", "cpu"), default="fake-cuda", dest="run_device",
                       help="fake-cuda (default: cuda is meta, CPU/GPU mixing fails as on a GPU), meta (every tensor "
                            "on meta: a CPU-only script runs in no time) or cpu (the script's own devices, real numbers)")
    group.add_argument("--run-timeout", type=float, default=120.0, metavar="SECONDS", dest="run_timeout",
                       help="stop the dry run after this long (default 120)")
    group.add_argument("--run-gpu", metavar="NAME", default=None, dest="run_gpu",
                       help="the GPU the script is meant for (a100-80, h100, rtx4090, t4, ...): the run's peak "
                            "memory plus the CUDA context is set against its memory")


def _run_command(argv: list[str]) -> list[str]:
    """``run [OPTIONS] SCRIPT [-- ARGS...]`` is ``check [OPTIONS] SCRIPT --run SCRIPT
    --run-args ARGS``."""
    import shlex

    rest, script_args = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    parser = build_parser("check")
    args, _ = parser.parse_known_args(["check", *rest])
    if len(args.paths) != 1 or args.paths == ["."] and "." not in rest:
        raise UsageError("run: give one script to run: torchlint run [OPTIONS] SCRIPT [-- ARGS...]")
    if not os.path.isfile(args.paths[0]):
        raise UsageError(f"run: {args.paths[0]}: no such file")
    out = ["check", *rest, "--run", args.paths[0]]
    if script_args:
        out += ["--run-args", shlex.join(script_args)]
    return out


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """Parse ``argv`` (already normalised). An option the subcommand does not know is that
    subcommand's usage error, with its usage line (argparse would show the top-level one)."""
    if argv and argv[0] == "run" and not {"-h", "--help"} & set(argv):
        argv = _run_command(argv[1:])
    elif argv and argv[0] == "run":
        argv = ["check", "--help"]
    parser = build_parser(argv[0] if argv and argv[0] in SUBCOMMANDS else None)
    args, extra = parser.parse_known_args(argv)
    if extra:
        command = parser.commands.get(args.command, parser)
        hint = _close_option(command, extra)
        command.error(f"unrecognized arguments: {' '.join(extra)}" + (f" (did you mean {hint}?)" if hint else ""))
    return args


def _close_option(parser: argparse.ArgumentParser, extra: list[str]) -> str | None:
    """The option of ``parser`` the first unknown ``--option`` in ``extra`` is likely a typo
    of (``--fixx`` -> ``--fix``), or None."""
    import difflib

    known = [o for action in parser._actions for o in action.option_strings if o.startswith("--")]
    for word in extra:
        if word.startswith("--"):
            close = difflib.get_close_matches(word.partition("=")[0], known, n=1, cutoff=0.75)
            if close:
                return close[0]
    return None


def _normalise(argv: list[str]) -> list[str]:
    """``torchlint PATHS...`` is ``torchlint check PATHS...``; a first word that is no path
    but close to a subcommand is a mistyped subcommand (a ``UsageError``)."""
    if not argv:
        return ["check"]
    first = argv[0]
    if first in SUBCOMMANDS or first in ("-h", "--help", "--version"):
        return argv
    mistyped = _mistyped_command(first)
    if mistyped:
        raise UsageError(f"unknown command '{first}', did you mean '{mistyped}'?")
    return ["check", *argv]


def _mistyped_command(word: str) -> str | None:
    """The subcommand ``word`` is likely a typo of, when ``word`` is not an existing path."""
    import difflib

    if word.startswith("-") or os.path.lexists(word):
        return None
    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1, cutoff=0.6)
    return close[0] if close else None


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (``sys.argv`` when ``argv`` is None: the console script and
    ``python -m torchlint``, which exit when it returns)."""
    if argv is None:
        # The process is the command line's own: the speed-ups apply to it (``speedups``),
        # from the start (dataclasses' kept code) and before any tree is built (the rest).
        with speedups.start_up():
            speedups.enable()
            return _main(list(sys.argv[1:]))
    return _main(list(argv))


def _main(args_list: list[str]) -> int:
    verbose = "-v" in args_list or "--verbose" in args_list
    try:
        args = parse_arguments(_normalise(args_list))
        if args.command == "rules":
            return cmd_rules(args)
        if args.command == "rule":
            return cmd_rule(args)
        if args.command == "version":
            return cmd_version(args)
        if args.command == "clean":
            return cmd_clean(args)
        if args.command == "server":
            from torchlint.server import serve

            serve()
            return EXIT_CLEAN
        with _sigterm_interrupts():
            if args.command == "trace":
                return cmd_trace(args)
            return cmd_watch(args) if args.watch else cmd_check(args)
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
        from torchlint.errors import exception_text  # bounded: never a node's recursive repr

        print(f"torchlint: internal error: {type(exc).__name__}: {escape_text(exception_text(exc))}"
              + ("" if verbose else " (run with --verbose for the traceback)"), file=sys.stderr)
        return EXIT_ERROR


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises ``Terminated`` (once) in the main thread while a command runs."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may
        yield
        return

    received: list[int] = []

    def terminate(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the cleanup short
        received.append(signum)
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
        if received:  # raised where Python swallows exceptions (a finalizer, an at-fork hook)
            raise Terminated()
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


# -- check -----------------------------------------------------------------------------

def load_settings(args: argparse.Namespace, cwd: Path):
    """Every file's settings (``Configs``): ``--config``'s or ``--isolated``'s for all, else
    each file's nearest configuration below the project's own, the outermost configuration
    above the named paths (within their git repository) -- whatever their order."""
    from torchlint.config import Configs, Overrides, build_settings, discover_configs

    ignore = None if args.ignore is None and args.extend_ignore is None else \
        [*(args.ignore or ()), *(args.extend_ignore or ())]
    cli = {"select": args.select, "extend-select": args.extend_select, "ignore": ignore}

    def pairs(given):
        return None if given is None else tuple((pattern, tuple(codes)) for pattern, codes in given)

    overrides = Overrides(cwd, None if args.exclude is None else tuple(args.exclude), tuple(args.extend_exclude or ()),
                          pairs(args.per_file_ignores), pairs(args.extend_per_file_ignores) or ())
    if args.config and not args.isolated:
        config_path = Path(args.config)
        if not config_path.is_file():
            raise UsageError(f"--config {args.config}: no such file")
        return Configs(build_settings(config_path, cli, force_exclude=args.force_exclude, overrides=overrides), cli,
                       fixed=True, overrides=overrides)
    if args.isolated:
        return Configs(build_settings(None, cli, force_exclude=args.force_exclude, overrides=overrides), cli,
                       fixed=True, overrides=overrides)
    return discover_configs(common_directory(args.paths, cwd), cli, force_exclude=args.force_exclude,
                            overrides=overrides)


def common_directory(paths: list[str], cwd: Path) -> Path:
    """The deepest directory holding every path (a file stands for its directory, where it
    is named: a symbolic link's target is not followed)."""
    directories = []
    for raw in paths or ["."]:
        given = Path(os.path.abspath(cwd / raw))
        directories.append(os.path.realpath(given if given.is_dir() else given.parent))
    return Path(os.path.commonpath(directories))


def cmd_check(args: argparse.Namespace) -> int:
    from torchlint.files import discover
    from torchlint.formats import FORMAT_NAMES, Report, render
    from torchlint.run import lint_files, project_context

    if args.format not in FORMAT_NAMES:
        import difflib

        close = difflib.get_close_matches(args.format, FORMAT_NAMES, n=1, cutoff=0.6)
        hint = f", did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"--format {args.format}: unknown format{hint} (accepted: {', '.join(FORMAT_NAMES)})")
    if args.statistics and args.format not in STATISTICS_FORMATS:
        raise UsageError(f"--statistics cannot be shown as --format {args.format} "
                         f"(accepted with --statistics: {', '.join(STATISTICS_FORMATS)})")
    cwd = Path.cwd().resolve()
    if args.show_settings is not None:
        if not (cwd / args.show_settings).exists():
            raise UsageError(f"--show-settings {args.show_settings}: no such file")
        args.paths = [args.show_settings]
    stdin = stdin_file(args, cwd)
    args.paths, missing = (args.paths, []) if stdin else split_missing(args.paths, cwd)
    configs = load_settings(args, cwd)
    settings = configs.base
    if args.show_settings is not None:
        sys.stdout.write(show_settings(configs, Path(args.show_settings), cwd, args))
        return EXIT_CLEAN
    if args.baseline and args.write_baseline:
        raise UsageError("--baseline and --write-baseline cannot be used together")
    if args.add_noqa and (args.write_baseline or args.show_files or stdin):
        raise UsageError("--add-noqa cannot be used with --write-baseline, --show-files or - (standard input)")
    fixing = fix_mode(args, settings, stdin is not None)
    if args.unsafe_fixes is not None:  # the flag outranks the configuration, for the [*] marks too
        settings.unsafe_fixes = args.unsafe_fixes
    known = None
    if args.baseline:
        from torchlint import baseline

        known = baseline.load(args.baseline, cwd)
    files, problems = ([stdin], []) if stdin else discover(args.paths, settings, cwd) if args.paths else ([], [])
    for path in missing:
        print(f"torchlint: error: {escape_path(path)}: no such file or directory", file=sys.stderr)
    for problem in problems:
        warn(problem.path, problem.reason)
    if args.show_files:
        for f in files:
            print(escape_path(f.display))
        return EXIT_ERROR if missing else EXIT_CLEAN
    warn_traced_without_trace(args)
    if not files and not missing and not problems and not args.quiet:  # else what was passed over says why
        print("torchlint: warning: No Python files found under the given paths", file=sys.stderr)
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
    prestarted = None
    if args.trace:
        from torchlint.trace.confirm import apply_trace, prestart_trace

        config = str(settings.config_path) if settings.config_path else None
        paths = [f.path for f in files]
        # the trace child imports torch while the files are analysed
        prestarted = prestart_trace(settings.trace, config) if any(str(p).endswith(".py") for p in paths) else None

        def transform(findings, records):
            return apply_trace(findings, paths, settings.trace, config, records=records, prestarted=prestarted,
                               note=(lambda text: print(f"torchlint: {text}", file=sys.stderr)) if args.verbose else None)

    if args.run:
        transform = run_transform(args, settings, cwd, transform)
    jobs = effective_jobs(args.jobs, len(files))
    if args.verbose and args.jobs and jobs < args.jobs:
        print(f"torchlint: -j {args.jobs} capped to {jobs} (at most {MAX_JOBS} and one per file)", file=sys.stderr)
    context = project_context(args.paths, files, settings, cwd)
    progress = Progress(sys.stderr, len(files) + len(context)) if wants_progress(sys.stderr, args.quiet) else None
    outcome = None
    writes = contextlib.ExitStack()  # a fixing run holds the project's lock from reading to writing
    if fixing and not args.diff and stdin is None:  # standard input's fix is printed, nothing written
        from torchlint.output import exclusive

        writes.enter_context(exclusive(settings.root, note=lambda text: print(f"torchlint: {text}", file=sys.stderr)))
    try:
        if fixing:
            from torchlint.run import fix_files

            outcome = fix_files(files, settings, cwd, applies=settings.applies_fix,
                                jobs=jobs, cache=cache, transform=transform, baseline=known, context=context,
                                progress=progress, configs=configs)
            result = outcome.result
        else:
            result = lint_files(files, settings, cwd, jobs=jobs, cache=cache, transform=transform, baseline=known,
                                context=context, progress=progress, configs=configs)
    except BaseException:
        writes.close()
        raise
    finally:
        if progress is not None:
            progress.close()
        if prestarted is not None:
            prestarted.close()  # no-op where the trace took it
    for path, reason in result.unanalysed:  # no TL000 finding says so
        warn(path, f"{reason} (TL000, which reports such files and cells, is not selected)")
    failed: list[str] = []
    output_stream = sys.stdout  # where the report goes (standard error where the fixed source takes stdout)
    if outcome is not None and stdin is not None and not args.diff:
        # as ruff does: the fixed source on standard output (the input itself where nothing
        # was fixed), what remains on standard error
        sys.stdout.buffer.write(outcome.changed[stdin.display][1] if stdin.display in outcome.changed else stdin.data)
        sys.stdout.flush()
        if not args.quiet:
            print(f"torchlint: {fix_summary(outcome, settings)}", file=sys.stderr)
        if args.fix_only:
            return EXIT_CLEAN if not result.errors else EXIT_ERROR
        output_stream = sys.stderr
    elif outcome is not None:
        with writes:
            failed = report_fixes(outcome, files, settings, args)
        if args.show_fixes:
            print(show_fixes(outcome, would=bool(args.diff)), file=sys.stderr)
        if args.diff or args.fix_only:
            for err in result.errors:
                print(f"torchlint: error: rule {err.rule} failed on {escape_path(err.path)}: {escape_text(err.error)}",
                      file=sys.stderr)
            if failed or result.errors or missing:
                return EXIT_ERROR
            if args.exit_zero:
                return EXIT_CLEAN
            changed = outcome.changed and (args.diff or args.exit_non_zero_on_fix)
            return EXIT_FINDINGS if changed else EXIT_CLEAN
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
        return EXIT_ERROR if result.errors or missing else EXIT_CLEAN
    if known is not None and not args.quiet:
        print(f"torchlint: {result.hidden_by_baseline} finding(s) hidden by the baseline {escape_path(args.baseline)}",
              file=sys.stderr)
    if args.add_noqa:
        add_noqa_comments(result.findings, files, quiet=args.quiet)
        return EXIT_ERROR if result.errors or missing else EXIT_CLEAN
    result.findings = sorted(result.findings + missing_findings(missing), key=lambda f: f.sort_key)

    color = output is None and output_stream.isatty() and "NO_COLOR" not in os.environ
    report = Report(result, settings, cwd, color=color, quiet=args.quiet, failures=failed)
    text = render_statistics_as(args.format, report) if args.statistics else render(args.format, report)
    if args.format == "sarif" and not args.statistics:
        from torchlint.formats.sarif import RESULTS_LIMIT, omitted

        left_out = omitted(result.findings)
        if left_out:
            print(f"torchlint: warning: SARIF: {left_out:,} finding(s) left out of the report: GitHub code scanning "
                  f"accepts at most {RESULTS_LIMIT:,} results per run (kept: the first {RESULTS_LIMIT:,}, errors "
                  "first, then by position)", file=sys.stderr)
    if output is not None:
        from torchlint.output import write_atomic

        try:
            write_atomic(output, text)
        except OSError as exc:
            raise UsageError(f"cannot write {escape_path(args.output_file)}: {exc.strerror or exc}") from None
    else:
        from torchlint.output import printable

        output_stream.write(printable(text))
        output_stream.flush()

    for err in result.errors:
        print(f"torchlint: error: rule {err.rule} failed on {escape_path(err.path)}: {escape_text(err.error)}"
              + ("" if args.verbose else " (run with --verbose for the traceback)"), file=sys.stderr)
        if args.verbose and err.traceback:
            print(err.traceback, file=sys.stderr)
    if result.errors or missing or failed:
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    if fails(result.findings, args.fail_on):
        return EXIT_FINDINGS
    if args.exit_non_zero_on_fix and outcome is not None and outcome.changed:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def cmd_watch(args: argparse.Namespace) -> int:
    """``check --watch``: ``cmd_check`` now and whenever a file it lints, or a configuration
    that may apply to one, changes (``torchlint.watch``); Ctrl-C ends it (exit 0)."""
    import copy

    from torchlint.watch import watch

    for flag, given in (("--show-files", args.show_files), ("--show-settings", args.show_settings is not None),
                        ("--add-noqa", args.add_noqa), ("--write-baseline", args.write_baseline),
                        ("- (standard input)", "-" in args.paths)):
        if given:
            raise UsageError(f"--watch cannot be used with {flag}")
    cwd = Path.cwd().resolve()

    def run() -> int:
        try:
            return cmd_check(copy.copy(args))
        except TorchlintError as exc:  # a configuration being edited: say so and wait for the next change
            print(f"torchlint: error: {escape_text(str(exc))}", file=sys.stderr)
            return exc.exit_code

    return watch(run, lambda: watched_state(args, cwd))


def watched_state(args: argparse.Namespace, cwd: Path) -> tuple:
    """What ``--watch`` compares between two looks: the files a run would lint, the paths
    named (one that does not exist may appear), ``--config``/``--baseline`` and the
    configuration files around them (``watch.snapshot``)."""
    import copy

    from torchlint.files import discover
    from torchlint.watch import snapshot

    named = [cwd / p for p in args.paths] + [cwd / p for p in (args.config, args.baseline) if p]
    files: list[Path] = []
    error = None
    try:
        present, _ = split_missing(list(args.paths), cwd)
        configs = load_settings(copy.copy(args), cwd)
        if present:
            files = [f.path for f in discover(present, configs.base, cwd)[0]]
    except TorchlintError as exc:  # an invalid configuration is a state too: its fix is a change
        error = str(exc)
    directories = {Path(os.path.abspath(p)).parent for p in files} | {cwd} | \
        {p if p.is_dir() else p.parent for p in named}
    return (error, *snapshot([*files, *named], directories))


def cmd_version(args: argparse.Namespace) -> int:
    """``torchlint version``: ``torchlint X.Y.Z`` (``{"version": "X.Y.Z"}`` as JSON)."""
    print(json.dumps({"version": __version__}) if args.format == "json" else f"torchlint {__version__}")
    return EXIT_CLEAN


def cmd_clean(args: argparse.Namespace) -> int:
    """``torchlint clean``: remove every ``.torchlint_cache`` under the working directory and
    the project's own cache (at its root, or its ``cache-dir``), printing each one removed."""
    from torchlint.cache import find_caches, remove_cache

    cwd = Path.cwd().resolve()
    extra = []
    try:
        from torchlint.config import discover_configs

        settings = discover_configs(cwd).base
        extra.append(settings.cache_dir or settings.root / ".torchlint_cache")
    except TorchlintError as exc:  # a broken configuration must not keep its caches
        print(f"torchlint: warning: the project's configuration could not be read ({escape_text(str(exc))}); "
              "cleaning under the working directory only", file=sys.stderr)
    failed = False
    removed = 0
    for directory in find_caches(cwd, extra):
        shown = os.path.relpath(directory, cwd) if directory == cwd or cwd in directory.parents else str(directory)
        try:
            remove_cache(directory)
        except OSError as exc:
            print(f"torchlint: error: {escape_path(shown)}: cannot remove: {exc.strerror or exc}", file=sys.stderr)
            failed = True
            continue
        removed += 1
        print(f"Removed {escape_path(shown)}")
    if not removed and not failed:
        print("No cache to remove.")
    return EXIT_ERROR if failed else EXIT_CLEAN


def fix_mode(args: argparse.Namespace, settings, stdin: bool) -> bool:
    """Whether this run fixes (``--fix``, ``--diff``, ``--fix-only``, or ``fix = true`` in the
    configuration without ``--no-fix``, which does not apply to ``--add-noqa``,
    ``--write-baseline``, ``--show-files``, ``--trace`` or standard input runs); a
    ``UsageError`` for a fixing flag with an option that cannot go with it. Standard input
    is fixed as ruff fixes it: the fixed source is printed (``--diff``: the diff)."""
    if stdin and not (args.diff or args.fix_only or args.fix):
        return False  # `fix = true` in the configuration does not apply to standard input
    explicit = bool(args.diff or args.fix_only or args.fix)
    if not explicit and not (args.fix is None and settings.fix):
        return False
    for flag, given in (("--add-noqa", args.add_noqa), ("--write-baseline", args.write_baseline),
                        ("--show-files", args.show_files), ("--statistics", args.statistics and args.fix_only),
                        ("--trace", args.trace)):  # the trace imports the code on disk, not the fixed code
        if given and not explicit:
            return False  # `fix = true` in the configuration does not apply to these runs
        if given:
            name = "--diff" if args.diff else "--fix-only" if args.fix_only else "--fix"
            raise UsageError(f"{name} cannot be used with {flag}")
    if args.diff and args.fix_only:
        raise UsageError("--diff cannot be used with --fix-only")
    return True


def report_fixes(outcome, files: list, settings, args: argparse.Namespace) -> list[str]:
    """Print the diff (``--diff``) or write the fixed files, then the summary line
    "N fixed, M remaining (K fixable with --unsafe-fixes)" on stderr (not with ``-q``).
    What could not be fixed or written, ``PATH: reason`` each (exit 2; SARIF's
    notifications). A file changed on disk since it was read is not written."""
    from torchlint.bounded import TooLarge
    from torchlint.files import read_source
    from torchlint.fixes import decode_source, unified_diff
    from torchlint.output import printable, write_bytes_atomic

    failed = [f"{display}: {reason}" for display, reason in outcome.problems]
    by_display = {f.display: f.path for f in files}
    diffs = []
    written = 0
    for display, (before, after) in outcome.changed.items():
        if args.diff:
            diffs.append(unified_diff(display, decode_source(before)[0], decode_source(after)[0]))
            continue
        path = by_display[display]
        try:
            try:
                now = read_source(path, len(before))  # what was analysed, exactly, or it is not written
            except TooLarge:
                now = None
            if now != before:
                warn(display, "changed on disk while torchlint fixed it; not written")
                failed.append(f"{display}: changed on disk while torchlint fixed it; not written")
                continue
            write_bytes_atomic(path, after)
            written += 1
        except OSError as exc:
            warn(display, f"cannot write the fixed file: {exc.strerror or exc}")
            failed.append(f"{display}: cannot write the fixed file: {exc.strerror or exc}")
    if diffs:
        sys.stdout.write(printable("".join(diffs)))
        sys.stdout.flush()
    for display, reason in outcome.problems:
        print(f"torchlint: error: {escape_path(display)}: {escape_text(reason)}", file=sys.stderr)
    if not args.quiet:
        print(f"torchlint: {fix_summary(outcome, settings, would=bool(args.diff))}", file=sys.stderr)
    return failed


def show_fixes(outcome, *, would: bool = False) -> str:
    """``--show-fixes``: what the fix loop applied, per rule, and the files it changed::

        Fixed 3 findings:
            2 × TL002 (loss-kept-with-graph)
            1 × TL008 (functional-dropout-ignores-eval)
          in 2 files: model.py, train.py
    """
    from torchlint.rule import rule_info

    total = outcome.total_fixed
    head = f"{'Would fix' if would else 'Fixed'} {total} finding{'s' if total != 1 else ''}"
    if not total:
        return head + "."
    lines = [head + ":"]
    for code, n in sorted(outcome.fixed.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"    {n} \u00d7 {code} ({rule_info(code).name})")
    paths = sorted(outcome.changed)
    lines.append(f"  in {len(paths)} file{'s' if len(paths) != 1 else ''}: {', '.join(escape_path(p) for p in paths)}")
    return "\n".join(lines)


def fix_summary(outcome, settings, *, would: bool = False) -> str:
    """"N fixed, M remaining (K fixable with --unsafe-fixes)" ("would be fixed" for ``--diff``)."""
    remaining = outcome.result.findings
    hidden = sum(1 for f in remaining if settings.applies_fix(f, unsafe=True) and not settings.applies_fix(f))
    line = f"{outcome.total_fixed} {'would be fixed' if would else 'fixed'}, {len(remaining)} remaining"
    return line + (f" ({hidden} fixable with --unsafe-fixes)" if hidden else "")


def show_settings(configs, path: Path, cwd: Path, args: argparse.Namespace | None = None) -> str:
    """The resolved settings of the file at ``path``, as ``--show-settings`` prints them:
    TOML for a ``[tool.torchlint]`` table (``torchlint.settings_toml``)."""
    from torchlint.settings_toml import render

    source = None
    if args is not None and args.isolated:
        source = "--isolated"
    elif args is not None and args.config:
        source = "--config"
    return render(configs, path, cwd, source=source, cache_dir=getattr(args, "cache_dir", None))


# Python read from standard input beyond this is refused (ten times the default max-file-size;
# a larger file is linted by its path, where max-file-size applies).
STDIN_LIMIT = 64 << 20


def stdin_file(args: argparse.Namespace, cwd: Path):
    """``-``: standard input as the one file to lint, named ``--stdin-filename`` (whose
    settings apply, and whose project is read as a named file's is) or ``-``; ``args.paths``
    becomes that name. None without ``-``."""
    from torchlint.files import SourceFile, display_path
    from torchlint.reading import give

    if "-" not in args.paths:
        if args.stdin_filename is not None:
            raise UsageError("--stdin-filename names standard input: pass - as the path")
        return None
    if args.paths != ["-"]:
        raise UsageError("- (standard input) cannot be linted with other paths")
    if args.stdin_filename is not None and not args.stdin_filename.strip():
        raise UsageError("--stdin-filename: empty file name")
    data = read_stdin(args.stdin_filename or "-")
    path = Path(os.path.realpath(cwd / (args.stdin_filename or "-")))
    give(path, data)
    args.paths = [args.stdin_filename] if args.stdin_filename else []
    return SourceFile(path, display_path(path, cwd) if args.stdin_filename else "-", data)


def read_stdin(name: str) -> bytes:
    """Standard input's bytes, bounded (``bounded.read_stream``): at most
    ``bounded.NOTEBOOK_LIMIT`` for a notebook, ``STDIN_LIMIT`` for Python; more, a closed or
    unreadable standard input is a ``UsageError``."""
    from torchlint import bounded
    from torchlint.notebook import is_notebook

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise UsageError("- (standard input): there is no standard input (it is closed)")
    limit = bounded.NOTEBOOK_LIMIT if is_notebook(name) else STDIN_LIMIT
    try:
        return bounded.read_stream(stream, limit)
    except bounded.TooLarge:
        raise UsageError(f"- (standard input): more than {limit:,} bytes; not linted") from None
    except OSError as exc:
        raise UsageError(f"- (standard input): {exc}") from None


def split_missing(paths: list[str], cwd: Path) -> tuple[list[str], list[str]]:
    """(the paths that exist, those that do not): a missing path is an error of its own, and
    the others are still linted."""
    missing = [p for p in paths if not os.path.lexists(cwd / p)]
    return [p for p in paths if p not in missing], missing


def missing_findings(missing: list[str]) -> list:
    """An ``E902`` finding (an I/O error, as ruff reports one) for each path named on the
    command line that does not exist, so that every format shows it; whatever is selected."""
    from torchlint.codes import IO_ERROR_RULE
    from torchlint.finding import Finding, Span

    return [Finding.at(IO_ERROR_RULE, path, Span.point(1, 1), "No such file or directory (os error 2)")
            for path in missing]


def fails(findings: list, fail_on: str) -> bool:
    """Whether ``findings`` hold one at or above the ``--fail-on`` severity."""
    from torchlint.finding import Severity

    if fail_on == "error":
        return any(f.severity is Severity.ERROR for f in findings)
    return bool(findings)


def run_transform(args: argparse.Namespace, settings: Any, cwd: Path, then: Any) -> Any:
    """The merge of ``--run``'s dry run into the findings (after ``--trace``'s, if any)."""
    import shlex

    from torchlint import trace_settings
    from torchlint.trace.command import require_torch
    from torchlint.trace.dryrun import RunOptions, apply_run

    script = Path(args.run)
    if not script.is_file():
        raise UsageError(f"--run {args.run}: no such file")
    require_torch()
    try:
        argv = shlex.split(args.run_args or "")
    except ValueError as exc:
        raise UsageError(f"--run-args: {exc}") from None
    gpu = None
    if args.run_gpu is not None:
        from torchlint.trace import gpus

        gpu = gpus.lookup(args.run_gpu)
        if gpu is None:
            raise UsageError(f"--run-gpu {args.run_gpu}: unknown GPU (one of: {gpus.names()})")
    config = trace_settings.load(settings.trace, str(settings.config_path) if settings.config_path else None)
    options = RunOptions(script, argv, steps=args.steps, passes=args.passes, eval_batches=args.eval_batches,
                         synthetic_data=args.synthetic_data, device=args.run_device, timeout=args.run_timeout,
                         memory_limit=config.memory_limit, gpu=gpu)

    def transform(findings, records):
        if then is not None:
            findings = then(findings, records)
        return apply_run(findings, options, cwd)

    return transform


def warn_traced_without_trace(args: argparse.Namespace) -> None:
    """A selector on the command line that names only traced rules checks nothing without
    ``--trace``: say so (the run goes on)."""
    if args.trace or args.run:
        return
    from torchlint.config import expand_selector
    from torchlint.rule import rule_index

    rules = {r.code: r for r in rule_index()}
    for selector in (args.select or []) + (args.extend_select or []):
        codes = expand_selector(selector, "command line", "select")
        if codes and all(rules[c].traced for c in codes) and len(codes) < len(rules):
            for code in sorted(codes):
                print(f"torchlint: warning: {code} ({rules[code].name}) needs --trace; without it this run "
                      "does not check it", file=sys.stderr)


STATISTICS_FORMATS = ("full", "concise", "json", "json-lines")


def render_statistics_as(format_name: str, report) -> str:
    """``--statistics`` in ``format_name``: the text table for the text formats, an array
    of ``{"code", "name", "severity", "count", "fixable", "fixable_unsafe"}`` for ``json``
    (a line each for ``json-lines``)."""
    from torchlint.formats.text import render_statistics, statistics

    if format_name in ("full", "concise"):
        return render_statistics(report)
    rows = statistics(report)
    if format_name == "json":
        return json.dumps(rows, indent=2) + "\n"
    return "".join(json.dumps(row) + "\n" for row in rows)


def add_noqa_comments(findings: list, files: list, *, quiet: bool) -> int:
    """``--add-noqa``: a ``# noqa: CODES`` comment (or the missing codes appended to the one
    there) on each line with a finding, in each file; the file's bytes are otherwise kept.
    TL000 (the file did not parse), the noqa rules' own findings and notebooks are left out."""
    from torchlint.codes import SYNTAX_ERROR
    from torchlint.files import read_source
    from torchlint.noqa import add_noqa, noqa_rule_codes
    from torchlint.notebook import is_notebook
    from torchlint.output import write_bytes_atomic

    by_display = {f.display: f.path for f in files}
    wanted: dict[str, dict[int, set[str]]] = {}
    for f in findings:
        if f.rule not in (SYNTAX_ERROR, *noqa_rule_codes()) and f.path in by_display:
            wanted.setdefault(f.path, {}).setdefault(f.line, set()).add(f.rule)
    for display in sorted(d for d in wanted if is_notebook(d)):  # its lines are its cells', not its JSON's
        del wanted[display]
        warn(display, "not edited: --add-noqa does not edit notebooks; add the `# noqa: CODE` comments in the cells")
    total = 0
    for display, lines in sorted(wanted.items()):
        path = by_display[display]
        try:
            text = read_source(path).decode("utf-8", "surrogateescape")  # every byte comes back as it was
            new, edited, malformed = add_noqa(text, lines)
            if edited:
                write_bytes_atomic(path, new.encode("utf-8", "surrogateescape"))
        except OSError as exc:
            warn(display, f"cannot add noqa comments: {exc.strerror or exc}")
            continue
        total += edited
        for line in malformed:
            warn(f"{display}:{line}", "not edited: its noqa comment is malformed (TL902); fix it first")
    if not quiet:
        print(f"torchlint: added {total} noqa comment{'s' if total != 1 else ''}", file=sys.stderr)
    return total


# -- progress ------------------------------------------------------------------------------

def wants_progress(stream, quiet: bool) -> bool:
    """A progress bar only for a person watching: on a terminal, not with ``-q``, and not on
    a dumb terminal that cannot redraw a line."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and not quiet and os.environ.get("TERM") != "dumb"


def progress_line(done: int, total: int, width: int = 30) -> str:
    """``[=========>          ] 12/40 files``."""
    filled = width * done // total if total else width
    bar = "=" * filled + (">" if filled < width else "") + " " * (width - filled - 1)
    return f"[{bar[:width]}] {done}/{total} files"


class Progress:
    """Draws ``progress_line`` in place on ``stream`` once the run has lasted ``delay``
    seconds (a fast run shows nothing), at most every ``interval`` seconds; ``close`` erases it."""

    def __init__(self, stream, total: int, delay: float = 1.0, interval: float = 0.1, clock=None):
        import time

        self.stream, self.total, self.delay, self.interval = stream, total, delay, interval
        self.clock = clock or time.monotonic
        self.start = self.clock()
        self.drawn_at: float | None = None

    def __call__(self, done: int) -> None:
        now = self.clock()
        if now - self.start < self.delay:
            return
        if self.drawn_at is not None and now - self.drawn_at < self.interval and done < self.total:
            return
        self.drawn_at = now
        self.stream.write("\r" + progress_line(done, self.total))
        self.stream.flush()

    def close(self) -> None:
        if self.drawn_at is not None:
            self.stream.write("\r\033[K")
            self.stream.flush()


def warn(path: str, reason: str) -> None:
    """The one channel for what torchlint passed over without failing the run: a line on
    stderr, ``torchlint: warning: PATH: reason``. Warnings never change the exit code."""
    print(f"torchlint: warning: {escape_path(path)}: {escape_text(reason)}", file=sys.stderr)


def effective_jobs(requested: int | None, files: int) -> int:
    """Processes for ``files`` files: ``-j`` (default: the CPU cores), at most ``MAX_JOBS`` and
    one per file."""
    return max(1, min(requested or default_jobs(), MAX_JOBS, files))


def default_jobs() -> int:
    """The CPU cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


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
    from torchlint.ruleinfo import shown_summary

    rules = all_rules()
    if args.format == "json":
        print(json.dumps([rule_json(r) for r in rules], indent=2))
        return EXIT_CLEAN
    if args.format == "markdown":
        print(rules_markdown(rules), end="")
        return EXIT_CLEAN
    width = max(len(r.name) for r in rules)
    print(f"{'Code':<6} {'Name':<{width}} {'Default':<7} {'Severity':<8} {'Fix':<11} Summary")
    for r in rules:
        print(f"{r.code:<6} {r.name:<{width}} {'on' if r.default_enabled else 'off':<7} {r.severity.value:<8} "
              f"{fixable_label(r):<11} {shown_summary(r.summary)}")
    return EXIT_CLEAN


def rule_json(rule, *, explanation: bool = False) -> dict:
    """A rule as ``torchlint rules --output-format json`` (and ``rule CODE``, with its page
    as ``explanation``) shows it: ``code``, ``name``, ``summary``, ``severity``,
    ``default_enabled``, ``fixable`` (``["safe"]``, ``["unsafe"]``, both or none),
    ``options`` (key -> ``default``, ``type``, ``description``) and ``url``. ``rule`` and
    ``default`` repeat ``code`` and ``default_enabled`` under their earlier names."""
    from torchlint.catalog import kind_text
    from torchlint.formats import rule_url
    from torchlint.ruleinfo import shown_summary

    data = {
        "code": rule.code,
        "name": rule.name,
        "summary": shown_summary(rule.summary),
        "severity": rule.severity.value,
        "default_enabled": bool(rule.default_enabled),
        "fixable": list(rule.fixable),
        "options": {key: {"default": opt.default, "type": kind_text(opt.kind, opt.item_kind),
                          "description": opt.description} for key, opt in rule.options.items()},
        "url": rule_url(rule.code, rule.name),
        "rule": rule.code,
        "default": bool(rule.default_enabled),
    }
    if explanation:
        from torchlint import catalog

        data["explanation"] = catalog.page(rule.code, rule.name)
    return data


def fixable_label(rule) -> str:
    """What ``torchlint rules`` shows of a rule's fixes: ``safe``, ``unsafe``, ``safe/unsafe`` or ``-``."""
    return "/".join(rule.fixable) or "-"


def rules_markdown(rules) -> str:
    """The README's rules table."""
    from torchlint.ruleinfo import shown_summary

    lines = ["| Code | Name | Default | Severity | Fix | Summary |", "| --- | --- | --- | --- | --- | --- |"]
    for r in rules:
        lines.append(f"| {r.code} | {r.name} | {'on' if r.default_enabled else 'off'} | {r.severity.value} | "
                     f"{fixable_label(r)} | {shown_summary(r.summary)} |")
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
    """``torchlint rule CODE`` (or a rule's name): its page; ``--all``: every rule's page;
    ``--output-format json``: the rule as ``rule_json`` gives it, its page as ``explanation``
    (an array of them with ``--all``)."""
    from torchlint import catalog
    from torchlint.rule import all_rules

    rules = all_rules()
    if args.all:
        if args.code is not None:
            raise UsageError("rule: give a rule (CODE) or --all, not both")
        chosen = rules
    elif args.code is None:
        raise UsageError("rule: name a rule (a code such as TL001, or a name such as missing-zero-grad), or --all")
    else:
        wanted = args.code.strip()
        chosen = [r for r in rules if r.code == wanted.upper() or r.name == wanted.lower()]
        if not chosen:
            import difflib

            names = [r.code for r in rules] + [r.name for r in rules]
            close = difflib.get_close_matches(wanted.upper() if wanted[:2].upper() == "TL" else wanted.lower(),
                                              names, n=1, cutoff=0.6)
            hint = f", did you mean {close[0]!r}?" if close else ""
            raise UsageError(f"unknown rule {wanted!r}{hint} (see `torchlint rules`)")
    if args.format == "json":
        data = [rule_json(r, explanation=True) for r in chosen]
        print(json.dumps(data if args.all else data[0], indent=2))
        return EXIT_CLEAN
    sys.stdout.write("\n".join(catalog.page(r.code, r.name) for r in chosen))
    return EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
