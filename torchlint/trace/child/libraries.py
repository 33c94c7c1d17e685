"""What libraries need to run a training step on meta tensors, applied only where the user's
code has imported them (this module imports none).

* **Hugging Face transformers** skips its value checks (``(mask == 0).all()``, packed-sequence
  detection, "is the attention mask all ones") when ``transformers.utils.import_utils.is_tracing``
  says the tensor is being traced: under ``torch.compile``, ``torch.fx``, ``torch.jit`` or for
  a ``FakeTensor``, a tensor with a shape and no values.  A meta tensor is one too, so inside
  :func:`meta_as_fake` transformers' ``is_fake_tensor`` also answers True for a meta tensor:
  the checks are skipped as they are under ``torch.compile``, and the model takes the path a
  compiled one takes (a mask built from shapes, the SDPA ``is_causal`` fast path not assumed).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Iterator


@contextlib.contextmanager
def meta_as_fake(torch: Any) -> Iterator[bool]:
    """Inside the block transformers takes a meta tensor for a fake one (see the module
    docstring); yields whether transformers was there to be told."""
    module = sys.modules.get("transformers.utils.import_utils")
    original = getattr(module, "is_fake_tensor", None) if module is not None else None
    if not callable(original):
        yield False
        return

    def is_fake_tensor(x: Any, _original: Callable[[Any], bool] = original) -> bool:
        return (isinstance(x, torch.Tensor) and x.device.type == "meta") or _original(x)

    module.is_fake_tensor = is_fake_tensor  # type: ignore[union-attr]
    try:
        yield True
    finally:
        module.is_fake_tensor = original  # type: ignore[union-attr]
