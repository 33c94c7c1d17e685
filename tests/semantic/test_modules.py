

def test_attribute_never_read():
    import libcst as cst
    from torchlint.context import Dispatcher, FileContext
    from torchlint.imports import ImportTable
    from torchlint.semantic.modules import attribute_never_read

    def ctx_for(src):
        ctx = FileContext("m.py", cst.parse_module(src), src, ImportTable("m", False))
        Dispatcher(ctx, []).run()
        return ctx
    head = "class A(nn.Module):\n    def __init__(self):\n        self.linears = [nn.Linear(2, 2)]\n"
    assert attribute_never_read(ctx_for(head + "a = A()\nprint(list(a.parameters()))\n"), "linears")
    assert not attribute_never_read(ctx_for(head + "    def forward(self, x):\n        return self.linears[0](x)\n"),
                                    "linears")
    assert not attribute_never_read(ctx_for(head + "a = A()\ny = a.linears[0](x)\n"), "linears")
    assert not attribute_never_read(ctx_for(head + "a = A()\nm = getattr(a, name)\n"), "linears")
    assert not attribute_never_read(ctx_for(head + "a = A()\na.linears += [nn.Linear(2, 2)]\n"), "linears")
