"""The codes of the rules the core names: no rule module is imported for a code string (the
rule classes use these constants as their ``code``; their metadata comes from the registry:
``rule.rule_info``)."""

from torchlint.finding import Severity

SYNTAX_ERROR = "TL000"  # a file, or a notebook cell, that could not be read or parsed
MISSING_ZERO_GRAD = "TL001"  # these, to TL022, as ``torchlint run`` observes them
LOSS_KEPT_WITH_GRAPH = "TL002"
EVAL_WITHOUT_NO_GRAD = "TL003"
UNUSED_LAYER = "TL005"
TENSOR_WITHOUT_DEVICE = "TL010"
MODEL_MODE = "TL011"
AMP_UNSCALED_CLIPPING = "TL012"
SCHEDULER_STEP_GRANULARITY = "TL013"
SAMPLER_EPOCH_NOT_SET = "TL014"
ACCUMULATION_WITHOUT_SCALING = "TL017"
LEGACY_AUTOGRAD_API = "TL018"
OPTIMIZER_MISSES_PARAMETERS = "TL021"
LOSS_INPUT_MISMATCH = "TL022"
UNSAFE_CHECKPOINT_LOAD = "TL016"  # SARIF's one security rule
SHAPE_MISMATCH = "TL100"  # the trace's
DEVICE_MISMATCH = "TL101"  # the trace's
LOSS_TARGET_MISMATCH = "TL102"  # the trace's
BATCH_NORM_ONE_VALUE = "TL103"  # the trace's
INPLACE_BREAKS_BACKWARD = "TL104"  # the trace's
UNUSED_NOQA = "TL901"
INVALID_NOQA = "TL902"
IO_ERROR = "E902"  # a path named on the command line that cannot be read (ruff's code): no rule reports it


class _IoError:
    """What a finding takes from its rule (``finding.RuleMeta``), for ``IO_ERROR``."""

    code = IO_ERROR
    name = "io-error"
    severity = Severity.ERROR


IO_ERROR_RULE = _IoError()
