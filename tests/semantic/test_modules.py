

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

    def never_read(src):
        ctx = ctx_for(src)
        return attribute_never_read(ctx, ctx.semantic.model.class_named("A"), "linears")
    assert never_read(head + "a = A()\nprint(list(a.parameters()))\n")
    # Another class's own ``self.linears`` is not A's.
    other = "class B(nn.Module):\n    def forward(self, x):\n        return self.linears[0](x)\n"
    assert never_read(other + head)
    assert not never_read(head + "    def forward(self, x):\n        return self.linears[0](x)\n")
    assert not never_read(head + "class C(A):\n    def forward(self, x):\n        return self.linears[0](x)\n")
    assert not never_read("class Base(nn.Module):\n    def forward(self, x):\n        return self.linears[0](x)\n"
                          + head.replace("(nn.Module)", "(Base)"))
    assert not never_read(head + "a = A()\ny = a.linears[0](x)\n")
    assert not never_read(head + "a = A()\nm = getattr(a, name)\n")
    assert not never_read(head + "a = A()\na.linears += [nn.Linear(2, 2)]\n")
