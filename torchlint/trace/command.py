"""``torchlint trace TARGET``: arguments and the run.

The CLI calls :func:`add_arguments` on the ``trace`` sub-parser and then
``run(args, trace_config, config_path)``, which returns the exit code (0 clean, 1 a failed
forward or NaN/Inf, or with ``--fail-on-plan`` a memory plan that does not fit, 2 never: usage problems raise :class:`torchlint.errors.UsageError`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from torchlint import bounded, shapes
from torchlint import trace_settings as trace_config_mod
from torchlint.errors import ConfigError, UsageError
from torchlint.trace import INSTALL_HINT, gpus, plan, report
from torchlint.trace.source_checks import check_target, optimizer_impl
from torchlint.trace.records import BUILTIN_LOSSES, TraceResult
from torchlint.trace.runner import run_jobs
from torchlint.trace.target import parse_target

DEVICES = ("meta", "cpu", "cuda")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="TARGET",
                        help="path/to/file.py:ClassName or package.module:factory_function")
    parser.add_argument("--args", metavar="JSON", default=None,
                        help="constructor positional arguments as a JSON list, e.g. '[10, 64]'")
    parser.add_argument("--kwargs", metavar="JSON", default=None,
                        help="constructor keyword arguments as a JSON object, e.g. '{\"hidden\": 64}'")
    parser.add_argument("--input-shape", metavar="SHAPE", action="append", default=None,
                        dest="input_shape",
                        help="input shape, e.g. 4,3,32,32; repeat once per forward() input "
                             "(default: the class's input-shape comment, else inferred)")
    parser.add_argument("--dtype", action="append", default=None, metavar="DTYPE",
                        help="input dtype (float32, int64 for token ids, ...): once for all "
                             "inputs or once per --input-shape")
    parser.add_argument("--device", choices=DEVICES, default=None,
                        help="meta (default: no memory, no weights), cpu (real numbers, reports "
                             "NaN/Inf) or cuda (reports peak GPU memory)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="kill the trace after this long (default 60, or trace.timeout)")
    parser.add_argument("--memory-limit", default=None, metavar="SIZE", dest="memory_limit",
                        help='address-space limit of the trace process, e.g. 8GiB; "none" to '
                             "disable (default: 8 GiB, or 75%% of RAM where less; or trace.memory-limit)")
    parser.add_argument("--train", action="store_true",
                        help="after the forward pass, reduce the outputs to a loss and run backward: "
                             "report parameters without a gradient (and what cut them off), frozen "
                             "parameters, gradient norms and NaN/Inf gradients (on cpu), an in-place op "
                             "that breaks backward (TL104, at its line and the op that saved the tensor)")
    parser.add_argument("--loss", default=None, metavar="LOSS",
                        help="the loss of --train: sum (default), mse (zero target), ce (class-0 "
                             "targets), or a function taking the model's output: "
                             "path/to/file.py:function or package.module:function (mse, ce and the "
                             "function take --target-shape's target where given)")
    parser.add_argument("--target-shape", metavar="SHAPE", default=None, dest="target_shape",
                        help="the target the loss of --train compares the output with, shaped like "
                             "your batch's labels, e.g. 4 (class indices) or 4,1; the loss is then "
                             "called as loss(output, target) (implies --train; with the built-in sum "
                             "loss, pass --loss mse, ce or a function). A loss whose output and target "
                             "disagree in shape or dtype, or silently broadcast, is reported (TL102)")
    parser.add_argument("--target-dtype", metavar="DTYPE", default=None, dest="target_dtype",
                        help="dtype of --target-shape: float32 (default), int64 for class indices, ...")
    parser.add_argument("--depth", type=_depth, default=None, metavar="N",
                        help="show every module call down to nesting depth N (default: all depths, "
                             "repeated blocks folded into one row, e.g. layers.0-31 (32 × Block))")
    add_plan_arguments(parser)
    if "--format" not in parser._option_string_actions:  # noqa: SLF001 - the CLI may own it
        parser.add_argument("--format", choices=("table", "json"), default="table",
                            help="output format (default: table)")
    if "--config" not in parser._option_string_actions:  # noqa: SLF001
        parser.add_argument("--config", default=None, metavar="PATH",
                            help="configuration file to read [tool.torchlint.trace] from")


PLAN_FLAGS = ("optimizer", "optimizer_impl", "precision", "gpu", "gpu_memory", "world_size", "sharding",
              "checkpointing")


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    """The memory plan's flags; any of them runs one training step (on meta: nothing is
    allocated) and adds the plan to the report."""
    group = parser.add_argument_group("memory plan (any of these runs a training step)")
    group.add_argument("--optimizer", choices=tuple(plan.OPTIMIZERS), default=None,
                       help="the optimizer whose state is measured (default: adamw)")
    group.add_argument("--optimizer-impl", choices=plan.OPTIMIZER_IMPLS, default=None, dest="optimizer_impl",
                       help="how its step runs: auto (default: as PyTorch picks it on a GPU, foreach "
                            "where the optimizer has it), or as the training code asks (foreach=True, "
                            "foreach=False: for-loop, fused=True)")
    group.add_argument("--precision", type=_precision, default=None, metavar="PRECISION",
                       help="fp32 (default), bf16 (pure), fp16-amp or bf16-mixed (fp32 weights, "
                            "autocast, as Lightning's), bf16-master (bf16 weights, fp32 master "
                            "copy); Lightning's 32-true, bf16-true and 16-mixed are accepted")
    group.add_argument("--gpu", default=None, metavar="NAME",
                       help=f"the target accelerator, one of: {gpus.names()}")
    group.add_argument("--gpu-memory", default=None, metavar="SIZE", dest="gpu_memory",
                       help="the target accelerator's memory instead of --gpu, e.g. 80GiB")
    group.add_argument("--world-size", type=int, default=None, dest="world_size", metavar="N",
                       help="number of GPUs (ranks) the step is spread over (default 1)")
    group.add_argument("--sharding", choices=plan.SHARDINGS[1:], default=None,
                       help="how the ranks share the state (default: ddp when --world-size > 1)")
    group.add_argument("--checkpointing", action="store_true", default=None,
                       help="activation checkpointing of the model's repeated blocks")
    group.add_argument("--fail-on-plan", action="store_true", default=False, dest="fail_on_plan",
                       help="exit 1 when the plan's peak does not fit the --gpu/--gpu-memory target "
                            "(for CI; without it the plan only reports)")


def _precision(text: str) -> str:
    name = plan.PRECISION_ALIASES.get(text.lower(), text.lower())
    if name not in plan.PRECISIONS:
        raise argparse.ArgumentTypeError(f"unknown precision {text!r} (choose from {', '.join(plan.PRECISIONS)}; "
                                         f"or Lightning's {', '.join(plan.PRECISION_ALIASES)})")
    return name


def plan_options(args: argparse.Namespace) -> tuple[dict[str, Any], plan.Setup, plan.Target | None] | None:
    """The child's measuring options, the sharding and the target; None without plan flags."""
    if all(getattr(args, name, None) is None for name in PLAN_FLAGS):
        return None
    if args.gpu is not None and args.gpu_memory is not None:
        raise UsageError("--gpu and --gpu-memory name the same thing: pass one of them")
    target = None
    if args.gpu is not None:
        found = gpus.lookup(args.gpu)
        if found is None:
            raise UsageError(f"--gpu: unknown accelerator {args.gpu!r} (known: {gpus.names()}); "
                             "or pass its memory with --gpu-memory, e.g. 80GiB")
        target = plan.Target(*found)
    elif args.gpu_memory is not None:
        try:
            size = trace_config_mod.parse_memory(args.gpu_memory, "--gpu-memory", "--gpu-memory")
        except ConfigError as exc:
            raise UsageError(f"--gpu-memory: {exc.problem} (a size like 80GiB or 24GB)") from None
        if size is None:
            raise UsageError("--gpu-memory: needs a size, like 80GiB")
        target = plan.Target(f"a GPU with {report.human_bytes(size)}", size)
    world = args.world_size if args.world_size is not None else 1
    if not 1 <= world <= plan.MAX_WORLD:
        raise UsageError(f"--world-size must be between 1 and {plan.MAX_WORLD}, got {world}")
    sharding = args.sharding or ("ddp" if world > 1 else "none")
    options = {"optimizer": args.optimizer or "adamw", "optimizer_impl": args.optimizer_impl or "auto",
               "precision": args.precision or "fp32",
               "checkpointing": bool(args.checkpointing)}
    return options, plan.Setup(sharding, world), target


def _depth(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a depth of 0 or more, got {text!r}")
    return value


def require_torch() -> None:
    if importlib.util.find_spec("torch") is None:
        raise UsageError(f"the shape trace needs torch, which is not installed: install "
                         f"torchlint[trace] ({INSTALL_HINT})")


def _json_arg(text: str | None, flag: str, kind: type) -> Any:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{flag}: not valid JSON ({exc.msg}): {text!r}") from None
    if not isinstance(value, kind):
        want = "a JSON list, e.g. '[10, 64]'" if kind is list else "a JSON object, e.g. '{\"hidden\": 64}'"
        raise UsageError(f"{flag}: expected {want}, got {text!r}")
    return value


def _cli_inputs(args: argparse.Namespace) -> list[shapes.InputSpec] | None:
    if not args.input_shape:
        if args.dtype:
            raise UsageError("--dtype needs --input-shape (the inferred input picks its own dtype)")
        return None
    try:
        parsed = [shapes.parse_shape_text(s) for s in args.input_shape]
        return shapes.build_specs(parsed, args.dtype)
    except shapes.ShapeError as exc:
        raise UsageError(f"--input-shape/--dtype: {exc}") from None


def _target_spec(args: argparse.Namespace) -> shapes.InputSpec | None:
    shape, dtype = getattr(args, "target_shape", None), getattr(args, "target_dtype", None)
    if shape is None:
        if dtype is not None:
            raise UsageError("--target-dtype needs --target-shape")
        return None
    try:
        return shapes.build_specs([shapes.parse_shape_text(shape)], [dtype] if dtype else None)[0]
    except shapes.ShapeError as exc:
        raise UsageError(f"--target-shape/--target-dtype: {exc}") from None


def loss_arguments(args: argparse.Namespace, entry: Any = None) -> dict[str, Any]:
    """The job's ``train``/``loss``/``loss_target`` keys from ``--train``/``--loss``/
    ``--target-shape``/``--target-dtype``, else the model's config entry (``--loss`` or
    ``--target-shape`` alone means ``--train``)."""
    loss = getattr(args, "loss", None)
    target = _target_spec(args)
    flags = target is not None
    if loss is None and entry is not None:
        loss = entry.loss
    if target is None and entry is not None:
        target = entry.target
    if not getattr(args, "train", False) and getattr(args, "loss", None) is None and not flags:
        return {}
    out = _loss_job(loss)
    if target is not None:
        if out["loss"] == "sum":
            raise UsageError("--target-shape: the default loss (sum) takes no target: pass --loss mse, "
                             "--loss ce or --loss path/to/file.py:function (called as function(output, target))")
        out["loss_target"] = target.to_json()
    return out


def _loss_job(loss: str | None) -> dict[str, Any]:
    if loss is None or loss in BUILTIN_LOSSES:
        return {"train": True, "loss": loss or "sum"}
    if ":" not in loss:
        raise UsageError(f"--loss {loss!r}: expected {', '.join(BUILTIN_LOSSES)} or "
                         "path/to/file.py:function or package.module:function")
    try:
        target = parse_target(loss)
    except UsageError as exc:
        raise UsageError(f"--loss: {str(exc).replace('trace target', 'loss function')}") from None
    return {"train": True, "loss": {"target": target.job_target()}}


def run(args: argparse.Namespace, trace_config: dict[str, Any] | None = None,
        config_path: str | None = None, *, stdout: TextIO | None = None) -> int:
    stdout = stdout or sys.stdout
    cfg = trace_config_mod.load(trace_config, config_path)
    target = parse_target(args.target)
    require_torch()

    cli_args = _json_arg(args.args, "--args", list)
    cli_kwargs = _json_arg(args.kwargs, "--kwargs", dict)
    entry = (cfg.model_for_file(target.file, target.attr) if target.file
             else cfg.model_for_module(target.module or "", target.attr))
    ctor_args = cli_args if cli_args is not None else (entry.args if entry else [])
    ctor_kwargs = cli_kwargs if cli_kwargs is not None else (entry.kwargs if entry else {})
    check_target(target.display, target.source, target.attr, ctor_args, ctor_kwargs)
    inputs = _cli_inputs(args)
    if inputs is None and entry is not None:
        inputs = entry.inputs
    device = args.device or cfg.device
    timeout = cfg.timeout
    if args.timeout is not None:
        try:
            timeout = trace_config_mod.parse_timeout(args.timeout, "--timeout", "--timeout")
        except ConfigError:
            raise UsageError(f"--timeout must be a positive number of seconds, at most "
                             f"{trace_config_mod.MAX_TIMEOUT:g}, got {args.timeout:g}") from None
    memory = cfg.memory_limit
    if getattr(args, "memory_limit", None) is not None:
        try:
            memory = trace_config_mod.parse_memory(args.memory_limit, "--memory-limit", "--memory-limit")
        except ConfigError as exc:
            raise UsageError(f"--memory-limit: {exc.problem} ({exc.accepted})") from None
    planned = plan_options(args)
    if planned is not None and args.optimizer_impl is None and target.source is not None:
        asked = optimizer_impl(target.source, plan.OPTIMIZERS[planned[0]["optimizer"]][0])
        if asked is not None:  # the training code in the target's file asks for an implementation
            planned[0].update(optimizer_impl=asked[0], optimizer_impl_source=f"{target.source.name}:{asked[1]}")
    if device == "cuda":
        memory = None  # CUDA reserves a large address space; an RLIMIT_AS would break it

    job = {"id": "trace", "target": target.job_target(), "args": ctor_args, "kwargs": ctor_kwargs,
           "inputs": [s.to_json() for s in inputs] if inputs else None, "device": device,
           "mode": "trace", "plan": planned[0] if planned else None, **loss_arguments(args, entry)}
    result = TraceResult.from_json(run_jobs([job], timeout=timeout, memory_limit=memory)["trace"])

    if result.status == "error":
        if result.error_kind == "no-torch":
            raise UsageError(f"the shape trace needs torch, which cannot be imported: install "
                             f"torchlint[trace] ({INSTALL_HINT})")
        message = result.message if result.message is not None else "the trace could not run"
        if result.output:
            message += "\n" + result.output
        raise UsageError(message)

    problem = None
    inputs_text = ", ".join(shapes.format_spec(s) for s in result.inputs or [])
    findings = report.traced_findings(result, f"traced on {device} with input {inputs_text}")
    if result.status == "failed":
        problem = report.analyse_failure(result.failure or {}, result.model_type or "")
        if problem.rule is not None:
            f = problem.finding(context=f"traced on {device} with input {inputs_text}")
            if f is not None and all((g.path, g.line) != (f.path, f.line) for g in findings):
                findings.append(f)
    memory_plan = None
    if planned is not None and result.memory is not None:
        memory_plan = plan.make_plan(result.memory, planned[1], planned[2])
    fmt = getattr(args, "format", "table") or "table"
    if fmt == "json":
        text = report.render_json(result, target.display, device, problem, findings, memory_plan)
    else:
        text = report.render_table(result, target.display, device, problem, getattr(args, "depth", None),
                                   memory_plan=memory_plan)
    stdout.write(text + "\n")
    stdout.flush()
    if problem is not None or result.status == "nonfinite" or report.gradient_problem(result):
        return 1
    if getattr(args, "fail_on_plan", False) and memory_plan is not None and memory_plan.get("fits") is False:
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (``python -m torchlint.trace.command``), used by the tests and
    the benchmark until the CLI wires ``torchlint trace`` in."""
    from torchlint.errors import TorchlintError

    parser = argparse.ArgumentParser(prog="torchlint trace")
    add_arguments(parser)
    args = parser.parse_args(argv)
    table: dict[str, Any] | None = None
    path = args.config
    try:
        if path is None and Path("pyproject.toml").is_file():
            path = "pyproject.toml"
        if path is not None:
            table = _read_trace_table(Path(path))
        return run(args, table, path)
    except TorchlintError as exc:
        print(f"torchlint: error: {exc}", file=sys.stderr)
        return exc.exit_code


def _read_trace_table(path: Path) -> dict[str, Any] | None:
    try:
        data = bounded.loads_toml(bounded.read_text(path, bounded.CONFIG_LIMIT))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc})") from None
    except bounded.ParseError as exc:
        raise ConfigError(str(path), "toml", str(exc)) from None
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("torchlint", {})
    return data.get("trace")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
