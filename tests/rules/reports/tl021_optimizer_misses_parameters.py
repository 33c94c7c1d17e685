"""TL021's cases from public reports: layers, parameters or whole models replaced after the
optimizer was built over the old ones, and the correct shapes that look like them (the head
replaced first, the optimizer built again, add_param_group, in-place copies)."""

BUGS = [
    """
    import torch.optim as optim

    net1 = Net()
    optimizer = optim.Adam(net1.parameters(), lr=3e-2)
    print("================================================")
    net1 = Net2()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(net1(x), y)
        loss.backward()
        optimizer.step()
    # https://github.com/pytorch/pytorch/issues/54765
    """,
    """
    import torch
    import torch.nn as nn

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
            self.i2o = nn.Linear(input_size + hidden_size, output_size)

    rnn = RNN(n_letters, 128, n_categories)
    learning_rate = 0.005
    optimizer = torch.optim.SGD(rnn.parameters(), lr=learning_rate)
    criterion = nn.NLLLoss()

    def train(category_tensor, line_tensor):
        hidden = rnn.init_hidden()
        optimizer.zero_grad()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        optimizer.step()
        return output, loss.item()

    rnn = RNN(n_letters, 128, n_categories)
    for epoch in range(1, n_epochs + 1):
        category, line, category_tensor, line_tensor = random_training_pair()
        output, loss = train(category_tensor, line_tensor)
    # https://github.com/spro/practical-pytorch/issues/9
    """,
    """
    import torch.nn as nn
    import torch.optim as optim

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super(RNN, self).__init__()
            self.i2o = nn.Linear(input_size + hidden_size, output_size)

    rnn = RNN(n_letters, n_hidden, n_categories)
    optimizer = optim.SGD(rnn.parameters(), lr=0.005)

    def train(category_tensor, line_tensor):
        hidden = rnn.initHidden()
        optimizer.zero_grad()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        optimizer.step()
        return output, loss.item()

    n_iters = 100000
    rnn = RNN(n_letters, n_hidden, n_categories)
    for iter in range(1, n_iters + 1):
        output, loss = train(*randomTrainingExample()[2:])
    # https://github.com/spro/practical-pytorch/issues/21
    """,
    """
    import torch
    import torch.nn as nn

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)

    def main():
        rnn = RNN(n_letters, n_hidden, n_categories)
        optimizer = torch.optim.SGD(rnn.parameters(), lr=0.005)
        print(rnn(line_to_tensor("Albert")[0], torch.zeros(1, n_hidden)))
        rnn = RNN(n_letters, n_hidden, n_categories)
        for iter in range(1, n_iters + 1):
            category_tensor, line_tensor = random_training_example()
            optimizer.zero_grad()
            output = run(rnn, line_tensor)
            loss = criterion(output, category_tensor)
            loss.backward()
            optimizer.step()
    # https://github.com/pytorch/tutorials/pull/86
    """,
    """
    import torch
    import torch.nn as nn

    def train_compressed(compressed_model, loader, init_scale):
        optimizer = torch.optim.SGD(compressed_model.parameters(), lr=1e-4)
        compressed_model.quantizer.scale = nn.Parameter(init_scale)
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(compressed_model(x), y)
            loss.backward()
            optimizer.step()
    # https://github.com/openvinotoolkit/nncf/pull/327
    """,
    """
    import torch
    from composer.algorithms.blurpool import BlurConv2d

    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    setattr(model, "conv1", BlurConv2d.from_conv2d(model.conv1))
    for batch in train_dataloader:
        optimizer.zero_grad()
        loss = model.loss(model(batch), batch)
        loss.backward()
        optimizer.step()
    # https://github.com/mosaicml/composer/pull/249
    """,
    """
    import torch
    from distiller.quantization import LearnedClippedLinearQuantization

    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    model.features.relu1 = LearnedClippedLinearQuantization(num_bits=4, init_act_clip_val=8.0)
    for epoch in range(args.epochs):
        train(train_loader, model, criterion, optimizer, epoch)
    # https://github.com/IntelLabs/distiller/issues/35
    """,
    """
    import torch
    import torch.nn as nn

    def prune_and_train(model, loader, keep, epochs):
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        model.fc1.weight = nn.Parameter(model.fc1.weight.data[keep])
        model.fc1.bias = nn.Parameter(model.fc1.bias.data[keep])
        for _ in range(epochs):
            for x, y in loader:
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()
                optimizer.step()
    # https://github.com/FasterAI-Labs/fasterai/pull/92
    """,
    """
    import torch
    import torch.nn as nn
    from torch.optim import Adam

    class MyModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(10, 5)
            self.new_head = None

    model = MyModel()
    optimizer = Adam(model.parameters(), lr=0.01)
    model.new_head = nn.Linear(5, 2)
    for x, y in data:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model.new_head(model.fc1(x)), y).backward()
        optimizer.step()
    # https://runebook.dev/en/docs/pytorch/generated/torch.optim.adafactor/torch.optim.Adafactor.add_param_group
    """,
    """
    import torch
    import torch.nn as nn

    model = VGG(depth=16).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    pruner.compress()
    model.features[0] = nn.Conv2d(3, 32, kernel_size=3, padding=1)
    model.classifier = nn.Linear(256, 10)
    for epoch in range(args.fine_tune_epochs):
        trainer(model, optimizer, criterion, epoch)
    # https://github.com/microsoft/nni/issues/4521
    """,
]

LOOKALIKES = [
    """
    import torch.nn as nn
    import torch.optim as optim
    import torchvision

    model = torchvision.models.resnet18(pretrained=True)
    for param in model.parameters():
        param.requires_grad = False
    num_ftrs = model.fc.in_features
    model.fc = nn.Linear(num_ftrs, 2)
    optimizer = optim.SGD(model.fc.parameters(), lr=0.001, momentum=0.9)
    model = train_model(model, criterion, optimizer, exp_lr_scheduler, num_epochs=25)
    # https://github.com/pytorch/tutorials/pull/57
    """,
    """
    import torch.nn as nn
    import torch.optim as optim
    from torchvision import models

    model_conv = models.resnet18(pretrained=True)
    for param in model_conv.parameters():
        param.requires_grad = False
    num_ftrs = model_conv.fc.in_features
    model_conv.fc = nn.Linear(num_ftrs, 2)
    model_conv = model_conv.to(device)
    optimizer_conv = optim.SGD(model_conv.fc.parameters(), lr=0.001, momentum=0.9)
    model_conv = train_model(model_conv, criterion, optimizer_conv, num_epochs=25)
    # https://github.com/patrickloeber/pytorchTutorial/pull/6
    """,
    """
    import torch.nn as nn
    from torch import optim
    import torchvision

    model = torchvision.models.resnet18(pretrained=True)
    for param in model.parameters():
        param.requires_grad = False
    model.fc = nn.Linear(512, 10)
    optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    # https://github.com/fengdu78/Data-Science-Notes/issues/18
    """,
    """
    import torch

    class Learner:
        def create_opt(self, lr):
            self.opt = torch.optim.Adam(filter(lambda p: p.requires_grad, self.model.parameters()), lr=lr)

        def freeze_to(self, n):
            for g in self.layer_groups[:n]:
                for p in g.parameters():
                    p.requires_grad = False
            self.create_opt(self.lr)

        def fit(self, loader):
            for x, y in loader:
                self.opt.zero_grad()
                self.loss_func(self.model(x), y).backward()
                self.opt.step()
    # https://github.com/fastai/fastai/issues/2133
    """,
    """
    import torch
    import torch.nn as nn

    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model.classifier = nn.Linear(2048, num_new_classes)
    optimizer.add_param_group({"params": model.classifier.parameters(), "lr": 0.1})
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    # https://github.com/pytorch/pytorch/pull/2374
    """,
    """
    import torch.optim as optim

    class FineTune:
        def incremental_train(self, data_manager):
            self._network.update_fc(self._total_classes)
            if self._cur_task == 0:
                optimizer = optim.SGD(self._network.parameters(), momentum=0.9, lr=self.args["init_lr"])
            else:
                optimizer = optim.SGD(self._network.parameters(), lr=self.args["lrate"], momentum=0.9)
            self._update_representation(self.train_loader, optimizer)
    # https://github.com/LAMDA-CL/LAMDA-PILOT/issues/21
    """,
    """
    import torch.optim as optim

    model = ft_net(len(class_names))
    ignored_params = list(map(id, model.model.fc.parameters())) + list(map(id, model.classifier.parameters()))
    base_params = filter(lambda p: id(p) not in ignored_params, model.parameters())
    optimizer_ft = optim.SGD([
        {"params": base_params, "lr": 0.01},
        {"params": model.model.fc.parameters(), "lr": 0.1},
        {"params": model.classifier.parameters(), "lr": 0.1},
    ], weight_decay=5e-4, momentum=0.9, nesterov=True)
    model = train_model(model, criterion, optimizer_ft, exp_lr_scheduler, num_epochs=60)
    # https://github.com/layumi/Person_reID_baseline_pytorch/issues/90
    """,
    """
    import torch
    from torch.optim.lr_scheduler import MultiStepLR

    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    pruner = L1FilterPruner(model, config_list, optimizer)
    model = pruner.compress()
    m_speedup = ModelSpeedup(model, dummy_input, mask_path, device)
    m_speedup.speedup_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    scheduler = MultiStepLR(optimizer, milestones=[50, 75], gamma=0.1)
    for epoch in range(args.fine_tune_epochs):
        trainer(model, optimizer, criterion, epoch)
    # https://github.com/microsoft/nni/pull/3844
    """,
    """
    import torch.nn as nn
    from transformers import AutoModelForTokenClassification, Trainer

    model = AutoModelForTokenClassification.from_pretrained(model_args.model_name_or_path)
    model.classifier = nn.Linear(1024, 13)
    model.num_labels = 13
    trainer = Trainer(model=model, args=training_args, train_dataset=train_dataset)
    trainer.train()
    # https://github.com/huggingface/transformers/issues/5905
    """,
    """
    import itertools
    import torch

    model = TransformerModel(args, vocab=n_vocab, n_ctx=n_ctx)
    clf_head = ClfHead(clf_token, args)
    model_opt = OpenAIAdam(itertools.chain(model.parameters(), clf_head.parameters()), lr=6.25e-5)
    for xmb, mmb, ymb in iter_data(trX, trM, trY):
        model_opt.zero_grad()
        loss = compute_loss(clf_head(model(xmb)), ymb)
        loss.backward()
        model_opt.step()
    # https://github.com/huggingface/pytorch-openai-transformer-lm/pull/6
    """,
    """
    import torch

    def train_compressed(compressed_model, loader, init_scale):
        optimizer = torch.optim.SGD(compressed_model.parameters(), lr=1e-4)
        with torch.no_grad():
            compressed_model.quantizer.scale.copy_(init_scale)
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(compressed_model(x), y)
            loss.backward()
            optimizer.step()
    # https://github.com/openvinotoolkit/nncf/pull/327
    """,
    """
    import torch.optim as optim

    net1 = Net()
    optimizer = optim.Adam(net1.parameters(), lr=3e-2)
    net1 = Net2()
    optimizer = optim.Adam(net1.parameters(), lr=3e-2)
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(net1(x), y)
        loss.backward()
        optimizer.step()
    # https://github.com/pytorch/pytorch/issues/54765
    """,
]
