"""TL008 functional-dropout-ignores-eval: ``F.dropout`` in an ``nn.Module``'s forward without
``training=self.training``.

For every class of the file with a ``forward``, the functions that forward runs
(``semantic.modules.forward_code``: forward and the same-file methods and functions it calls)
are searched for calls of ``torch.nn.functional.dropout``/``dropout1d/2d/3d``/
``alpha_dropout``/``feature_alpha_dropout`` (``torch_api.functional_dropout``, imports
resolved by the semantic model) that pass no ``training`` argument (neither by keyword nor as
the third positional one, nor possibly in ``**kwargs``). Left alone: a call under a test of
``self.training`` (``if self.training and ...:``, ``... if self.training else x``) or after an
early ``if not self.training: return``; an explicit ``training=True`` (intent: always-on
dropout), or a comment at the call or a sentence about dropout in the docstring of its class or
function saying it stays on in evaluation (``semantic.comments.documented``); functions no
forward runs (MC-dropout helpers, code outside classes).

Whether the class is an ``nn.Module`` may depend on another file, so the findings are pending
facts the project pass settles (``semantic.modules.settle``).
"""

from __future__ import annotations

import re
from typing import Iterable

import libcst as cst

from torchlint.context import dotted_name, iter_nodes
from torchlint.finding import Finding, Severity
from torchlint.fixes import SAFE, Fix, insert_after
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.semantic.callgraph import enclosing_function
from torchlint.semantic.comments import documented
from torchlint.semantic.modules import forward_owners, pending, settle
from torchlint.torch_api import functional_dropout, has_star_kwargs, keyword_arg

# A comment on or above the call that says dropout stays on in evaluation ("always applies
# dropout", "dropout at inference too", Monte-Carlo dropout): intent, as an explicit training=True.
_ON = (r"always|also (at|in|during) (eval|inference|test)|even (at|in|during) (eval|inference|test)|"
       r"(at|in|during) (inference|eval|test)[^#.]*(too|as well)|monte.?carlo|\bmc.?dropout")
_ALWAYS_ON = re.compile(_ON, re.IGNORECASE)
# The same said in the docstring of the class or function holding the call, in a sentence
# about dropout ("Note: this module always applies dropout, even in evaluation").
_ALWAYS_ON_DOCSTRING = re.compile(rf"dropout[^.]*?({_ON})|({_ON})[^.]*?dropout", re.IGNORECASE)

_LAYERS = {"dropout": "Dropout", "dropout1d": "Dropout1d", "dropout2d": "Dropout2d", "dropout3d": "Dropout3d",
           "alpha_dropout": "AlphaDropout", "feature_alpha_dropout": "FeatureAlphaDropout"}


def message(written: str, cls: str, function: str) -> str:
    layer = _LAYERS[function]
    return (f"`{written}` runs in `{cls}.forward` with its default training=True, so it keeps dropping after "
            f"model.eval(); pass training=self.training or use nn.{layer}")


class FunctionalDropoutIgnoresEval(Rule):
    code = "TL008"
    name = "functional-dropout-ignores-eval"
    severity = Severity.WARNING
    default_enabled = True
    summary = "F.dropout in forward without training=self.training stays on after model.eval()"
    # [tool.torchlint.functional-dropout-ignores-eval]; the page's Options block is generated from this.
    options: dict[str, Option] = {}
    requires_text = ("dropout",)
    fixable = (SAFE,)

    VALID: list[Valid | str] = [
        # The rate is zero whenever the module is not training: nn.MultiheadAttention's
        # functional form (brevitas' QuantMultiheadAttention), and a conditional expression.
        """
        import torch.nn as nn
        import torch.nn.functional as F
        def attention(q, k, v, dropout_p, training=True):
            if not training:
                dropout_p = 0.0
            w = (q @ k.transpose(-2, -1)).softmax(-1)
            if dropout_p > 0.0:
                w = F.dropout(w, p=dropout_p)
            return w @ v
        class Attn(nn.Module):
            def __init__(self, p):
                super().__init__()
                self.p = p
            def forward(self, x):
                rate = self.p if self.training else 0
                return F.dropout(attention(x, x, x, self.p, training=self.training), rate)
        """,
        # The fix: the module's mode chooses.
        """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def forward(self, x):
                return F.dropout(x, p=0.5, training=self.training)
        """,
        # training passed positionally (the third argument).
        """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def forward(self, x):
                return F.dropout2d(x, 0.1, self.training)
        """,
        # An explicit training=True is intent (Tacotron's always-on prenet dropout).
        """
        import torch.nn as nn
        import torch.nn.functional as F
        class Prenet(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(80, 256)
            def forward(self, x):
                return F.dropout(F.relu(self.fc(x)), p=0.5, training=True)
        """,
        # A comment saying the dropout stays on at inference is intent too (Tacotron 2's prenet).
        """
        import torch.nn as nn
        import torch.nn.functional as F
        class Prenet(nn.Module):
            def __init__(self, layers):
                super().__init__()
                self.layers = layers
            def forward(self, x):
                for layer in self.layers:
                    x = F.dropout(layer(x), p=0.5)  # always applies dropout
                return x
        """,
        """
        import torch.nn as nn
        import torch.nn.functional as F
        class Head(nn.Module):
            def forward(self, x):
                # Monte-Carlo dropout: kept on in evaluation to sample predictions
                return F.dropout(x, p=0.1)
        """,
        # Guarded by the module's mode, alone or with more conditions.
        """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def forward(self, x):
                if self.training:
                    x = F.dropout(x, 0.2)
                if self.training and self.p > 0:
                    x = F.alpha_dropout(x, self.p)
                return x
        """,
        # A conditional expression on the mode.
        """
        import torch.nn as nn
        from torch.nn import functional as F
        class Net(nn.Module):
            def forward(self, x):
                return F.dropout(x, 0.2) if self.training else x
        """,
        # An early return outside training.
        """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def forward(self, x):
                if not self.training:
                    return x
                return F.dropout(x, 0.3)
        """,
        # Code outside modules: a data augmentation function.
        """
        import torch.nn.functional as F
        def augment(x):
            return F.dropout(x, 0.1)
        """,
        # A class that is not an nn.Module.
        """
        import torch.nn.functional as F
        class Augment:
            def forward(self, x):
                return F.dropout(x, 0.1)
        """,
        # A method forward never calls: Monte Carlo dropout on purpose.
        """
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)
                self.drop = nn.Dropout(0.1)
            def forward(self, x):
                return self.fc(self.drop(x))
            def mc_sample(self, x):
                return self.fc(F.dropout(x, 0.1))
        """,
        # Not torch's dropout; the training flag handed through **kwargs.
        """
        import torch.nn as nn
        import torch.nn.functional as F
        from mylib import dropout
        class Net(nn.Module):
            def forward(self, x, **kw):
                x = dropout(x, 0.1)
                return F.dropout(x, 0.1, **kw)
        """,
        # Said in the class docstring (review5 TL008_1: espnet's Tacotron 2 prenet).
        """
        import torch.nn as nn
        import torch.nn.functional as F
        class Prenet(nn.Module):
            \"\"\"Prenet of the decoder.

            Note:
                Dropout is applied even in evaluation, as in the paper.
            \"\"\"
            def __init__(self, layers):
                super().__init__()
                self.layers = layers
            def forward(self, x):
                for layer in self.layers:
                    # non deterministic on purpose: see the note above
                    x = F.dropout(layer(x), 0.5)
                return x
        """,
    ]
    INVALID: list[Invalid] = [
        # The rate is zeroed by a switch that is not the module's mode.
        Invalid(
            """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self, p, enabled):
                    super().__init__()
                    self.p, self.enabled = p, enabled
                def forward(self, x):
                    p = self.p
                    if not self.enabled:
                        p = 0.0
                    return F.dropout(x, p)
            """,
            lines=(12,),
            messages=(message("F.dropout", "Net", "dropout"),),
            fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self, p, enabled):
                    super().__init__()
                    self.p, self.enabled = p, enabled
                def forward(self, x):
                    p = self.p
                    if not self.enabled:
                        p = 0.0
                    return F.dropout(x, p, training=self.training)
            """,
        ),
        # A docstring saying "always" about something else than dropout is no such note.
        Invalid(
            """
            import torch.nn as nn
            import torch.nn.functional as F
            class Encoder(nn.Module):
                \"\"\"Encoder. The output is always normalised.

                Uses dropout between layers.
                \"\"\"
                def forward(self, x):
                    return F.dropout(x, 0.2)
            """,
            lines=(10,),
            messages=(message("F.dropout", "Encoder", "dropout"),),
            fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Encoder(nn.Module):
                \"\"\"Encoder. The output is always normalised.

                Uses dropout between layers.
                \"\"\"
                def forward(self, x):
                    return F.dropout(x, 0.2, training=self.training)
            """,
        ),
        Invalid(
            """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
                def forward(self, x):
                    return self.fc(F.dropout(x, 0.5))
            """,
            lines=(9,),
            messages=(message("F.dropout", "Net", "dropout"),),
            fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
                def forward(self, x):
                    return self.fc(F.dropout(x, 0.5, training=self.training))
            """,
        ),
        Invalid(
            """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def forward(self, x):
                    return F.dropout2d(x, p=0.1, inplace=False)
            """,
            lines=(6,),
            messages=(message("F.dropout2d", "Net", "dropout2d"),),
            fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def forward(self, x):
                    return F.dropout2d(x, p=0.1, inplace=False, training=self.training)
            """,
        ),
        Invalid(
            """
            import torch
            class SelfNorm(torch.nn.Module):
                def forward(self, x):
                    return torch.nn.functional.alpha_dropout(torch.selu(x), 0.1)
            """,
            lines=(5,),
            messages=(message("torch.nn.functional.alpha_dropout", "SelfNorm", "alpha_dropout"),),
            fixed="""
            import torch
            class SelfNorm(torch.nn.Module):
                def forward(self, x):
                    return torch.nn.functional.alpha_dropout(torch.selu(x), 0.1, training=self.training)
            """,
        ),
        Invalid(
            """
            from torch import nn
            from torch.nn.functional import dropout
            class Net(nn.Module):
                def forward(self, x):
                    return dropout(x, 0.3)
            """,
            lines=(6,),
            messages=(message("dropout", "Net", "dropout"),),
            fixed="""
            from torch import nn
            from torch.nn.functional import dropout
            class Net(nn.Module):
                def forward(self, x):
                    return dropout(x, 0.3, training=self.training)
            """,
        ),
        # In a helper method forward calls.
        Invalid(
            """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def _regularise(self, h):
                    return F.dropout(h, 0.2)
                def forward(self, x):
                    return self._regularise(x)
            """,
            lines=(6,),
            messages=(message("F.dropout", "Net", "dropout"),),
            fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def _regularise(self, h):
                    return F.dropout(h, 0.2, training=self.training)
                def forward(self, x):
                    return self._regularise(x)
            """,
        ),
        # In a nested function forward calls, and a module-level helper it calls.
        Invalid(
            """
            import torch.nn as nn
            import torch.nn.functional as F
            def drop_tokens(h):
                return F.dropout1d(h, 0.1)
            class Net(nn.Module):
                def forward(self, x):
                    def block(h):
                        return F.dropout(h, 0.2)
                    return drop_tokens(block(x))
            """,
            lines=(5, 9),
            messages=(message("F.dropout1d", "Net", "dropout1d"), message("F.dropout", "Net", "dropout")),
            fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            def drop_tokens(h):
                return F.dropout1d(h, 0.1)
            class Net(nn.Module):
                def forward(self, x):
                    def block(h):
                        return F.dropout(h, 0.2, training=self.training)
                    return drop_tokens(block(x))
            """,
        ),
        # A guard that is not the module's mode.
        Invalid(
            """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self, use_dropout=True):
                    super().__init__()
                    self.use_dropout = use_dropout
                def forward(self, x):
                    if self.use_dropout:
                        x = F.dropout(x, 0.5)
                    return x
            """,
            lines=(10,),
            messages=(message("F.dropout", "Net", "dropout"),),
            fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def __init__(self, use_dropout=True):
                    super().__init__()
                    self.use_dropout = use_dropout
                def forward(self, x):
                    if self.use_dropout:
                        x = F.dropout(x, 0.5, training=self.training)
                    return x
            """,
        ),
        # A LightningModule, through a same-file base class.
        Invalid(
            """
            import lightning as L
            import torch.nn.functional as F
            class Base(L.LightningModule):
                pass
            class Model(Base):
                def forward(self, x):
                    return F.feature_alpha_dropout(x, 0.1)
            """,
            lines=(8,),
            messages=(message("F.feature_alpha_dropout", "Model", "feature_alpha_dropout"),),
            fixed="""
            import lightning as L
            import torch.nn.functional as F
            class Base(L.LightningModule):
                pass
            class Model(Base):
                def forward(self, x):
                    return F.feature_alpha_dropout(x, 0.1, training=self.training)
            """,
        ),
        # One call fixed, one not.
        Invalid(
            """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def forward(self, x):
                    x = F.dropout(x, 0.1, training=self.training)
                    return F.dropout3d(x, 0.1)
            """,
            lines=(7,),
            messages=(message("F.dropout3d", "Net", "dropout3d"),),
            fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def forward(self, x):
                    x = F.dropout(x, 0.1, training=self.training)
                    return F.dropout3d(x, 0.1, training=self.training)
            """,
        ),
        # training=False written in one branch does not cover the other.
        Invalid(
            """
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def forward(self, x, deterministic=False):
                    if deterministic:
                        return F.dropout(x, 0.1, training=False)
                    return F.dropout(x, 0.1)
            """,
            lines=(8,),
            messages=(message("F.dropout", "Net", "dropout"),),
            fixed="""
            import torch.nn as nn
            import torch.nn.functional as F
            class Net(nn.Module):
                def forward(self, x, deterministic=False):
                    if deterministic:
                        return F.dropout(x, 0.1, training=False)
                    return F.dropout(x, 0.1, training=self.training)
            """,
        ),
    ]

    def finish(self) -> None:
        sem = self.ctx.semantic
        model = sem.model
        owners = forward_owners(sem)
        if not owners:
            return
        found = []
        for site in model.calls:
            call = site.node
            function = functional_dropout(model.qualified_name(call.func))
            if function is None or _passes_training(call):
                continue
            info = owners.get(enclosing_function(model, site.scope))
            if info is None or _mode_guarded(self.ctx, model, call) or _rate_off_outside_training(self.ctx, model, call) \
                    or documented(self.ctx, call, _ALWAYS_ON) \
                    or documented(self.ctx, call, _ALWAYS_ON_DOCSTRING, docstrings=True):
                continue
            found.append(pending(self.ctx, info, call, message(dotted_name(call.func) or function, info.name, function),
                                 self._fix(model, site, info)))
        if found:
            self.ctx.facts[self.code] = {"pending": found}

    def _fix(self, model, site, info) -> Fix | None:
        """``training=<self>.training`` appended to the call's arguments, where the call runs
        in a method of the module itself (so ``self`` is the module) and passes no ``*args``."""
        call = site.node
        function = enclosing_function(model, site.scope)
        name = model.self_name(function) if isinstance(function, cst.FunctionDef) else None
        if name is None or model.class_of(call) is not info or not call.args or any(a.star for a in call.args):
            return None
        last = call.args[-1].value
        return Fix.safe(f"Pass training={name}.training", insert_after(self.ctx, last, f", training={name}.training"))

    @classmethod
    def check_project(cls, project, options) -> Iterable[Finding]:
        return settle(cls, project)


def _positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def _passes_training(call: cst.Call) -> bool:
    """``training=`` given (by keyword, third positionally, or maybe in ``**kwargs``)."""
    return keyword_arg(call, "training") is not None or len(_positional(call)) >= 3 or has_star_kwargs(call)


def _reads_mode(expr: cst.CSTNode) -> bool:
    """The expression reads ``<x>.training`` (the module's mode) or a name ``training`` (the
    flag a functional helper takes, as ``F.dropout`` itself does)."""
    return any(isinstance(n, cst.Attribute) and n.attr.value == "training" or isinstance(n, cst.Name)
               and n.value == "training" for n in iter_nodes(expr))


def _rate_off_outside_training(ctx, model, call: cst.Call) -> bool:
    """The rate is a variable that is zero whenever the module is not training:
    ``p = self.p if self.training else 0.0``, or ``if not training: dropout_p = 0.0`` before
    the call (``nn.MultiheadAttention``'s functional form)."""
    positional = _positional(call)
    rate = keyword_arg(call, "p") or (positional[1] if len(positional) >= 2 else None)
    if rate is None or not isinstance(rate.value, cst.Name):
        return False
    for binding in model.reaching(rate.value.value, call):
        value = binding.value if binding.kind in ("assign", "ann") else None
        if isinstance(value, cst.IfExp) and _reads_mode(value.test) and (_zero(value.body) or _zero(value.orelse)):
            return True
        if _zero(value) and any(isinstance(anc, cst.If) and _reads_mode(anc.test) for anc in ctx.ancestors(binding.node)):
            return True
    return False


def _zero(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float)) and float(expr.evaluated_value) == 0.0


def _mode_guarded(ctx, model, call: cst.Call) -> bool:
    """Under an ``if``/conditional expression testing the mode, or after an ``if`` on the mode
    that returns or raises (``if not self.training: return x``) in the same function."""
    function = ctx.enclosing_function(call)
    for anc in ctx.ancestors(call):
        if anc is function:
            break
        if isinstance(anc, (cst.If, cst.IfExp)) and _reads_mode(anc.test):
            return True
    if function is None:
        return False
    start = model.order.get(call, 0)
    for node in iter_nodes(function.body, into_scopes=False):
        if isinstance(node, cst.If) and model.order.get(node, start) < start and _reads_mode(node.test) \
                and any(isinstance(n, (cst.Return, cst.Raise)) for n in iter_nodes(node.body, into_scopes=False)):
            return True
    return False
