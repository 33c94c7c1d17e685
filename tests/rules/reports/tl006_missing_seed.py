"""TL006 missing-seed: cases adapted from public reports (see ``__init__.py``)."""

from tests.rules.reports import Report

BUGS = [
    # Only numpy is seeded before training: torch's init and shuffling still vary.
    """
    import numpy as np
    import torch

    def main(adata, epochs=400):
        np.random.seed(8)
        model = VAE(adata.n_vars, 10)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        loader = torch.utils.data.DataLoader(adata, batch_size=64, shuffle=True)
        for epoch in range(epochs):
            for x in loader:
                optimizer.zero_grad()
                loss = model.loss(x)
                loss.backward()
                optimizer.step()

    if __name__ == "__main__":
        main(load())
    # https://github.com/Novartis/scar/issues/97
    """,
    # torch seeded, numpy's global generator drawn for clip offsets and never seeded.
    """
    import numpy as np
    import torch

    class VideoClips(torch.utils.data.Dataset):
        def __getitem__(self, i):
            start = np.random.randint(0, self.lengths[i] - self.clip_len)
            return self.frames[i][start:start + self.clip_len], self.labels[i]

    if __name__ == "__main__":
        torch.manual_seed(args.seed)
        loader = torch.utils.data.DataLoader(VideoClips(), batch_size=8, shuffle=True)
        for clip, label in loader:
            optimizer.zero_grad()
            criterion(model(clip), label).backward()
            optimizer.step()
    # https://github.com/MichiganCOG/ViP/issues/25
    """,
    # A lesson that seeds numpy for the validation split and trains an unseeded model.
    """
    import numpy as np
    import torch
    from torch import nn

    np.random.seed(2)
    idx = np.random.permutation(len(images))
    train_x, train_y = images[idx[:50000]], labels[idx[:50000]]
    model = nn.Sequential(nn.Linear(784, 100), nn.ReLU(), nn.Linear(100, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for i in range(0, len(train_x), 64):
            loss = nn.functional.cross_entropy(model(train_x[i:i + 64]), train_y[i:i + 64])
            opt.zero_grad()
            loss.backward()
            opt.step()
    # https://github.com/fastai/course-v3/pull/291
    """,
    # np.random.seed(0) is not enough: the variability comes from torch's init and shuffling.
    """
    import numpy as np
    import torch

    np.random.seed(0)
    model = NeuralProphetModel(n_lags=0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    loader = torch.utils.data.DataLoader(TimeDataset(df), batch_size=32, shuffle=True)
    for epoch in range(40):
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.smooth_l1_loss(model(inputs), targets)
            loss.backward()
            optimizer.step()
    # https://github.com/ourownstory/neural_prophet/issues/147
    """,
    # The seed helper is defined in utils.py and never called.
    Report(files={
        "utils.py": """
            import random
            import numpy as np
            import torch

            def set_random_seed(seed):
                random.seed(seed)
                np.random.seed(seed)
                torch.manual_seed(seed)
                torch.cuda.manual_seed_all(seed)
            """,
        "train.py": """
            import torch
            from utils import set_random_seed

            def main(args):
                model = get_model(args)
                optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
                for task, loader in enumerate(tasks):
                    for g, labels in loader:
                        optimizer.zero_grad()
                        loss = torch.nn.functional.cross_entropy(model(g), labels)
                        loss.backward()
                        optimizer.step()

            if __name__ == "__main__":
                main(parse_args())
            # https://github.com/QueuQ/CGLB/issues/12
            """,
    }),
    # The config defines `seed: 42` but the Trainer (another module) never seeds torch; only
    # the data generators seed Python's random.
    Report(files={
        "nightmarenet/data/generator.py": """
            import random

            class DistortionGenerator:
                def __init__(self, seed):
                    random.seed(seed)
            """,
        "nightmarenet/training/trainer.py": """
            import torch

            class Trainer:
                def __init__(self, cfg, model, loader):
                    self.model, self.loader = model, loader
                    self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)

                def train(self):
                    for epoch in range(self.cfg.epochs):
                        for x, y in self.loader:
                            self.optimizer.zero_grad()
                            loss = torch.nn.functional.cross_entropy(self.model(x), y)
                            loss.backward()
                            self.optimizer.step()
            """,
        "train.py": """
            from nightmarenet.data.generator import DistortionGenerator
            from nightmarenet.training.trainer import Trainer

            if __name__ == "__main__":
                cfg = load_config("configs/default.yaml")
                data = DistortionGenerator(cfg.seed)
                Trainer(cfg, build_model(cfg), make_loader(data)).train()
            # https://github.com/Adit-Jain-srm/NightmareNet/issues/64
            """,
    }),
    # The baseline training script had no seed at all (fixed by adding torch.manual_seed).
    """
    import argparse
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=70)

    def main():
        args = parser.parse_args()
        model = DeepSpeech(rnn_hidden_size=800, nb_layers=5)
        optimizer = torch.optim.SGD(model.parameters(), lr=3e-4, momentum=0.9)
        for epoch in range(args.epochs):
            for inputs, targets, input_sizes, target_sizes in train_loader:
                out = model(inputs)
                loss = criterion(out, targets, input_sizes, target_sizes)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

    if __name__ == "__main__":
        main()
    # https://github.com/SeanNaren/deepspeech.pytorch/issues/202
    """,
    # train.py builds the model and runs trainEpoch without any seed.
    """
    import torch

    def trainEpoch(model, criterion, optim, trainData):
        for i in range(len(trainData)):
            batch = trainData[i]
            outputs = model(batch)
            loss = criterion(outputs, batch[1])
            model.zero_grad()
            loss.backward()
            optim.step()

    def main():
        model = NMTModel(encoder, decoder)
        for p in model.parameters():
            p.data.uniform_(-0.1, 0.1)
        optim = torch.optim.SGD(model.parameters(), lr=1.0)
        for epoch in range(13):
            trainEpoch(model, criterion, optim, trainData)

    if __name__ == "__main__":
        main()
    # https://github.com/OpenNMT/OpenNMT-py/pull/73
    """,
    # Randomness in SGD, the VAE's sampling, loader shuffling and numpy's clustering; nothing seeded.
    """
    import numpy as np
    import torch

    def trainmodel(vae, data, nepochs=500):
        loader = torch.utils.data.DataLoader(data, batch_size=256, shuffle=True)
        optimizer = torch.optim.Adam(vae.parameters(), lr=1e-3)
        for epoch in range(nepochs):
            for depths, tnf in loader:
                optimizer.zero_grad()
                loss = vae.calc_loss(depths, tnf)
                loss.backward()
                optimizer.step()

    def cluster(latent):
        order = np.random.permutation(len(latent))
        return [latent[i] for i in order]

    if __name__ == "__main__":
        vae = VAE(nsamples=3)
        trainmodel(vae, load())
        clusters = cluster(vae.encode(load()))
    # https://github.com/RasmussenLab/vamb/issues/46
    """,
    # Xavier init applied without a seed: every run starts from other weights.
    """
    import numpy as np
    import torch.nn as nn
    import torch.nn.init as init
    import torch.optim as optim

    def init_weights(m):
        if type(m) == nn.Conv2d or type(m) == nn.ConvTranspose2d:
            init.xavier_uniform_(m.weight, gain=np.sqrt(2))

    model = FCN()
    model.apply(init_weights)
    optimizer = optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(50):
        for image, mask in train_loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(image), mask)
            loss.backward()
            optimizer.step()
    # https://github.com/alykhantejani/nninit/issues/4
    """,
    # The DPO recipe never applies the configured seed (the finetune recipes do).
    """
    import torch
    from torchtune import config

    class FullDPORecipeDistributed:
        def setup(self, cfg):
            self._model = config.instantiate(cfg.model)
            self._optimizer = config.instantiate(cfg.optimizer, self._model.parameters())
            self._dataloader = torch.utils.data.DataLoader(config.instantiate(cfg.dataset), shuffle=True)

        def train(self):
            for epoch in range(self.total_epochs):
                for batch in self._dataloader:
                    loss = self._loss_fn(*self.concatenated_forward(self._model, batch))
                    loss.backward()
                    self._optimizer.step()
                    self._optimizer.zero_grad(set_to_none=True)

    @config.parse
    def recipe_main(cfg):
        recipe = FullDPORecipeDistributed()
        recipe.setup(cfg=cfg)
        recipe.train()

    if __name__ == "__main__":
        recipe_main()
    # https://github.com/meta-pytorch/torchtune/issues/2335
    """,
    # "Each training gives another accuracy": the published results use no fixed seed.
    """
    import torch

    def train(train_loader, model, criterion, optimizer):
        model.train()
        for images, target in train_loader:
            output = model(images)
            loss = criterion(output, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    def main():
        model = torch.nn.DataParallel(MANet(num_classes=7)).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=64, shuffle=True)
        for epoch in range(60):
            train(train_loader, model, criterion, optimizer)

    if __name__ == "__main__":
        main()
    # https://github.com/zengqunzhao/MA-Net/issues/10
    """,
    # An ignite training whose update runs in an event handler; nothing seeds torch.
    """
    import torch
    from ignite.engine import Engine, Events

    def update(policy, optimizer, gamma):
        returns = discounted(policy.rewards, gamma)
        loss = torch.cat([-lp * r for lp, r in zip(policy.saved_log_probs, returns)]).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def main(env, args):
        policy = Policy()
        optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
        trainer = Engine(run_single_timestep)
        trainer.add_event_handler(Events.EPOCH_COMPLETED, lambda engine: update(policy, optimizer, args.gamma))
        trainer.run(range(10000), max_epochs=args.max_episodes)

    if __name__ == "__main__":
        main(make_env(), parse_args())
    # https://github.com/pytorch/ignite/issues/786
    """,
]

LOOKALIKES = [
    # The fix: seeds for numpy and torch before training.
    """
    import numpy as np
    import torch

    def main(adata, epochs=400, seed=8):
        np.random.seed(seed)
        torch.manual_seed(seed)
        model = VAE(adata.n_vars, 10)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        for epoch in range(epochs):
            for x in torch.utils.data.DataLoader(adata, batch_size=64, shuffle=True):
                optimizer.zero_grad()
                model.loss(x).backward()
                optimizer.step()

    if __name__ == "__main__":
        main(load())
    # https://github.com/Novartis/scar/issues/97
    """,
    # The fix: numpy seeded from the same seed as torch.
    """
    import numpy as np
    import torch

    class VideoClips(torch.utils.data.Dataset):
        def __getitem__(self, i):
            start = np.random.randint(0, self.lengths[i] - self.clip_len)
            return self.frames[i][start:start + self.clip_len], self.labels[i]

    if __name__ == "__main__":
        torch.manual_seed(args.seed)
        np.random.seed(args.seed)
        for clip, label in torch.utils.data.DataLoader(VideoClips(), batch_size=8, shuffle=True):
            optimizer.zero_grad()
            criterion(model(clip), label).backward()
            optimizer.step()
    # https://github.com/MichiganCOG/ViP/issues/25
    """,
    # The fix: the helper is called at the start of main.
    Report(files={
        "utils.py": """
            import random
            import numpy as np
            import torch

            def set_random_seed(seed):
                random.seed(seed)
                np.random.seed(seed)
                torch.manual_seed(seed)
            """,
        "train.py": """
            import torch
            from utils import set_random_seed

            def main(args):
                set_random_seed(args.seed)
                model = get_model(args)
                optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
                for g, labels in loader:
                    optimizer.zero_grad()
                    torch.nn.functional.cross_entropy(model(g), labels).backward()
                    optimizer.step()

            if __name__ == "__main__":
                main(parse_args())
            # https://github.com/QueuQ/CGLB/issues/12
            """,
    }),
    # The fix: the trainer seeds everything in __init__ from the config.
    Report(files={
        "nightmarenet/training/trainer.py": """
            import random
            import numpy as np
            import torch

            class Trainer:
                def __init__(self, cfg, model, loader):
                    random.seed(cfg.seed)
                    np.random.seed(cfg.seed)
                    torch.manual_seed(cfg.seed)
                    self.model, self.loader = model, loader
                    self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)

                def train(self):
                    for x, y in self.loader:
                        self.optimizer.zero_grad()
                        torch.nn.functional.cross_entropy(self.model(x), y).backward()
                        self.optimizer.step()
            """,
        "train.py": """
            from nightmarenet.training.trainer import Trainer

            if __name__ == "__main__":
                cfg = load_config("configs/default.yaml")
                Trainer(cfg, build_model(cfg), make_loader(cfg)).train()
            # https://github.com/Adit-Jain-srm/NightmareNet/issues/64
            """,
    }),
    # The fixing commit: manual seeds at the top of the training script.
    """
    import argparse
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=123456)

    def main():
        args = parser.parse_args()
        torch.manual_seed(args.seed)
        torch.cuda.manual_seed_all(args.seed)
        model = DeepSpeech(rnn_hidden_size=800, nb_layers=5)
        optimizer = torch.optim.SGD(model.parameters(), lr=3e-4, momentum=0.9)
        for inputs, targets, input_sizes, target_sizes in train_loader:
            loss = criterion(model(inputs), targets, input_sizes, target_sizes)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    if __name__ == "__main__":
        main()
    # https://github.com/SeanNaren/deepspeech.pytorch/pull/204
    """,
    # A seed helper called first, the only draw left being torch.randint in training.
    """
    import os
    import random
    import numpy as np
    import torch

    def seed_torch(seed=1029):
        random.seed(seed)
        os.environ["PYTHONHASHSEED"] = str(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)

    seed_torch()
    for x, y in loader:
        noise = torch.randint(0, 10, x.shape)
        loss = criterion(model(x + noise), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # https://github.com/pytorch/pytorch/issues/45797
    """,
    # Lightning: seed_everything before building the model and the Trainer.
    """
    from pytorch_lightning import Trainer, seed_everything

    seed_everything(42, workers=True)
    model = Model()
    trainer = Trainer(deterministic=True)
    trainer.fit(model, datamodule=dm)
    # https://github.com/mit-ll-responsible-ai/hydra-zen/issues/269
    """,
    # The notebook previews random images (display only); training is seeded.
    """
    import random
    import matplotlib.pyplot as plt
    import torch

    torch.manual_seed(42)
    random_idx = random.sample(range(len(train_list)), 9)
    fig, axes = plt.subplots(3, 3, figsize=(16, 12))
    for idx, ax in enumerate(axes.ravel()):
        img = Image.open(train_list[random_idx[idx]])
        ax.set_title(labels[random_idx[idx]])
        ax.imshow(img)
    for epoch in range(epochs):
        for data, label in train_loader:
            loss = criterion(model(data), label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    # https://github.com/lucidrains/vit-pytorch/pull/301
    """,
    # Every generator seeded at the top of the script (the remaining variance is cuDNN's).
    """
    import random
    import numpy as np
    import torch

    seed = 42
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.benchmark = True
    for images, targets in data_loader:
        loss = dino_loss(student(images), teacher(images))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    # https://github.com/facebookresearch/dinov2/issues/116
    """,
    # The notebook seeds numpy and torch (reading the seed from the config is the fix asked).
    """
    import numpy as np
    import torch

    np.random.seed(seed=config.SEED)
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(config.SEED)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(config.SEED)
    for epoch in range(config.TRAIN.END_EPOCH):
        for images, masks in train_loader:
            loss = criterion(model(images), masks)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    # https://github.com/microsoft/seismic-deeplearning/issues/244
    """,
    # The recipe's setup seeds through torchtune's training.set_seed.
    """
    import torch
    from torchtune import config, training

    class FullDPORecipeDistributed:
        def setup(self, cfg):
            self.seed = training.set_seed(seed=cfg.seed)
            self._model = config.instantiate(cfg.model)
            self._optimizer = config.instantiate(cfg.optimizer, self._model.parameters())

        def train(self):
            for batch in self._dataloader:
                loss = self._loss_fn(*self.concatenated_forward(self._model, batch))
                loss.backward()
                self._optimizer.step()
                self._optimizer.zero_grad(set_to_none=True)

    @config.parse
    def recipe_main(cfg):
        recipe = FullDPORecipeDistributed()
        recipe.setup(cfg=cfg)
        recipe.train()

    if __name__ == "__main__":
        recipe_main()
    # https://github.com/meta-pytorch/torchtune/issues/2335
    """,
    # A seeded run that prints a random example of the test set after training.
    """
    import random
    import torch

    torch.manual_seed(0)
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    i = random.randint(0, len(test_set) - 1)
    image, label = test_set[i]
    print(f"label {label}, predicted {model(image[None]).argmax().item()}")
    # https://github.com/arunnthevapalan/day-night-classifier/issues/1
    """,
]
