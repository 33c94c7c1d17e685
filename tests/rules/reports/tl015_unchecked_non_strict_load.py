"""TL015 unchecked-non-strict-load: ``load_state_dict(..., strict=False)`` whose missing and
unexpected keys nobody looks at, from public reports (a checkpoint with a prefix or other names
loads nothing without a word), and their fixes: the result kept and checked, or the keys made
to match and the load strict."""

BUGS = [
    # A Lightning checkpoint whose keys carry `model.`: strict=False loads nothing, output is nonsense.
    """
    import torch
    from model import Net

    net = Net()
    checkpoint = torch.load("epoch=9.ckpt", map_location="cpu", weights_only=True)
    net.load_state_dict(checkpoint["state_dict"], strict=False)
    net.eval()
    # https://github.com/pytorch/examples/issues/1029
    """,
    # torchgeo's OlmoEarth builder: checkpoint keyed `encoder.*`, model keyed `model.encoder.*`.
    """
    import torch
    from olmoearth_pretrain_minimal import OlmoEarthPretrain_v1

    def olmoearth_v1(weights=None, **kwargs):
        model = OlmoEarthPretrain_v1(**kwargs)
        if weights is not None:
            state_dict = weights.get_state_dict(progress=True, weights_only=True)
            model.load_state_dict(state_dict, strict=False)
        return model
    # https://github.com/torchgeo/torchgeo/issues/4036
    """,
    # Fine-tuning from self-supervised weights: every key missing, accuracy as from scratch.
    """
    import torch
    from models.r3d import R3DNet

    model = R3DNet(num_classes=101)
    pretrained_weights = torch.load(args.ckpt, weights_only=True)
    model.load_state_dict(pretrained_weights, strict=False)
    model = model.cuda()
    # https://github.com/BestJuly/IIC/issues/11
    """,
    # ImageNet weights into HRNet with a different head: strict=False and nothing checked.
    """
    import torch
    from models.hrnet import HRNet

    class Train:
        def __init__(self, pretrained_weight_path, c=48, nof_joints=17):
            self.model = HRNet(c=c, nof_joints=nof_joints)
            if pretrained_weight_path is not None:
                self.model.load_state_dict(torch.load(pretrained_weight_path, weights_only=True), strict=False)
    # https://github.com/stefanopini/simple-HRNet/issues/79
    """,
    # A backbone checkpoint with other names: the _IncompatibleKeys are only printed by chance.
    """
    import torch
    import torch.nn as nn

    class Backbone_VSSM(nn.Module):
        def load_pretrained(self, ckpt=None, key="model"):
            _ckpt = torch.load(open(ckpt, "rb"), map_location=torch.device("cpu"), weights_only=True)
            self.load_state_dict(_ckpt[key], strict=False)
    # https://github.com/ChenHongruixuan/ChangeMamba/issues/23
    """,
    # Partial fine-tuning weights loaded silently (the feature request asks for the report).
    """
    import torch
    import torchvision

    model = torchvision.models.resnet50(num_classes=10)
    state = torch.load("simclr_resnet50.pth", map_location="cpu", weights_only=True)
    model.load_state_dict(state, strict=False)
    # https://github.com/pytorch/pytorch/issues/141256
    """,
    # QuCumber's loader: strict=False suppresses both missing and unexpected keys.
    """
    import torch

    class RBM:
        def __init__(self, module):
            self.rbm_am = module

        def load(self, location):
            state_dict = torch.load(location, weights_only=True)
            self.rbm_am.load_state_dict(state_dict, strict=False)
    # https://github.com/PIQuIL/QuCumber/issues/18
    """,
    # Weights with leftover keys from an older model, loaded with strict=False in the demo.
    """
    import torch
    from models.ST_Former import GenerateModel

    model = GenerateModel()
    model = torch.nn.DataParallel(model).cuda()
    checkpoint = torch.load("model_set_1.pth", weights_only=True)
    model.load_state_dict(checkpoint["state_dict"], strict=False)
    # https://github.com/zengqunzhao/Former-DFER/issues/1
    """,
    # A model saved from DDP without unwrapping: every key has `module.`, none loads.
    """
    import torch
    from transformers import AutoModelForMaskedLM

    model = AutoModelForMaskedLM.from_pretrained("bert-base-uncased")
    state_dict = torch.load("ddp_checkpoint.bin", map_location="cpu", weights_only=True)
    model.load_state_dict(state_dict, strict=False)
    # https://github.com/huggingface/transformers/issues/32067
    """,
    # FLAVA weights downloaded by hand and loaded with strict=False: did anything load?
    """
    import torch
    from torchmultimodal.models.flava.model import flava_model_for_pretraining

    model = flava_model_for_pretraining()
    state = torch.load("flava_for_pretraining_unified_text_encoder.pt", weights_only=True)
    model.load_state_dict(state, strict=False)
    # https://github.com/pytorch/tutorials/issues/2611
    """,
    # A dm_nfnet checkpoint into the nfnet definition: strict=False, impact unknown.
    """
    import timm
    import torch

    model = timm.create_model("nfnet_f0")
    model.load_state_dict(torch.load("dm_nfnet_f0-604f9c3a.pth", weights_only=True), strict=False)
    # https://github.com/huggingface/pytorch-image-models/issues/515
    """,
]

LOOKALIKES = [
    # The fix: the prefix stripped, the load strict.
    """
    import torch
    from model import Net

    net = Net()
    checkpoint = torch.load("epoch=9.ckpt", map_location="cpu", weights_only=True)
    state = {k.removeprefix("model."): v for k, v in checkpoint["state_dict"].items()}
    net.load_state_dict(state)
    net.eval()
    # https://github.com/pytorch/examples/issues/1029
    """,
    # The fix: the result kept, and a load that matches nothing raises.
    """
    import torch
    from olmoearth_pretrain_minimal import OlmoEarthPretrain_v1

    def olmoearth_v1(weights=None, **kwargs):
        model = OlmoEarthPretrain_v1(**kwargs)
        if weights is not None:
            state_dict = weights.get_state_dict(progress=True, weights_only=True)
            missing, unexpected = model.model.load_state_dict(state_dict, strict=False)
            if unexpected:
                raise RuntimeError(f"unexpected keys: {unexpected}")
        return model
    # https://github.com/torchgeo/torchgeo/issues/4036
    """,
    # strict=True: the missing keys raise.
    """
    import torch
    from models.r3d import R3DNet

    model = R3DNet(num_classes=101)
    pretrained_weights = torch.load(args.ckpt, weights_only=True)
    model.load_state_dict(pretrained_weights, strict=True)
    model = model.cuda()
    # https://github.com/BestJuly/IIC/issues/11
    """,
    # The maintainer's advice: check the values returned.
    """
    import torch
    from models.hrnet import HRNet

    class Train:
        def __init__(self, pretrained_weight_path, c=48, nof_joints=17):
            self.model = HRNet(c=c, nof_joints=nof_joints)
            if pretrained_weight_path is not None:
                result = self.model.load_state_dict(torch.load(pretrained_weight_path, weights_only=True), strict=False)
                print("missing keys:", result.missing_keys, "unexpected keys:", result.unexpected_keys)
    # https://github.com/stefanopini/simple-HRNet/issues/79
    """,
    # The incompatible keys printed on purpose.
    """
    import torch
    import torch.nn as nn

    class Backbone_VSSM(nn.Module):
        def load_pretrained(self, ckpt=None, key="model"):
            _ckpt = torch.load(open(ckpt, "rb"), map_location=torch.device("cpu"), weights_only=True)
            incompatible = self.load_state_dict(_ckpt[key], strict=False)
            print(incompatible)
    # https://github.com/ChenHongruixuan/ChangeMamba/issues/23
    """,
    # Only the fc keys may be missing: asserted.
    """
    import torch
    import torchvision

    model = torchvision.models.resnet50(num_classes=10)
    state = torch.load("simclr_resnet50.pth", map_location="cpu", weights_only=True)
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert set(missing) == {"fc.weight", "fc.bias"} and not unexpected
    # https://github.com/pytorch/pytorch/issues/141256
    """,
    # QuCumber's fix: a strict load.
    """
    import torch

    class RBM:
        def __init__(self, module):
            self.rbm_am = module

        def load(self, location):
            state_dict = torch.load(location, weights_only=True)
            self.rbm_am.load_state_dict(state_dict)
    # https://github.com/PIQuIL/QuCumber/issues/18
    """,
    # The load status logged, as the reporter did to see that no key was missing.
    """
    import logging
    import torch
    from models.ST_Former import GenerateModel

    model = GenerateModel()
    model = torch.nn.DataParallel(model).cuda()
    checkpoint = torch.load("model_set_1.pth", weights_only=True)
    load_status = model.load_state_dict(checkpoint["state_dict"], strict=False)
    logging.info("load status: %s", load_status)
    # https://github.com/zengqunzhao/Former-DFER/issues/1
    """,
    # DDP's prefix consumed before a strict load.
    """
    import torch
    from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
    from transformers import AutoModelForMaskedLM

    model = AutoModelForMaskedLM.from_pretrained("bert-base-uncased")
    state_dict = torch.load("ddp_checkpoint.bin", map_location="cpu", weights_only=True)
    consume_prefix_in_state_dict_if_present(state_dict, "module.")
    model.load_state_dict(state_dict)
    # https://github.com/huggingface/transformers/issues/32067
    """,
    # The mismatched keys compared with the expected set, as the maintainer asks.
    """
    import torch
    from torchmultimodal.models.flava.model import flava_model_for_pretraining

    EXPECTED_MISSING = {"loss.mlm_head.bias"}

    model = flava_model_for_pretraining()
    state = torch.load("flava_for_pretraining_unified_text_encoder.pt", weights_only=True)
    result = model.load_state_dict(state, strict=False)
    if set(result.missing_keys) - EXPECTED_MISSING:
        raise ValueError(f"weights missing: {result.missing_keys}")
    # https://github.com/pytorch/tutorials/issues/2611
    """,
    # The matching model definition and a strict load.
    """
    import timm
    import torch

    model = timm.create_model("dm_nfnet_f0")
    model.load_state_dict(torch.load("dm_nfnet_f0-604f9c3a.pth", weights_only=True))
    # https://github.com/huggingface/pytorch-image-models/issues/515
    """,
    # the worker's own weights handed back to the main process through a temporary file
    """
    import os
    import tempfile

    class SpawnLauncher:
        def collect_results(self, trainer):
            state = trainer.lightning_module.state_dict()
            weights_path = os.path.join(tempfile.mkdtemp(), ".temp.ckpt")
            self.io.save_checkpoint(state, weights_path)
            return WorkerOutput(weights_path)

        def recover_results(self, output, trainer):
            ckpt = self.io.load_checkpoint(output.weights_path)
            trainer.lightning_module.load_state_dict(ckpt, strict=False)
    # https://github.com/Lightning-AI/pytorch-lightning/blob/master/src/lightning/pytorch/strategies/launchers/multiprocessing.py
    """,
]
