"""The records the trace child sends its parent, written down.

The child (:mod:`torchlint.trace.child`) builds a :class:`TraceResult` per job and sends
``to_json()``; the supervisor and :mod:`.runner` relay the JSON (``run_jobs`` returns it as
it came, with the runner's own failures for crashes and timeouts); :mod:`.command`,
:mod:`.confirm` and :mod:`.report` read it back with ``TraceResult.from_json``.

On the wire a field that is ``None`` is left out: "absent" and "None" are the same thing, so
readers never need ``in`` tests.  Values nested in the records that are produced in the
forward hooks (call rows, described tensors) stay plain JSON, typed as ``TypedDict``\\ s.

Standard library only: the parent imports this without torch, the child before its
``sys.path`` is rebuilt.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypedDict, Union

# What ``describe`` makes of a value: ``{"shape": [...], "dtype": "float32"}`` for a tensor,
# ``{"value": ...}``, ``{"type": "Name"}``, ``{"dict": {...}}`` or a list of those.
Described = Union[dict, list]


class InputJSON(TypedDict):
    shape: list[int]
    dtype: str


class _CallRowBase(TypedDict):
    name: str  # "" for the root module
    type: str
    depth: int
    inputs: list[Described]


class CallRow(_CallRowBase, total=False):
    """One module call, in call order (made in the forward pre-hook)."""

    params: int  # only on a module's first call
    outputs: Described  # absent while it runs or when it failed
    failed: bool  # the module was running when the forward pass failed


class UnusedModule(TypedDict):
    name: str
    type: str
    params: int


# A user-defined module in the model: which of its attributes the forward passes used
# (``class`` is the qualified name of its class).
Instance = TypedDict("Instance", {"name": str, "class": str, "file": Union[str, None],  # type: ignore[misc]
                                  "attrs": dict[str, bool]})


class NonFinite(TypedDict):
    name: str  # "" for the model's output
    type: str
    nan: bool
    inf: bool
    inputs_finite: bool


class _FrameBase(TypedDict):
    file: str
    line: int
    function: str
    code: str


class Frame(_FrameBase, total=False):
    end_lineno: int
    colno: int
    end_colno: int


class _ModuleRefBase(TypedDict):
    name: str
    type: str
    builtin: bool


class ModuleRef(_ModuleRefBase, total=False):
    """The innermost module that was running when the forward pass failed."""

    file: Union[str, None]  # user-defined modules only
    class_line: Union[int, None]


class ChainLink(TypedDict):
    name: str
    type: str


class Owner(TypedDict):
    """The nearest user-defined ancestor of the failing module, and the path from it."""

    name: str
    type: str
    qualname: str
    file: Union[str, None]
    class_line: Union[int, None]
    path: list[str]
    path_types: list[str]


class InferredFrom(TypedDict):
    layer: str
    type: str
    reason: str


class CommentSource(TypedDict):
    file: Union[str, None]
    line: int


# The losses a training step can take by name (``--loss``), and how the report says each.
BUILTIN_LOSSES = {
    "sum": "the sum of the outputs",
    "mse": "MSE against a zero target",
    "ce": "cross-entropy against class-0 targets",
}


class DeviceMismatchInfo(TypedDict):
    """A CPU tensor made in ``forward`` met the model's tensors (TL101)."""

    op: str  # the op that mixed them
    created: Union[Frame, None]  # the user line that created the CPU tensor
    created_by: Union[str, None]  # the op that created it (``zeros``, ``arange``, ...)
    shape: list[int]


class _LossSideBase(TypedDict):
    shape: list[int]
    dtype: str


class _LossMismatchBase(TypedDict):
    loss: str  # the loss function as torch.nn.functional names it: mse_loss, cross_entropy, ...
    input: _LossSideBase  # the model's side
    target: _LossSideBase
    problem: str  # broadcast (runs, on every pair: silent), shape, dtype


class LossMismatch(_LossMismatchBase, total=False):
    """A loss called with an output and a target that disagree (TL102)."""

    broadcast: list[int]  # problem "broadcast": the shape the two sides broadcast to
    expected: _LossSideBase  # class-index losses: the target they take
    probabilities: list[int]  # cross_entropy: the shape class probabilities would have
    frame: Frame  # the user line that called the loss (absent: the built-in --loss)
    step: bool  # in the training step's loss (--loss), not in forward


class InplaceInfo(TypedDict, total=False):
    """An in-place op modified a tensor an earlier op saved for backward (TL104)."""

    message: str  # autograd's error, first line
    op: str  # the in-place op
    frame: Frame  # where the in-place op ran
    saved_by: str  # the op that saved the tensor
    saved_frame: Frame  # where it ran
    shape: list[int]  # the saved tensor


class _CauseBase(TypedDict):
    kind: str  # unused (never used by forward), cut (a graph cut: see op), unknown


class Cause(_CauseBase, total=False):
    """Why parameters got no gradient."""

    op: str  # detach, data, no_grad, or the non-differentiable op's name
    frame: Frame  # where forward cut the graph


class _ParamGroupBase(TypedDict):
    name: str  # module path ("" for the whole model) or parameter path
    type: str  # the module's class, or "Parameter"
    params: int


class ParamGroup(_ParamGroupBase, total=False):
    """Parameters listed together: the largest module all of whose parameters are alike."""

    owner: Union[Owner, None]  # where it is defined (the parent locates the line)
    cause: Cause


class ModuleGradient(TypedDict):
    """A top-level module's gradients: ``ok``, ``none``, ``partial``, ``frozen`` or
    ``nonfinite``; ``norm`` (the L2 norm of its gradients) on cpu/cuda only."""

    status: str
    norm: Union[float, str, None]  # "nan"/"inf" as strings (JSON has no NaN)


class NonFiniteGradient(TypedDict):
    name: str  # parameter path
    nan: bool
    inf: bool


class _ObservationBase(TypedDict):
    code: str  # the rule it confirms or adds: TL001, TL002, ..., TL100-TL104
    file: str  # absolute path
    line: int
    message: str


class Observation(_ObservationBase, total=False):
    """What the dry run of a script (``torchlint run``) saw, at a line of the user's code."""

    name: str  # the variable that keeps a graph (TL002), the layer (TL005, TL021)
    region: list[int]  # TL002: (first line of the function that steps, the line of the step)


class RunSummary(TypedDict, total=False):
    """How the dry run of a script went: what bounded it and what it measured."""

    device: str  # fake-cuda (meta standing for cuda) or cpu
    ended: str  # bound (the step/pass limit stopped it), finished, exit, failed
    exit_code: int | None  # SystemExit's code
    steps: int  # optimizer steps taken
    backwards: int
    passes: int  # DataLoader passes started
    batches: int  # batches the DataLoaders yielded
    forwards: int  # top-level module calls
    lr: list[list[float]]  # per optimizer step, the learning rate of each optimizer's first group
    peak_bytes: int  # the largest total of live tensor storage seen (meta and cpu)
    written: list[str]  # files the script wrote (in the run's temporary directory)
    blocked: list[str]  # network connections refused


class _Record:
    """``to_json`` leaves out ``None`` fields; ``from_json`` ignores keys it does not know."""

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)  # type: ignore[arg-type]
                if getattr(self, f.name) is not None}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Any:
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class Diagnosis(_Record):
    """What a layer (or a ``view`` in forward code) expected, and how to fix it."""

    expected: str
    problem: str
    fix: str
    attribute: str | None = None  # the constructor argument to change ...
    should_be: Any = None  # ... and its right value
    input_fault: bool | None = None  # the model's input is wrong, not the layer


@dataclass
class Failure(_Record):
    """Why a job failed: user code raised (import, build, forward), or the process crashed or
    timed out (``phase`` ``crash``/``timeout``, made by the runner).  Field order is the
    order of the keys in ``--format json`` output."""

    phase: str  # import, build, forward, step (the memory plan's backward), trace, crash, timeout
    exc_type: str | None = None
    exc_message: str | None = None
    message: str = ""
    kind: str | None = None  # layer (a built-in layer raised), forward (user forward code), other
    traceback: list[Frame] | None = None  # the user's frames, innermost last
    user_frame: Frame | None = None
    hint: str | None = None
    meta_limitation: bool | None = None  # needs real values: meta tensors have none
    module: ModuleRef | None = None
    received: list[Described] | None = None  # the failing module's arguments
    chain: list[ChainLink] | None = None
    owner: Owner | None = None
    # from the diagnosis
    expected: str | None = None
    problem: str | None = None
    fix: str | None = None
    attribute: str | None = None
    should_be: Any = None
    input_fault: bool | None = None
    shape_related: bool | None = None
    train: bool | None = None  # failed in training mode
    device_mismatch: DeviceMismatchInfo | None = None  # kind "device" (TL101)
    inputs: list[InputJSON] | None = None  # the inputs it failed with
    inference_doubtful: bool | None = None
    fits: list[InputJSON] | None = None  # another common input size that runs
    output: str | None = None  # what the job printed (the runner's tail)

    def add(self, diagnosis: Diagnosis) -> None:
        for name, value in diagnosis.to_json().items():
            setattr(self, name, value)


@dataclass
class Gradients(_Record):
    """What one training step's backward left in ``.grad`` (``trace --train``, ``check --trace``)."""

    loss: str  # how the outputs were reduced to a scalar
    backward: bool = False  # backward ran (False: the loss did not require grad, or error)
    error: str | None = None  # the loss or backward failed: why
    trainable: int = 0  # parameters with requires_grad
    frozen_params: int = 0
    no_grad: list[ParamGroup] = field(default_factory=list)  # trainable, but grad is None
    frozen: list[ParamGroup] = field(default_factory=list)  # requires_grad=False: intended
    modules: dict[str, ModuleGradient] = field(default_factory=dict)  # per top-level module
    nonfinite: list[NonFiniteGradient] = field(default_factory=list)  # cpu/cuda only
    nonfinite_origin: str | None = None  # the first module (backward order) with a NaN/Inf gradient
    inplace: InplaceInfo | None = None  # backward failed: an in-place op modified a saved tensor


@dataclass
class TraceResult(_Record):
    """One job's result.  ``status``: ``ok``, ``nonfinite`` (ran, NaN/Inf on cpu/cuda),
    ``failed`` (user code failed, or the process crashed or hung: ``failure``) or ``error``
    (the job itself is wrong: ``error_kind`` and ``message``)."""

    status: str
    # status "error"
    error_kind: str | None = None
    message: str | None = None
    missing: list[str] | None = None  # needs-args: the constructor arguments without a value
    output: str | None = None  # what the child printed (when it died before any job ran)
    # the model
    model_type: str | None = None
    params: int | None = None  # None: the model was never built
    trainable_params: int | None = None
    param_bytes: int | None = None
    buffer_bytes: int | None = None
    # the inputs
    inputs: list[InputJSON] | None = None
    inputs_inferred: bool | None = None
    inferred_from: InferredFrom | None = None
    inputs_from_comment: CommentSource | None = None
    # the forward passes
    calls: list[CallRow] | None = None
    calls_truncated: bool | None = None
    unused: list[UnusedModule] | None = None
    instances: list[Instance] | None = None
    activation_bytes: int | None = None
    nonfinite: list[NonFinite] | None = None
    model_output: Described | None = None  # (the supervisor drops it: not used yet)
    first_layer: str | None = None  # the first built-in layer with parameters called
    gradients: Gradients | None = None  # --train: the backward of one step
    losses: list[LossMismatch] | None = None  # losses whose output and target disagree
    target: InputJSON | None = None  # --target-shape: the target of the step's loss
    failure: Failure | None = None
    memory: dict[str, Any] | None = None  # one training step's memory (child/memory.py)
    # the dry run of a script (``torchlint run``)
    observations: list[Observation] | None = None
    run: RunSummary | None = None
    # the process
    startup_seconds: float | None = None  # spawn to ready: interpreters, torch import, warm-up
    torch_import_seconds: float | None = None  # of which importing torch
    seconds: float | None = None
    peak_rss_kb: int | None = None
    cuda_peak_bytes: int | None = None
    cuda_device: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        if self.failure is not None:
            data["failure"] = self.failure.to_json()
        if self.gradients is not None:
            data["gradients"] = self.gradients.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "TraceResult":
        result: TraceResult = super().from_json(data)
        if isinstance(result.failure, dict):
            result.failure = Failure.from_json(result.failure)
        if isinstance(result.gradients, dict):
            result.gradients = Gradients.from_json(result.gradients)
        return result

    def set_traced(self, traced: "Traced") -> None:
        """Take over what a forward pass recorded (not its failure)."""
        for f in dataclasses.fields(Traced):
            if f.name != "failure":
                setattr(self, f.name, getattr(traced, f.name))
        self.losses = traced.losses or None


@dataclass
class Traced:
    """What one traced forward pass (per input candidate) recorded."""

    calls: list[CallRow] = field(default_factory=list)
    calls_truncated: bool = False
    unused: list[UnusedModule] = field(default_factory=list)
    instances: list[Instance] = field(default_factory=list)
    activation_bytes: int = 0
    nonfinite: list[NonFinite] = field(default_factory=list)
    model_output: Described | None = None
    first_layer: str | None = None
    gradients: Gradients | None = None
    losses: list[LossMismatch] = field(default_factory=list)
    failure: Failure | None = None
