"""Grad-mode choices: what decides whether autograd records around a node, and which
functions this file only ever runs with such a choice made (TL002, TL003).

A *choice* is any grad-mode ``with`` item or decorator whose name says so (torch's
``no_grad``, ``inference_mode``, ``set_grad_enabled(flag)``, ``enable_grad``, and project
wrappers named so: ``utils.no_grad_if(cond)``, ``@inference_mode_eval``), a Lightning
evaluation hook, or a plain ``torch.set_grad_enabled(...)`` statement earlier in the function.
"""

from __future__ import annotations

import libcst as cst

from torchlint.context import dotted_name, iter_nodes
from torchlint.semantic.training import grad_mode_exprs, in_lightning_eval_hook
from torchlint.torch_api import is_false_literal, is_grad_mode_call

_GRADISH_NAMES = ("no_grad", "inference_mode", "grad_enabled", "enable_grad")


class GradModes:
    """One file's grad-mode queries (build one per rule run; memoised)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.model = ctx.semantic.model
        self._memo: dict[cst.CSTNode, bool] = {}

    def chosen(self, node: cst.CSTNode) -> bool:
        """Under a grad-mode ``with`` or decorator (any enclosing scope), or in a Lightning
        evaluation hook."""
        return any(self._mentions_grad_mode(e) for e in grad_mode_exprs(self.model, node)) \
            or in_lightning_eval_hook(self.ctx, node)

    def _mentions_grad_mode(self, expr: cst.CSTNode) -> bool:
        for node in iter_nodes(expr):
            if isinstance(node, (cst.Name, cst.Attribute)):
                name = self.ctx.qualified_name(node)
                if name is not None and any(part in name.rsplit(".", 1)[-1].lower() for part in _GRADISH_NAMES):
                    return True
        return False

    def set_grad_before(self, function: cst.CSTNode, order: int) -> bool:
        """A plain ``torch.set_grad_enabled(...)`` statement in ``function`` before ``order``."""
        for site in self.ctx.semantic.graph.sites(function):
            call = site.node
            if site.order < order and is_grad_mode_call(self.ctx, call) == "set_grad_enabled" \
                    and not isinstance(self.ctx.parent(call), cst.WithItem):
                return True
        return False

    def module_grad_off(self) -> bool:
        """A plain ``torch.set_grad_enabled(False)`` at module level (a script): every
        function then runs without autograd."""
        for site in self.ctx.semantic.graph.sites(self.model.module.node):
            call = site.node
            if (dotted_name(call.func) or "").endswith("set_grad_enabled") and call.args \
                    and is_false_literal(call.args[0].value) and is_grad_mode_call(self.ctx, call) == "set_grad_enabled":
                return True
        return False

    def only_called_with_choice(self, function: cst.CSTNode) -> bool:
        """Every same-file call site of ``function`` runs under a grad-mode choice (itself, or
        every call site of its caller does), and it is never passed on as a callback. False
        for a function with no call site here (its callers elsewhere are unknown)."""
        return self._only_chosen(function, set())

    def _only_chosen(self, function: cst.CSTNode, seen: set) -> bool:
        memo = self._memo
        if function in memo:
            return memo[function]
        if function in seen:
            return False
        graph = self.ctx.semantic.loose_graph
        sites = graph.callers(function)
        if not sites or any(function in graph.references(s) for s in self.model.calls):
            memo[function] = False
            return False
        seen.add(function)
        result = all(self._site_chosen(site, seen) for site in sites)
        seen.discard(function)
        memo[function] = result
        return result

    def call_chosen(self, call: cst.Call) -> bool:
        """The call runs under a grad-mode choice: its own, a plain ``set_grad_enabled``
        before it in its function, or one made at every same-file call of its function."""
        site = self.model.call_site(call)
        return site is not None and self._site_chosen(site, set())

    def _site_chosen(self, site, seen: set) -> bool:
        if self.chosen(site.node):
            return True
        outer = site.scope.function()
        return outer is not None and (self.set_grad_before(outer.node, site.order) or self._only_chosen(outer.node, seen))
