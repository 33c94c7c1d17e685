"""Input shapes: parsing ``--input-shape``/config values, the inline ``# torchlint: input-shape=``
comment, and inference of a plausible input from a model's first layer.

Pure Python: the parent reads inline comments without importing torch (LibCST is imported
lazily), and the child calls :func:`infer_candidates` with plain attribute values it read
from the first layer.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

# Accepted dtype spellings -> the canonical torch attribute name.
DTYPES: dict[str, str] = {
    "float32": "float32", "float": "float32", "fp32": "float32",
    "float16": "float16", "half": "float16", "fp16": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float64": "float64", "double": "float64", "fp64": "float64",
    "int64": "int64", "long": "int64",
    "int32": "int32", "int": "int32",
    "int16": "int16", "short": "int16",
    "int8": "int8", "uint8": "uint8",
    "bool": "bool",
}
INTEGER_DTYPES = {"int64", "int32", "int16", "int8", "uint8", "bool"}
ACCEPTED_DTYPES = ", ".join(sorted(set(DTYPES.values())))

# Batch size used when the input is inferred (2, not 1: BatchNorm in training mode needs
# more than one value per channel).
INFERRED_BATCH = 2
# Spatial sizes tried, in order, for an inferred image input.  The first is shown when every
# size fails; ``check --trace`` only reports a failure when none of them runs.
IMAGE_SIZES = (32, 28, 64, 224, 96, 128, 256, 299, 384, 512)
VOLUME_SIZES = (16, 32, 8, 64)
SIGNAL_LENGTHS = (128, 64, 256, 1024, 32, 16000)
DECODER_SIZES = (8, 4, 7, 16, 1, 2, 32)
SEQUENCE_LENGTHS = (16, 8, 1)


class ShapeError(ValueError):
    """A malformed shape or dtype (the caller turns it into a usage/config error)."""


@dataclass
class InputSpec:
    shape: list[int]
    dtype: str = "float32"

    def to_json(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "dtype": self.dtype}


@dataclass
class Inference:
    """Candidate inputs inferred from a first layer (best guess first)."""

    layer: str  # qualified name of the layer the shape was inferred from
    layer_type: str
    reason: str  # e.g. "Conv2d in_channels=3 -> (N, C, H, W)"
    candidates: list[list[InputSpec]] = field(default_factory=list)
    high: int | None = None  # exclusive upper bound for integer inputs (Embedding)


def canonical_dtype(name: str) -> str:
    key = str(name).strip().lower()
    if key.startswith("torch."):
        key = key[len("torch."):]
    if key not in DTYPES:
        raise ShapeError(f"unknown dtype {name!r} (accepted: {ACCEPTED_DTYPES})")
    return DTYPES[key]


def parse_shape_text(text: str) -> list[int]:
    """``"4,3,32,32"``, ``"(4, 3, 32, 32)"``, ``"[4,3,32,32]"`` or ``"4x3x32x32"`` -> ints."""
    raw = text.strip()
    if raw[:1] in "([" and raw[-1:] in ")]":
        raw = raw[1:-1]
    parts = [p.strip() for p in re.split(r"[,x×\s]+", raw) if p.strip()]
    if not parts:
        raise ShapeError(f"empty input shape {text!r}; expected e.g. 4,3,32,32")
    return validate_shape(parts, text)


def validate_shape(values: Any, shown: Any = None) -> list[int]:
    shown = values if shown is None else shown
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
        raise ShapeError(f"input shape {shown!r} is not a list of sizes; expected e.g. [4, 3, 32, 32]")
    out: list[int] = []
    for v in values:
        if isinstance(v, bool):
            raise ShapeError(f"input shape {shown!r}: {v!r} is not a size")
        if isinstance(v, str):
            if not re.fullmatch(r"\d+", v):
                raise ShapeError(f"input shape {shown!r}: {v!r} is not a non-negative integer")
            v = int(v)
        if not isinstance(v, int) or v < 0:
            raise ShapeError(f"input shape {shown!r}: {v!r} is not a non-negative integer")
        out.append(v)
    if len(out) > 8:
        raise ShapeError(f"input shape {shown!r} has {len(out)} dimensions (at most 8)")
    return out


def build_specs(shapes: list[list[int]], dtypes: list[str] | None) -> list[InputSpec]:
    """Pair shapes with dtypes: no dtype -> float32, one dtype -> all inputs, else one each."""
    names = [canonical_dtype(d) for d in (dtypes or [])]
    if len(names) > 1 and len(names) != len(shapes):
        raise ShapeError(
            f"{len(names)} dtypes for {len(shapes)} input shapes; give one dtype for all "
            "inputs or one per input"
        )
    specs = []
    for i, shape in enumerate(shapes):
        dtype = names[0] if len(names) == 1 else (names[i] if names else "float32")
        specs.append(InputSpec(list(shape), dtype))
    return specs


def format_shape(shape: list[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def format_spec(spec: InputSpec | dict[str, Any]) -> str:
    if isinstance(spec, dict):
        spec = InputSpec(spec["shape"], spec.get("dtype", "float32"))
    text = format_shape(spec.shape)
    return text if spec.dtype == "float32" else f"{text} {spec.dtype}"


# --------------------------------------------------------------------------- inline comment

_DIRECTIVE = re.compile(r"#\s*torchlint\s*:\s*(?P<body>.*)$")
_INPUT_SHAPE = re.compile(r"input-shape\s*=\s*(?P<value>.*)$")
_DTYPE = re.compile(r"\s+dtype\s*=\s*(?P<dtype>\S.*?)\s*$")


def parse_directive(comment: str) -> list[InputSpec] | None:
    """Parse ``# torchlint: input-shape=(4, 3, 32, 32) dtype=float32`` (None if absent).

    Several inputs: ``input-shape=(4, 10), (4, 20)``; ``dtype=int64`` or ``dtype=(int64, float32)``.
    """
    m = _DIRECTIVE.search(comment)
    if not m:
        return None
    m2 = _INPUT_SHAPE.search(m.group("body"))
    if not m2:
        return None
    value = m2.group("value").strip()
    dtypes: list[str] | None = None
    d = _DTYPE.search(value)
    if d:
        value = value[: d.start()].strip()
        raw = d.group("dtype").strip().strip("()[]")
        dtypes = [x.strip().strip("'\"") for x in raw.split(",") if x.strip()]
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        raise ShapeError(f"cannot read input-shape={value!r}; expected e.g. input-shape=(4, 3, 32, 32)")
    if isinstance(parsed, int):
        parsed = (parsed,)
    if not isinstance(parsed, (tuple, list)):
        raise ShapeError(f"cannot read input-shape={value!r}; expected e.g. input-shape=(4, 3, 32, 32)")
    if parsed and all(isinstance(p, (tuple, list)) for p in parsed):
        shapes = [validate_shape(list(p), value) for p in parsed]
    else:
        shapes = [validate_shape(list(parsed), value)]
    return build_specs(shapes, dtypes)


def find_inline_shape(source: str, qualname: str) -> tuple[list[InputSpec], int] | None:
    """Find ``# torchlint: input-shape=...`` for class ``qualname`` in ``source``.

    The comment may trail the ``class`` line, sit in the comment block right above the class
    (or its decorators), or be among the comment lines before the first statement of the
    class body.  Returns the specs and the 1-based line of the comment.  Uses only ``ast`` and
    ``tokenize``, so the child can call it without LibCST.
    """
    span = class_header_span(source, qualname)
    if span is None:
        return None
    start, body = span  # 1-based: first line of the class statement; its first body statement
    lines = source.splitlines()
    candidates: list[int] = []
    i = start - 2
    while i >= 0 and lines[i].strip().startswith("#"):
        candidates.append(i)
        i -= 1
    candidates.extend(range(start - 1, min(max(body - 1, start), len(lines))))
    for idx in candidates:
        line = lines[idx]
        if "torchlint" not in line or "input-shape" not in line:
            continue
        hash_at = _comment_start(line)
        if hash_at is None:
            continue
        specs = parse_directive(line[hash_at:])
        if specs:
            return specs, idx + 1
    return None


def _comment_start(line: str) -> int | None:
    try:
        import io
        import tokenize

        for tok in tokenize.generate_tokens(io.StringIO(line).readline):
            if tok.type == tokenize.COMMENT:
                return tok.start[1]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    at = line.find("#")
    return at if at >= 0 else None


def class_header_span(source: str, qualname: str) -> tuple[int, int] | None:
    """(line of ``class``/first decorator, line of the first body statement), 1-based."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    node = find_class(tree, qualname)
    if node is None:
        return None
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return start, node.body[0].lineno if node.body else node.lineno + 1


def find_class(tree: ast.AST, qualname: str) -> ast.ClassDef | None:
    """The class ``Outer.Inner`` in an ``ast`` tree (the last definition wins, as at runtime)."""
    scope: Any = tree
    node = None
    for part in qualname.split("."):
        node = None
        for stmt in getattr(scope, "body", []):
            if isinstance(stmt, ast.ClassDef) and stmt.name == part:
                node = stmt
        if node is None:
            return None
        scope = node
    return node


# --------------------------------------------------------------------------- inference

def infer_candidates(layer: str, type_name: str, attrs: dict[str, Any]) -> Inference | None:
    """Candidate inputs for a model whose first parameterised layer is ``type_name``."""
    n = INFERRED_BATCH

    def one(shape: list[int], dtype: str = "float32") -> list[InputSpec]:
        return [InputSpec(shape, dtype)]

    if type_name in ("Linear", "LazyLinear", "Bilinear") and attrs.get("in_features"):
        f = int(attrs["in_features"])
        if type_name == "Bilinear":
            return None
        return Inference(layer, type_name, f"Linear in_features={f} -> (N, F)",
                         [one([n, f]), one([n, SEQUENCE_LENGTHS[1], f])])
    m = re.fullmatch(r"(Conv|ConvTranspose)([123])d", type_name)
    if m and attrs.get("in_channels"):
        c = int(attrs["in_channels"])
        d = int(m.group(2))
        if m.group(1) == "ConvTranspose":
            sizes = DECODER_SIZES
        else:
            sizes = {1: SIGNAL_LENGTHS, 2: IMAGE_SIZES, 3: VOLUME_SIZES}[d]
        names = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}[d]
        cands = [one([n, c] + [s] * d) for s in sizes]
        if d == 2 and m.group(1) == "Conv":
            # Channels-last pipelines permute (N, H, W, C) inside forward.
            cands += [one([n, s, s, c]) for s in IMAGE_SIZES[:4]]
        return Inference(layer, type_name, f"{type_name} in_channels={c} -> {names}", cands)
    if type_name in ("Embedding", "EmbeddingBag") and attrs.get("num_embeddings"):
        return Inference(layer, type_name,
                         f"{type_name} num_embeddings={attrs['num_embeddings']} -> integer (N, L)",
                         [one([n, length], "int64") for length in SEQUENCE_LENGTHS],
                         high=int(attrs["num_embeddings"]))
    if type_name in ("LSTM", "GRU", "RNN") and attrs.get("input_size"):
        f = int(attrs["input_size"])
        if attrs.get("batch_first"):
            cands = [one([n, length, f]) for length in SEQUENCE_LENGTHS]
            layout = "(N, L, F)"
        else:
            cands = [one([length, n, f]) for length in SEQUENCE_LENGTHS]
            layout = "(L, N, F)"
        return Inference(layer, type_name, f"{type_name} input_size={f} -> {layout}", cands)
    m = re.fullmatch(r"(BatchNorm|InstanceNorm)([123])d", type_name)
    if m and attrs.get("num_features"):
        c = int(attrs["num_features"])
        d = int(m.group(2))
        if d == 1:
            cands = [one([n, c])] if m.group(1) == "BatchNorm" else []
            cands += [one([n, c, s]) for s in SIGNAL_LENGTHS]
            layout = "(N, C)" if m.group(1) == "BatchNorm" else "(N, C, L)"
        else:
            sizes = IMAGE_SIZES if d == 2 else VOLUME_SIZES
            cands = [one([n, c] + [s] * d) for s in sizes]
            layout = "(N, C, H, W)" if d == 2 else "(N, C, D, H, W)"
        return Inference(layer, type_name, f"{type_name} num_features={c} -> {layout}", cands)
    if type_name == "LayerNorm" and attrs.get("normalized_shape"):
        norm = [int(x) for x in attrs["normalized_shape"]]
        return Inference(layer, type_name, f"LayerNorm normalized_shape={tuple(norm)} -> (N, *)",
                         [one([n] + norm), one([n, SEQUENCE_LENGTHS[1]] + norm)])
    return None
