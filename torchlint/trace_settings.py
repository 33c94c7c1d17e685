"""The ``[tool.torchlint.trace]`` table.

    [tool.torchlint.trace]
    timeout = 60              # seconds per traced model (> 0, at most a day)
    memory-limit = "8GiB"     # address-space limit of the trace process; "none" to disable
    device = "meta"           # default --device for `torchlint trace`: meta, cpu or cuda

    [tool.torchlint.trace.models."models/net.py:Net"]     # or "pkg.module:factory"
    args = [10]
    kwargs = { hidden = 64 }
    input-shape = [[4, 3, 32, 32]]    # one shape, or one per forward() input
    dtype = "float32"                 # one for all inputs, or a list (int64 for token ids)
    loss = "ce"                       # the training step's loss: sum, mse, ce, or "file.py:function"
    target-shape = [4]                # the loss's target, shaped like the real one
    target-dtype = "int64"            # its dtype (default float32)

Model keys with a file path are relative to the directory of the config file.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchlint import shapes
from torchlint.sizes import SIZE_UNITS
from torchlint.errors import ConfigError

DEVICES = ("meta", "cpu", "cuda")
TOP_KEYS = ("timeout", "memory-limit", "device", "models")
MODEL_KEYS = ("args", "kwargs", "input-shape", "dtype", "loss", "target-shape", "target-dtype")
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 86400.0  # one day: longer is a mistake (or a hang), never a model being traced
MAX_MEMORY = 1 << 50  # 1 PiB: beyond any machine, and inside what setrlimit accepts
# A bare number is MiB; a one-letter unit is binary (as ``docker --memory 8g``); kB, MB, GB
# and TB are decimal and KiB, MiB, GiB and TiB binary, as everywhere in torchlint.
_UNITS = {"": 1 << 20, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, **SIZE_UNITS}


# The trace child's default address-space limit: a runaway allocation fails in the child,
# not in the OOM killer, and a hostile model cannot take most of a shared machine (with 75%
# of RAM, one reached 18 GB of 24). A model traced on the meta device needs far less; a CPU
# trace of a large model may need more: ``trace.memory-limit`` raises it.
DEFAULT_MEMORY_LIMIT = 8 << 30


def default_memory_limit() -> int | None:
    """``DEFAULT_MEMORY_LIMIT``, or 75% of physical memory where that is less."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return DEFAULT_MEMORY_LIMIT
    return min(DEFAULT_MEMORY_LIMIT, int(total * 0.75)) if total > 0 else DEFAULT_MEMORY_LIMIT


@dataclass
class ModelConfig:
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)
    inputs: list[shapes.InputSpec] | None = None
    loss: str | None = None  # the step's loss, as --loss spells it
    target: shapes.InputSpec | None = None  # the loss's target (target-shape, target-dtype)


@dataclass
class TraceConfig:
    timeout: float = DEFAULT_TIMEOUT
    memory_limit: int | None = field(default_factory=default_memory_limit)
    device: str = "meta"
    models: dict[str, ModelConfig] = field(default_factory=dict)
    base_dir: Path = field(default_factory=Path.cwd)

    def model_for_file(self, path: Path, attr: str) -> ModelConfig | None:
        path = path.resolve()
        for key, model in self.models.items():
            left, name = key.rsplit(":", 1)
            if name != attr or not (left.endswith(".py") or "/" in left):
                continue
            for base in (self.base_dir, Path.cwd()):
                if (base / left).resolve() == path:
                    return model
        return None

    def model_for_module(self, module: str, attr: str) -> ModelConfig | None:
        return self.models.get(f"{module}:{attr}")


def parse_timeout(value: Any, source: str, key: str) -> float:
    """Seconds per traced model: a finite number in (0, MAX_TIMEOUT]."""
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            or not 0 < value <= MAX_TIMEOUT):
        raise ConfigError(source, key, f"{value!r} is not a number of seconds",
                          f"a number > 0 and at most {MAX_TIMEOUT:g}, e.g. 60")
    return float(value)


def parse_memory(value: Any, source: str, key: str) -> int | None:
    """Bytes (``None``: no limit). At most MAX_MEMORY; NaN, infinities and negatives are refused."""
    accepted = 'a size in MiB (int) or a string like "8GiB", "512MiB"; 0 or "none" to disable'
    size: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        size = value * (1 << 20)
    elif isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        if text in ("none", "off", "0", "unlimited"):
            return None
        m = re.fullmatch(r"(\d+(?:\.\d+)?)([a-z]*)", text)
        if m and m.group(2) in _UNITS:
            size = float(m.group(1)) * _UNITS[m.group(2)]
    if size is None or math.isnan(size):
        raise ConfigError(source, key, f"{value!r} is not a size", accepted)
    if size < 0:
        raise ConfigError(source, key, f"{value!r} is negative", accepted)
    if size > MAX_MEMORY:
        raise ConfigError(source, key, f"{value!r} is more than {MAX_MEMORY >> 50} PiB", accepted)
    return int(size) or None


def load(table: dict[str, Any] | None, config_path: str | None = None) -> TraceConfig:
    """Validate the raw ``[tool.torchlint.trace]`` table (``None`` or ``{}``: defaults)."""
    source = str(config_path) if config_path else "[tool.torchlint.trace]"
    base = Path(config_path).resolve().parent if config_path else Path.cwd()
    cfg = TraceConfig(base_dir=base)
    table = table or {}
    if not isinstance(table, dict):
        raise ConfigError(source, "trace", "must be a table", ", ".join(TOP_KEYS))
    for key, value in table.items():
        dotted = f"trace.{key}"
        if key == "timeout":
            cfg.timeout = parse_timeout(value, source, dotted)
        elif key == "memory-limit":
            cfg.memory_limit = parse_memory(value, source, dotted)
        elif key == "device":
            if value not in DEVICES:
                raise ConfigError(source, dotted, f"unknown device {value!r}", ", ".join(DEVICES))
            cfg.device = value
        elif key == "models":
            if not isinstance(value, dict):
                raise ConfigError(source, dotted, "must be a table of targets",
                                  '"path/file.py:ClassName" or "package.module:factory" keys')
            for target, entry in value.items():
                cfg.models[target] = _model(source, f'trace.models."{target}"', target, entry)
        else:
            raise ConfigError(source, dotted, "unknown key", ", ".join(TOP_KEYS))
    return cfg


def _model(source: str, key: str, target: str, entry: Any) -> ModelConfig:
    if ":" not in target or not target.rsplit(":", 1)[1]:
        raise ConfigError(source, key, "not a trace target",
                          '"path/file.py:ClassName" or "package.module:factory"')
    if not isinstance(entry, dict):
        raise ConfigError(source, key, "must be a table", ", ".join(MODEL_KEYS))
    model = ModelConfig()
    shape_value = None
    dtype_value = None
    for k, v in entry.items():
        if k == "args":
            if not isinstance(v, list):
                raise ConfigError(source, f"{key}.args", f"{v!r} is not a list", "a list, e.g. [10, 64]")
            model.args = v
        elif k == "kwargs":
            if not isinstance(v, dict):
                raise ConfigError(source, f"{key}.kwargs", f"{v!r} is not a table",
                                  "a table, e.g. { hidden = 64 }")
            model.kwargs = dict(v)
        elif k == "input-shape":
            shape_value = v
        elif k == "dtype":
            dtype_value = v
        elif k == "loss":
            if not isinstance(v, str) or not v:
                raise ConfigError(source, f"{key}.loss", f"{v!r} is not a loss",
                                  'sum, mse, ce or "path/to/file.py:function"')
            model.loss = v
        elif k in ("target-shape", "target-dtype"):
            continue
        else:
            raise ConfigError(source, f"{key}.{k}", "unknown key", ", ".join(MODEL_KEYS))
    model.target = _target(source, key, entry.get("target-shape"), entry.get("target-dtype"))
    if dtype_value is not None and shape_value is None:
        raise ConfigError(source, f"{key}.dtype", "dtype needs input-shape", "set input-shape too")
    if shape_value is not None:
        try:
            if isinstance(shape_value, list) and shape_value and all(isinstance(s, list) for s in shape_value):
                shape_list = [shapes.validate_shape(s) for s in shape_value]
            else:
                shape_list = [shapes.validate_shape(shape_value)]
        except shapes.ShapeError as exc:
            raise ConfigError(source, f"{key}.input-shape", str(exc),
                              "a shape like [4, 3, 32, 32] or a list of shapes") from None
        if dtype_value is None:
            dtypes = None
        elif isinstance(dtype_value, str):
            dtypes = [dtype_value]
        elif isinstance(dtype_value, list) and all(isinstance(d, str) for d in dtype_value):
            dtypes = dtype_value
        else:
            raise ConfigError(source, f"{key}.dtype", f"{dtype_value!r} is not a dtype name",
                              shapes.ACCEPTED_DTYPES)
        try:
            model.inputs = shapes.build_specs(shape_list, dtypes)
        except shapes.ShapeError as exc:
            raise ConfigError(source, f"{key}.dtype", str(exc), shapes.ACCEPTED_DTYPES) from None
    return model


def _target(source: str, key: str, shape: Any, dtype: Any) -> shapes.InputSpec | None:
    """The ``target-shape``/``target-dtype`` of a model entry (None without them)."""
    if shape is None:
        if dtype is not None:
            raise ConfigError(source, f"{key}.target-dtype", "target-dtype needs target-shape",
                              "set target-shape too")
        return None
    if dtype is not None and not isinstance(dtype, str):
        raise ConfigError(source, f"{key}.target-dtype", f"{dtype!r} is not a dtype name", shapes.ACCEPTED_DTYPES)
    try:
        return shapes.build_specs([shapes.validate_shape(shape)], [dtype] if dtype else None)[0]
    except shapes.ShapeError as exc:
        raise ConfigError(source, f"{key}.target-shape", str(exc),
                          f"a shape like [4] and a dtype of {shapes.ACCEPTED_DTYPES}") from None
