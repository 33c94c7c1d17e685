"""``gradients.optimized_modules`` / ``module_clears`` and the call graph's calls on objects of
same-file classes (their methods, their ``__call__``)."""

import libcst as cst

from torchlint.semantic import gradients
from torchlint.context import Dispatcher, FileContext
from torchlint.imports import ImportTable


def _semantic(src: str):
    module = cst.parse_module(src)
    ctx = FileContext("m.py", module, src, ImportTable("m", False))
    Dispatcher(ctx, []).run()
    return ctx.semantic


def _call(src: str) -> cst.Call:
    return cst.parse_expression(src)


def test_optimized_modules():
    assert gradients.optimized_modules(_call("Adam(netD.parameters(), lr=1)")) == {"netD"}
    assert gradients.optimized_modules(
        _call("Adam([{'params': m.enc.parameters()}, {'params': m.dec.parameters()}])")) == {"m.enc", "m.dec"}
    assert gradients.optimized_modules(_call("SGD(params=self.model.parameters())")) == {"self.model"}
    assert gradients.optimized_modules(_call("Adam(params, lr=1)")) is None
    assert gradients.optimized_modules(_call("Adam([w, b])")) is None


def test_module_clears():
    assert gradients.module_clears("netD", {"netD"})
    assert gradients.module_clears("model", {"model.encoder"})
    assert gradients.module_clears("self.netD", {"netD"})
    assert not gradients.module_clears("netG", {"netD"})
    assert not gradients.module_clears("model.encoder", {"model"})


SRC = """
class Scaler:
    def __call__(self, loss, opt):
        loss.backward()
    def update(self):
        pass
scaler = Scaler()
for x in data:
    scaler(x, opt)
    scaler.update()
    other.update()
"""


def test_calls_on_an_instance_of_a_same_file_class_reach_its_methods():
    sem = _semantic(SRC)
    graph = sem.graph
    targets = {}
    for site in sem.model.calls:
        text = sem.model.ctx.module.code_for_node(site.node.func)
        targets[text] = [t.name.value for t in graph.targets(site)]
    assert targets["scaler"] == ["__call__"]
    assert targets["scaler.update"] == ["update"]
    assert targets["other.update"] == []


def test_unfreeze_sites():
    from torchlint.semantic.training import unfreeze_sites
    sem = _semantic("for p in model.parameters():\n    p.requires_grad_(False)\n"
                    "for p in model.layer4.parameters():\n    p.requires_grad_(True)\n"
                    "for p in model.fc.parameters():\n    p.requires_grad = True\nx.requires_grad_()\n")
    assert sorted(k for k, _ in unfreeze_sites(sem.model)) == ["model.fc", "model.layer4", "x"]
