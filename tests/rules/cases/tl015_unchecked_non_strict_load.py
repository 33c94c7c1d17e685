"""TL015's cases: code it must not report (``VALID``) and code it must report, with the
exact line and message of every finding and, where its findings carry a fix, the file after
``--fix --unsafe-fixes`` (``INVALID``). Run by ``tests/test_rule_cases.py``."""

from torchlint.checks.tl015_unchecked_non_strict_load import message
from torchlint.rule import Invalid


VALID = [
    # The receiver's own state_dict() written to a temporary file by one method and read back
    # by another into the same receiver: nothing else can be in that file (Lightning's spawn
    # launcher handing the worker's weights back to the main process).
    """
        import os
        import tempfile
        class Launcher:
            def collect(self, trainer):
                state_dict = trainer.lightning_module.state_dict()
                weights_path = None
                if trainer.fitting:
                    weights_path = os.path.join(tempfile.mkdtemp(), ".temp.ckpt")
                    self._strategy.checkpoint_io.save_checkpoint(state_dict, weights_path)
                return Output(weights_path)
            def recover(self, output, trainer):
                if output.weights_path is not None:
                    ckpt = self._strategy.checkpoint_io.load_checkpoint(output.weights_path)
                    trainer.lightning_module.load_state_dict(ckpt, strict=False)
    """,
    # Strict loading (the default) raises on any mismatch.
    """
        import torch
        model = torch.nn.Linear(4, 2)
        model.load_state_dict(torch.load("model.pt", weights_only=True))
        model.load_state_dict(torch.load("model.pt", weights_only=True), strict=True)
        """,
    # The keys are kept and checked: the fix.
    """
        import torch
        model = torch.nn.Linear(4, 2)
        missing, unexpected = model.load_state_dict(torch.load("model.pt", weights_only=True), strict=False)
        assert not unexpected, unexpected
        """,
    # Intentional partial loading, the expected missing keys asserted.
    """
        def load_backbone(model, state):
            missing, _ = model.load_state_dict(state, strict=False)
            assert set(missing) == {"head.weight", "head.bias"}, missing
        """,
    # The result logged.
    """
        import logging
        logger = logging.getLogger(__name__)
        def restore(model, state):
            result = model.load_state_dict(state, strict=False)
            logger.info("loaded checkpoint: %s", result)
        """,
    # Checked inline.
    """
        def restore(model, state):
            assert not model.load_state_dict(state, strict=False).missing_keys
        """,
    # Printed.
    """
        def restore(model, state):
            print(model.load_state_dict(state, strict=False))
        """,
    # Returned: the caller decides.
    """
        def restore(model, state):
            return model.load_state_dict(state, strict=False)
        """,
    # The caller's flag picks between a strict and a non-strict load of the same dict
    # (neural-style's -disable_check); a converted checkpoint the same function saved from
    # the model's own state_dict (pi-zero); weights left out copied by hand by key name, so a
    # checkpoint with other names raises KeyError (so3krates' multi-head conversion).
    """
        import torch
        def load_caffe(cnn, model_file, disable_check):
            if disable_check:
                cnn.load_state_dict(torch.load(model_file), strict=False)
            else:
                cnn.load_state_dict(torch.load(model_file))
            return cnn
        def from_pi0(model, weights_path, cached_path):
            if not cached_path.exists():
                convert(weights_path, model)
                torch.save(model.state_dict(), cached_path)
                return model
            new_state = torch.load(cached_path, weights_only=True, mmap=True)
            model.load_state_dict(new_state, strict=False)
            return model
        def single_head(model, mh_state, layers):
            model.load_state_dict(mh_state, strict=False)
            model.head.scales.weight.data = mh_state["head.energy_scales"].T
            for layer in range(layers):
                model.head.weights[layer].data = mh_state[f"head.layers_weights.{layer}"][0]
            return model
        """,
    # strict chosen by the caller, written as two calls (gemma4's from_pretrained); a module's
    # own state_dict, filtered, loaded back after rebuilding a part (brevitas' quantizers).
    """
        def from_pretrained(cls, config, state_dict, strict=True):
            model = cls(config)
            if strict:
                model.load_state_dict(state_dict, strict=True, assign=True)
            else:
                model.materialize()
                model.load_state_dict(state_dict, strict=False, assign=True)
            return model
        def reset_quantizer(proxy):
            state = {k: v for k, v in proxy.state_dict().items() if not k.endswith("float_to_int_impl.value")}
            proxy.init_tensor_quant()
            proxy.load_state_dict(state, strict=False)
        """,
    # strict chosen by the caller: not this call's decision.
    """
        def restore(model, state, strict=True):
            model.load_state_dict(state, strict=strict)
        """,
    # Stored on an object other code may read.
    """
        class Loader:
            def restore(self, model, state):
                self.report = model.load_state_dict(state, strict=False)
        """,
    # An optimizer's load_state_dict has no strict argument.
    """
        def restore(optimizer, state):
            optimizer.load_state_dict(state["optimizer"])
        """,
    # Read in the next statement of a loop.
    """
        def restore_all(models, states):
            for model, state in zip(models, states):
                keys = model.load_state_dict(state, strict=False)
                if keys.unexpected_keys:
                    raise KeyError(keys.unexpected_keys)
        """,
    # The module's own state_dict(), filled in place and loaded back: keys match by construction.
    """
        import torch
        import torch.nn as nn
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
        incoming = {k: torch.randn_like(v) for k, v in model.state_dict().items()}
        model_sd = model.state_dict()
        for key, value in incoming.items():
            model_sd[key].copy_(value)
        model.load_state_dict(model_sd, strict=False)
        """,
    # Intersected with the model's keys, and the transferred count logged (yolov5/ultralytics).
    """
        import logging
        import torch
        import torch.nn as nn
        LOGGER = logging.getLogger(__name__)
        def intersect_dicts(da, db):
            return {k: v for k, v in da.items() if k in db and v.shape == db[k].shape}
        model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 3))
        csd = torch.load("pretrained.pt", weights_only=True)
        csd = intersect_dicts(csd, model.state_dict())
        model.load_state_dict(csd, strict=False)
        LOGGER.info(f"Transferred {len(csd)}/{len(model.state_dict())} items")
        """,
    # A comprehension over the model's keys, the count compared.
    """
        def load_matching(model, pretrained):
            kept = {k: v for k, v in pretrained.items() if k in model.state_dict()}
            model.load_state_dict(kept, strict=False)
            assert len(kept) > 0
        """,
    # A subset of the model's own state_dict saved by a same-file function and restored (ultralytics QAT).
    """
        def qat_state(model):
            return {"ranges": {k: v for k, v in model.state_dict().items() if "quantizer" in k}}
        def restore_qat(model, state):
            model.load_state_dict(state["ranges"], strict=False)
        """,
    # An EMA copy and its source swap weights (fairseq EMA, Lightning WeightAveraging).
    """
        import copy
        import torch.nn as nn
        from torch.optim.swa_utils import AveragedModel
        class EMA:
            def __init__(self, model: nn.Module, device=None):
                self.model = copy.deepcopy(model)
                if device is not None:
                    self.model = self.model.to(device=device)
                self.average = None
            def setup(self, model):
                self.average = AveragedModel(model)
            def restore(self, state_dict):
                self.model.load_state_dict(state_dict, strict=False)
                self.average.module.load_state_dict(copy.deepcopy(state_dict), strict=False)
            def reverse(self, model: nn.Module):
                d = self.model.state_dict()
                if "_ema" in d:
                    del d["_ema"]
                model.load_state_dict(d, strict=False)
                return model
        """,
    # A snapshot of the module's own state_dict() taken to reset the weights later (espnet).
    """
        import copy
        import torch.nn as nn
        class Encoder(nn.Module):
            def __init__(self, backbone):
                super().__init__()
                self.backbone = backbone
                self.initial = copy.deepcopy(backbone.state_dict())
            def reset_weights(self):
                self.backbone.load_state_dict(self.initial, strict=False)
        """,
    # The state of an object from the same factory, given to each new one (torchrl EnvCreator).
    """
        class Factory:
            def __init__(self, make):
                self.make = make
                self.template_state = None
            def prepare(self):
                template = self.make()
                self.template_state = template.state_dict()
            def __call__(self):
                env = self.make()
                env.load_state_dict(self.template_state, strict=False)
                return env
        """,
    # The missing and unexpected keys computed by hand against the model's keys and logged (lavis).
    """
        import logging
        def load_overlap(model, weights):
            own = model.state_dict().keys()
            extra = [k for k in weights if k not in own]
            absent = [k for k in own if k not in weights]
            logging.info("skipped %s, not found %s", extra, absent)
            model.load_state_dict({k: weights[k] for k in own if k in weights}, strict=False)
        """,
    # ... or raised under strict and returned (peft).
    """
        def load_base(net, weights, strict=True):
            current = net.inner.state_dict()
            missing = [k for k in current if k not in weights]
            if strict and missing:
                raise KeyError(missing)
            net.inner.load_state_dict({k: v for k, v in weights.items() if k in current}, strict=False)
            return missing
        """,
    # A tensordict returns itself from load_state_dict: no keys to look at (torchrl storages).
    """
        from tensordict import LazyStackedTensorDict, TensorDict, is_tensor_collection
        class Storage:
            def load_state_dict(self, state):
                if is_tensor_collection(self.data):
                    self.data.load_state_dict(state["data"], strict=False)
            def restore(self, buffer, state):
                if isinstance(buffer, (TensorDict, LazyStackedTensorDict)):
                    buffer.load_state_dict(state, strict=False)
        """,
    # A dict literal whose keys name the module's own attributes (peft multitask prompt).
    """
        import torch
        import torch.nn as nn
        class Prompt(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.table = nn.Embedding(n, 8)
                self.scale = nn.Parameter(torch.ones(8))
            def init_from(self, source):
                shared = {"table.weight": source["prompt_table"]}
                self.load_state_dict(shared, strict=False)
        """,
    # The class saves only its trainable part and loads it back (speechbrain adapters).
    """
        import torch
        import torch.nn as nn
        class Adapted(nn.Module):
            def save_trainable(self, path):
                torch.save({n: p for n, p in self.state_dict(keep_vars=True).items() if p.requires_grad}, path)
            def load_trainable(self, path):
                self.load_state_dict(torch.load(path, weights_only=True), strict=False)
        """,
    # A strict load first; the non-strict one only as the announced fallback (lavis runner).
    """
        import warnings
        def reload_best(model, ckpt):
            try:
                model.load_state_dict(ckpt["model"])
            except RuntimeError:
                warnings.warn("keys differ from the model's; loading what matches")
                model.load_state_dict(ckpt["model"], strict=False)
        """,
    # Guarded by a test of the checkpoint's key names (espnet compatibility path).
    """
        def load_legacy(model, state):
            if any("postnet" in k for k in state.keys()):
                model.load_state_dict(state, strict=False)
            elif "head.bias" in state:
                model.load_state_dict(state, strict=False)
        """,
    # The dict is keyed by the receiver's own parameter names, whatever the values: a Reptile
    # interpolation of the model's own weights loaded back, buffers left as they are
    # (avalanche's MER strategy), filled in a loop or built by a comprehension.
    """
        from copy import deepcopy
        class MER:
            def inner_update(self):
                w_bef = deepcopy(self.model.state_dict())
                self.step()
                w_aft = self.model.state_dict()
                load_dict = {}
                for name, param in self.model.named_parameters():
                    load_dict[name] = w_bef[name] + (w_aft[name] - w_bef[name]) * self.beta
                self.model.load_state_dict(load_dict, strict=False)
            def outer_update(self, w_aft):
                self.model.load_state_dict(
                    {n: self.w_bef[n] + (w_aft[n] - self.w_bef[n]) * self.gamma for n, _ in self.model.named_parameters()},
                    strict=False)
        """,
]


INVALID = [
    # Intersected with the model's keys but the transferred count never read (yolov5's
    # hubconf): a checkpoint whose names all differ (a `module.` prefix) intersects to an empty
    # dict, and the non-strict load then loads nothing without a word.
    Invalid(
        """
            import torch
            def intersect_dicts(da, db, exclude=()):
                return {k: v for k, v in da.items() if k in db and all(x not in k for x in exclude) and v.shape == db[k].shape}
            def create(model, path, device):
                ckpt = torch.load(path, map_location=device, weights_only=False)
                csd = ckpt["model"].float().state_dict()
                csd = intersect_dicts(csd, model.state_dict(), exclude=["anchors"])
                model.load_state_dict(csd, strict=False)
                return model
            """,
        lines=(9,),
        messages=(message("model"),),
    ),
    # Filled in a loop over another module's names, or over a checkpoint's: the keys are not
    # the receiver's own.
    Invalid(
        """
            def transfer(student, teacher, ckpt):
                load_dict = {}
                for name, param in teacher.named_parameters():
                    load_dict[name] = param
                student.load_state_dict(load_dict, strict=False)
                weights = {}
                for name, w in ckpt.items():
                    weights[name] = w
                student.load_state_dict(weights, strict=False)
            """,
        lines=(6, 10),
        messages=(message("student"), message("student")),
    ),
    # The same saver and loader, but the file loaded is one the user names: any checkpoint.
    Invalid(
        """
            import torch
            class Trainer:
                def save(self, model, path):
                    torch.save(model.state_dict(), path)
                def resume(self, model, ckpt_path):
                    ckpt = torch.load(ckpt_path)
                    model.load_state_dict(ckpt, strict=False)
            """,
        lines=(8,),
        messages=(message("model"),),
    ),
    # The strict branch loads another dict under the same name (litgpt's trainer_setup).
    Invalid(
        """
            import torch
            def setup(model, trainer_ckpt, checkpoint_dir):
                if trainer_ckpt is not None:
                    state_dict = torch.load(trainer_ckpt, weights_only=True)["state_dict"]
                    model.load_state_dict(state_dict, strict=True)
                else:
                    state_dict = torch.load(checkpoint_dir / "lit_model.pth", weights_only=True)
                    model.load_state_dict(state_dict, strict=False)
            """,
        lines=(9,),
        messages=(message("model"),),
    ),
    # Branches on the run's own settings that load different dicts, none strictly: nothing
    # the caller chose, nothing checked (demucs' continue_from).
    Invalid(
        """
            import torch
            class Solver:
                def restore(self):
                    if self.args.continue_pretrained:
                        self.model.load_state_dict(self.pretrained.state_dict())
                    elif self.args.continue_from:
                        package = torch.load(self.args.continue_from, weights_only=True)
                        if self.args.continue_best:
                            self.model.load_state_dict(package["best_state"], strict=False)
                        else:
                            self.model.load_state_dict(package["state"], strict=False)
            """,
        lines=(10, 12),
        messages=(message("self.model"), message("self.model")),
    ),
    # A branch on something other than the caller's strict, and a comprehension over a
    # checkpoint rather than the module's own state_dict: the keys are unchecked.
    Invalid(
        """
            import torch
            def restore(model, path, partial=True):
                ckpt = torch.load(path, weights_only=True)
                if partial:
                    model.load_state_dict(ckpt, strict=False)
                state = {k: v for k, v in ckpt.items() if not k.startswith("head.")}
                model.load_state_dict(state, strict=False)
            """,
        lines=(6, 8),
        messages=(message("model"), message("model")),
    ),
    # The pytorch/examples 1029 pattern: a DataParallel checkpoint ("module." keys) loads nothing.
    Invalid(
        """
            import torch
            model = torch.nn.Linear(4, 2)
            state = torch.load("checkpoint.pth", weights_only=True)
            model.load_state_dict(state["state_dict"], strict=False)
            """,
        lines=(5,),
        messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # Fine-tuning: the new head is meant to be missing, but so could everything else be.
    Invalid(
        """
            def build(backbone, path):
                import torch
                backbone.load_state_dict(torch.load(path, weights_only=True), strict=False)
                return backbone
            """,
        lines=(4,),
        messages=('`backbone.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
                  'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; '
                  'keep the result and assert that only the keys you mean to skip are missing',),
    ),
    # strict passed positionally.
    Invalid(
        """
            def restore(model, state):
                model.load_state_dict(state, False)
            """,
        lines=(3,),
        messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # Explicitly discarded.
    Invalid(
        """
            def restore(model, state):
                _ = model.load_state_dict(state, strict=False)
            """,
        lines=(3,),
        messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # Kept in a name that is never read.
    Invalid(
        """
            def restore(model, state):
                result = model.load_state_dict(state, strict=False)
                return model
            """,
        lines=(3,),
        messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # The name is read only after it was bound to something else.
    Invalid(
        """
            def restore(model, state):
                msg = model.load_state_dict(state, strict=False)
                msg = "restored"
                print(msg)
            """,
        lines=(3,),
        messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # A submodule through self.
    Invalid(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def load_pretrained(self, state):
                    self.encoder.load_state_dict(state, strict=False)
            """,
        lines=(5,),
        messages=('`self.encoder.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
                  'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; '
                  'keep the result and assert that only the keys you mean to skip are missing',),
    ),
    # An override that swallows the keys.
    Invalid(
        """
            import torch.nn as nn
            class Net(nn.Module):
                def load_state_dict(self, state_dict, strict=True):
                    super().load_state_dict(state_dict, strict=False)
            """,
        lines=(5,),
        messages=('`super().load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
                  'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; '
                  'keep the result and assert that only the keys you mean to skip are missing',),
    ),
    # Keys filtered to the model's own: a prefix mismatch still leaves nothing to load.
    Invalid(
        """
            def load_matching(model, pretrained):
                own = model.state_dict()
                pretrained = {k: v for k, v in pretrained.items() if k in own}
                model.load_state_dict(pretrained, strict=False)
            """,
        lines=(5,),
        messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # strict=0, in a loop over several models.
    Invalid(
        """
            def restore_all(models, states):
                for model, state in zip(models, states):
                    model.load_state_dict(state, strict=0)
            """,
        lines=(4,),
        messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # One checked load does not vouch for another.
    Invalid(
        """
            def restore(student, teacher, state):
                missing, unexpected = teacher.load_state_dict(state, strict=False)
                assert not missing and not unexpected
                student.load_state_dict(state, strict=False)
            """,
        lines=(5,),
        messages=('`student.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
                  'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; '
                  'keep the result and assert that only the keys you mean to skip are missing',),
    ),
    # A comment that does not explain the non-strict load documents nothing; a dict that is
    # only sometimes the module's own may be a checkpoint.
    Invalid(
        """
            import torch
            def restore(model, path=None):
                state = model.state_dict()
                if path:
                    state = torch.load(path, weights_only=True)
                # load the weights
                model.load_state_dict(state, strict=False)  # load
            """,
        lines=(8,),
        messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # A copy that is not only ever a deepcopy of a module is no EMA copy.
    Invalid(
        """
            import copy
            class Holder:
                def __init__(self, model, other):
                    self.model = copy.deepcopy(model)
                def swap(self, other):
                    self.model = other
                def restore(self, state_dict):
                    self.model.load_state_dict(state_dict, strict=False)
            """,
        lines=(9,),
        messages=('`self.model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
                  'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; '
                  'keep the result and assert that only the keys you mean to skip are missing',),
    ),
    # A snapshot attribute that is also set from a file holds a checkpoint's keys (espnet hubert).
    Invalid(
        """
            import copy
            import torch
            import torch.nn as nn
            class Encoder(nn.Module):
                def __init__(self, backbone, path=None):
                    super().__init__()
                    self.backbone = backbone
                    if path:
                        self.initial = copy.deepcopy(torch.load(path, weights_only=True))
                    else:
                        self.initial = copy.deepcopy(backbone.state_dict())
                def reset_weights(self):
                    self.backbone.load_state_dict(self.initial, strict=False)
            """,
        lines=(14,),
        messages=('`self.backbone.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # A key difference nobody reads, or computed without the model's own keys, checks nothing.
    Invalid(
        """
            def load_overlap(model, weights, reference):
                own = model.state_dict().keys()
                extra = [k for k in weights if k not in own]
                model.load_state_dict(weights, strict=False)
            def load_other(model, weights, reference):
                absent = [k for k in reference if k not in weights]
                print(absent)
                model.load_state_dict(weights, strict=False)
            """,
        lines=(5, 9),
        messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',
                  '`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # A guard that narrows to a module, not a tensordict, leaves the keys to check.
    Invalid(
        """
            import torch.nn as nn
            def restore(target, state):
                if isinstance(target, nn.Module):
                    target.load_state_dict(state, strict=False)
            """,
        lines=(5,),
        messages=('`target.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # Literal keys that are not the module's own attributes (a wrapper's prefix) may load nothing.
    Invalid(
        """
            import torch.nn as nn
            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
                def init_from(self, source):
                    self.load_state_dict({"module.fc.weight": source["w"]}, strict=False)
            """,
        lines=(8,),
        messages=('`self.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # The class saves its whole state_dict, but loads another file non-strictly.
    Invalid(
        """
            import torch
            import torch.nn as nn
            class Net(nn.Module):
                def save(self, path):
                    torch.save(self.state_dict(), path)
                def load_pretrained(self, path):
                    self.load_state_dict(torch.load(path, weights_only=True), strict=False)
            """,
        lines=(8,),
        messages=('`self.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # A fallback that says nothing, or after a try that was not strict, is still silent.
    Invalid(
        """
            def reload(model, ckpt):
                try:
                    model.load_state_dict(ckpt)
                except RuntimeError:
                    model.load_state_dict(ckpt, strict=False)
            def reload_again(model, ckpt):
                try:
                    model.load_state_dict(ckpt, strict=False)
                except RuntimeError:
                    print("retrying")
                    model.load_state_dict(ckpt, strict=False)
            """,
        lines=(6, 9, 12),
        messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',
                  '`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',
                  '`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # A test of the container's keys (not the loaded dict's key names) guards nothing.
    Invalid(
        """
            def restore(model, ckpt):
                if "model" in ckpt:
                    model.load_state_dict(ckpt["model"], strict=False)
            """,
        lines=(4,),
        messages=('`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it returns, '
                  'so a checkpoint whose keys do not match (a `module.` prefix) loads nothing without a word; keep the '
                  'result and assert that only the keys you mean to skip are missing',),
    ),
    # No comment switches a finding off (issue 39): a TODO/FIXME/BUG naming the non-strict load as a
    # problem, a comment explaining the partial load (fairseq hubert_asr, torchtitan's checkpointer),
    # "intentionally"/"deliberately", or a docstring saying so: none of them checks a key.
    Invalid(
        """
            import torch
            def finetune(model, path):
                \"\"\"Loads the backbone; strict=False on purpose (the new head is trained from scratch).\"\"\"
                state = torch.load(path, weights_only=True)
                # TODO: strict=False hides missing keys, fix before release
                model.load_state_dict(state, strict=False)
                # BUG: strict=False and the keys are ignored
                model.load_state_dict(state["ema"], strict=False)
                # set strict=False because we omit some modules (the new head is trained from scratch)
                model.load_state_dict(state["model"], strict=False)
                model.encoder.load_state_dict(state, strict=False)  # intentionally non-strict
            def restore(model, parts, state):
                model.load_state_dict(
                    state, strict=False  # ignore mismatch in language embeddings
                )
                # strict=False deliberately: the flattened dict mixes model keys with optimizer keys.
                for part in parts:
                    part.load_state_dict(state, strict=False)
            """,
        lines=(9, 11, 12, 14, 19),
        messages=(
            '`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
            'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing '
            'without a word; keep the result and assert that only the keys you mean to skip are '
            'missing',
            '`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
            'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing '
            'without a word; keep the result and assert that only the keys you mean to skip are '
            'missing',
            '`model.encoder.load_state_dict(..., strict=False)` throws away the missing and unexpected '
            'keys it returns, so a checkpoint whose keys do not match (a `module.` prefix) loads '
            'nothing without a word; keep the result and assert that only the keys you mean to skip '
            'are missing',
            '`model.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
            'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing '
            'without a word; keep the result and assert that only the keys you mean to skip are '
            'missing',
            '`part.load_state_dict(..., strict=False)` throws away the missing and unexpected keys it '
            'returns, so a checkpoint whose keys do not match (a `module.` prefix) loads nothing '
            'without a word; keep the result and assert that only the keys you mean to skip are '
            'missing',
        ),
    ),
]
