"""TL004 hard-coded-hyperparameter: cases adapted from public reports (see ``__init__.py``)."""

from tests.rules.reports import Report

BUGS = [
    # The package's optimizer builder takes its settings from the config but hard-codes the lr.
    Report(files={
        "pcdet/__init__.py": "",
        "pcdet/utils/__init__.py": "",
        "pcdet/utils/optimization.py": """
            import torch.optim as optim

            def build_optimizer(model, optim_cfg):
                if optim_cfg.OPTIMIZER == "adam":
                    return optim.Adam(model.parameters(), lr=optim_cfg.LR, weight_decay=optim_cfg.WEIGHT_DECAY)
                return optim.AdamW(model.parameters(), lr=3e-3, weight_decay=optim_cfg.WEIGHT_DECAY)
            """,
        "tools/train.py": """
            import argparse
            from pcdet.utils.optimization import build_optimizer

            parser = argparse.ArgumentParser()
            parser.add_argument("--cfg_file", type=str)
            args = parser.parse_args()
            optimizer = build_optimizer(model, cfg.OPTIMIZATION)
            # https://github.com/open-mmlab/OpenPCDet/issues/643
            """,
    }),
    # The training function takes its options but the optimizer's lr is 0.01, not opt.lr.
    """
    import torch

    def sg_train(model, loader, opt):
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        for ep in range(opt.max_ep):
            for x, y in loader:
                optimizer.zero_grad()
                opt.loss(model(x), y).backward()
                optimizer.step()
    # https://github.com/buriburisuri/sugartensor/issues/40
    """,
    # main.py reads its settings from a yaml config, but the lr is written in the code.
    """
    import yaml
    import torch

    config = yaml.safe_load(open("main_config.yaml"))
    model = DivClustModel(config["clusterings"])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0003)
    for epoch in range(config["epochs"]):
        for x in loader:
            optimizer.zero_grad()
            model.loss(x).backward()
            optimizer.step()
    # https://github.com/ManiadisG/DivClust/issues/3
    """,
    # The model class fixes lr=1.0 while train.py takes --learning_rate from the command line.
    Report(files={
        "char_rnn/__init__.py": "",
        "char_rnn/model.py": """
            import torch

            class Model(torch.nn.Module):
                def __init__(self, args):
                    super().__init__()
                    self.rnn = torch.nn.LSTM(args.rnn_size, args.rnn_size, args.num_layers)
                    self.optimizer = torch.optim.SGD(self.parameters(), lr=1.0, momentum=0.0)

                def train_step(self, x, y):
                    self.optimizer.zero_grad()
                    loss = torch.nn.functional.cross_entropy(self.rnn(x)[0], y)
                    loss.backward()
                    self.optimizer.step()
            """,
        "train.py": """
            import argparse
            from char_rnn.model import Model

            parser = argparse.ArgumentParser()
            parser.add_argument("--learning_rate", type=float, default=0.002)
            parser.add_argument("--num_epochs", type=int, default=50)
            args = parser.parse_args()
            model = Model(args)
            # https://github.com/JianGoForIt/YellowFin/issues/2
            """,
    }),
    # train() is handed lr by its caller, yet clips gradients at a literal 5.
    """
    import torch.nn as nn

    def train(train_queue, model, criterion, optimizer, lr):
        model.train()
        for step, (x, target) in enumerate(train_queue):
            optimizer.zero_grad()
            loss = criterion(model(x), target)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5)
            optimizer.step()
    # https://github.com/chenxin061/pdarts/issues/32
    """,
    # main.py parses --batch_size, but the training loader is built with its own size.
    """
    import argparse
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=20)
    parser.add_argument("--epochs_ext", type=int, default=10)
    args = parser.parse_args()

    def extractive_training(args, vocab, dataset, model):
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
        for epoch in range(args.epochs_ext):
            for step, docs in enumerate(torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=True)):
                optimizer.zero_grad()
                model.loss(docs).backward()
                optimizer.step()
    # https://github.com/YueDongCS/BanditSum/issues/5
    """,
    # The integration receives max_epochs but loops over a fixed range.
    """
    import torch

    def train(model, train_loader, optimizer, max_epochs, lr):
        for epoch in range(3):
            for batch in train_loader:
                loss = model(**batch).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
    # https://github.com/neuralmagic/sparseml/pull/195
    """,
    # A benchmark script whose epoch count ignores args.num_epochs.
    """
    import argparse
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--num_epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for epoch in range(10):
        for images, labels in train_loader:
            optimizer.zero_grad()
            loss_fn(model(images), labels).backward()
            optimizer.step()
    # https://github.com/Oneflow-Inc/OneFlow-Benchmark/pull/225
    """,
    # Epochs hard-coded to 2 instead of read from the parser.
    """
    import argparse
    import torch

    def add_argument():
        parser = argparse.ArgumentParser(description="CIFAR")
        parser.add_argument("-e", "--epochs", default=30, type=int)
        parser.add_argument("--local_rank", type=int, default=-1)
        return parser.parse_args()

    args = add_argument()
    for epoch in range(2):
        for i, (inputs, labels) in enumerate(trainloader):
            outputs = model_engine(inputs)
            loss = criterion(outputs, labels)
            model_engine.backward(loss)
            model_engine.step()
    # https://github.com/deepspeedai/DeepSpeedExamples/pull/759
    """,
    # load_optimizer builds its optimizer from a literal, not the parsed --learning_rate.
    Report(files={
        "integrations/__init__.py": "",
        "integrations/transformers/__init__.py": "",
        "integrations/transformers/trainer.py": """
            import torch

            def load_optimizer(model, training_args):
                params = [p for p in model.parameters() if p.requires_grad]
                return torch.optim.AdamW(params, lr=5e-5, eps=training_args.adam_epsilon)
            """,
        "integrations/run_qa.py": """
            from transformers import HfArgumentParser, TrainingArguments
            from integrations.transformers.trainer import load_optimizer

            training_args, = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
            optimizer = load_optimizer(model, training_args)
            # https://github.com/neuralmagic/sparseml/pull/206
            """,
    }),
    # The script takes its other settings as arguments; the lr stayed a literal until the fix.
    """
    import argparse
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--max_epochs", type=int, default=100)
    parser.add_argument("--batch_size", type=int, default=32)
    args = parser.parse_args()
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    for epoch in range(args.max_epochs):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    # https://github.com/hongbo-miao/hongbomiao.com/pull/1961
    """,
    # The training settings name a weight decay, but the optimizer hard-codes 0.0 (zero bypasses it too).
    """
    import torch.optim as optim
    from torch.optim.lr_scheduler import StepLR

    lr = 1e-4
    weight_decay = 0.01
    gamma = 0.85
    num_epochs = 3
    model = load_model("llama-7b")
    optimizer = optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=gamma)
    for epoch in range(num_epochs):
        for batch in train_dataloader:
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        scheduler.step()
    # https://github.com/meta-llama/llama-cookbook/issues/191
    """,
]

LOOKALIKES = [
    # The fix: the config's LR.
    Report(files={
        "pcdet/__init__.py": "",
        "pcdet/utils/__init__.py": "",
        "pcdet/utils/optimization.py": """
            import torch.optim as optim

            def build_optimizer(model, optim_cfg):
                return optim.AdamW(model.parameters(), lr=optim_cfg.LR, weight_decay=optim_cfg.WEIGHT_DECAY)
            """,
        "tools/train.py": """
            import argparse
            from pcdet.utils.optimization import build_optimizer

            parser = argparse.ArgumentParser()
            parser.add_argument("--cfg_file", type=str)
            args = parser.parse_args()
            optimizer = build_optimizer(model, cfg.OPTIMIZATION)
            # https://github.com/open-mmlab/OpenPCDet/issues/643
            """,
    }),
    # The fix: opt.lr.
    """
    import torch

    def sg_train(model, loader, opt):
        optimizer = torch.optim.Adam(model.parameters(), lr=opt.lr)
        for ep in range(opt.max_ep):
            for x, y in loader:
                optimizer.zero_grad()
                opt.loss(model(x), y).backward()
                optimizer.step()
    # https://github.com/buriburisuri/sugartensor/issues/40
    """,
    # The fix: every value from the config.
    """
    import yaml
    import torch

    config = yaml.safe_load(open("main_config.yaml"))
    model = DivClustModel(config["clusterings"])
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])
    for epoch in range(config["epochs"]):
        for x in loader:
            optimizer.zero_grad()
            model.loss(x).backward()
            optimizer.step()
    # https://github.com/ManiadisG/DivClust/issues/3
    """,
    # The fix: epochs from the parser.
    """
    import argparse
    import torch

    def add_argument():
        parser = argparse.ArgumentParser(description="CIFAR")
        parser.add_argument("-e", "--epochs", default=30, type=int)
        return parser.parse_args()

    args = add_argument()
    for epoch in range(args.epochs):
        for i, (inputs, labels) in enumerate(trainloader):
            loss = criterion(model_engine(inputs), labels)
            model_engine.backward(loss)
            model_engine.step()
    # https://github.com/deepspeedai/DeepSpeedExamples/pull/759
    """,
    # The fix: the loader takes args.batch_size.
    """
    import argparse
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=20)
    args = parser.parse_args()

    def extractive_training(args, dataset, model):
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
        for epoch in range(args.epochs_ext):
            for docs in torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True):
                optimizer.zero_grad()
                model.loss(docs).backward()
                optimizer.step()
    # https://github.com/YueDongCS/BanditSum/issues/5
    """,
    # The fix: the configured weight decay is forwarded.
    """
    import torch.optim as optim

    def main(train_config):
        model = load_model(train_config.model_name)
        optimizer = optim.AdamW(model.parameters(), lr=train_config.lr, weight_decay=train_config.weight_decay)
        for epoch in range(train_config.num_epochs):
            for batch in train_dataloader:
                model(**batch).loss.backward()
                optimizer.step()
                optimizer.zero_grad()
    # https://github.com/meta-llama/llama-cookbook/issues/191
    """,
    # The test loader's batch size: evaluation, not a training hyperparameter.
    """
    import argparse
    import torch
    from torchvision import datasets

    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()
    train_loader = torch.utils.data.DataLoader(datasets.MNIST("../data", train=True), batch_size=args.batch_size,
                                               shuffle=True)
    test_loader = torch.utils.data.DataLoader(datasets.MNIST("../data", train=False), batch_size=1000)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for data, target in train_loader:
        optimizer.zero_grad()
        torch.nn.functional.nll_loss(model(data), target).backward()
        optimizer.step()
    # https://github.com/pytorch/examples/pull/213
    """,
    # A script's constants in plain view are its configuration.
    """
    import torch

    N_EPOCHS = 10
    LEARNING_RATE = 1e-3
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    for epoch in range(N_EPOCHS):
        for src, trg in train_iterator:
            optimizer.zero_grad()
            loss = criterion(model(src, trg), trg)
            loss.backward()
            optimizer.step()
    # https://github.com/neulab/newlang-tech/pull/14
    """,
    # The fix: range(1, config.epochs + 1).
    """
    import torch

    def train(config, model, loader):
        optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
        for epoch in range(1, config.epochs + 1):
            for x1, x2, y in loader:
                optimizer.zero_grad()
                model.contrastive_loss(x1, x2, y).backward()
                optimizer.step()
    # https://github.com/seanbenhur/siamese_net/pull/3
    """,
    # The fix: range(args.start_epoch, args.start_epoch + args.epochs).
    """
    import argparse
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--start_epoch", type=int, default=0)
    args = parser.parse_args()
    for epoch in range(args.start_epoch, args.start_epoch + args.epochs):
        for x, _ in data_loader:
            optimizer.zero_grad()
            model.boost_loss(x).backward()
            optimizer.step()
    # https://github.com/Yunfan-Li/Twin-Contrastive-Learning/pull/7
    """,
    # The lr and weight decay come from the config (TransformerLens' training loop).
    """
    import torch.optim as optim

    def train(model, config, dataset):
        if config.optimizer_name in ["Adam", "AdamW"]:
            optimizer = optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        else:
            optimizer = optim.SGD(model.parameters(), lr=config.lr, momentum=config.momentum)
        for epoch in range(1, config.num_epochs + 1):
            for batch in dataset:
                loss = model(batch["tokens"], return_type="loss")
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
    # https://github.com/TransformerLensOrg/TransformerLens/issues/460
    """,
    # The fix: Lightning's configure_optimizers forwards the hparams' weight decay.
    """
    import torch
    import pytorch_lightning as pl

    class BaseModel(pl.LightningModule):
        def configure_optimizers(self):
            lr = self.hparams.learning_rate
            return torch.optim.AdamW(self.parameters(), lr=lr, weight_decay=self.hparams.weight_decay)

        def training_step(self, batch, batch_idx):
            return self.loss(self(batch[0]), batch[1])
    # https://github.com/sktime/pytorch-forecasting/pull/781
    """,
]
