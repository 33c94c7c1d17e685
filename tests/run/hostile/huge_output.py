"""Hostile script for the dry-run supervisor: prints 50 MB to stdout (and 1 MB to stderr) during
the first epoch.
"""
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,))), batch_size=8)
LINE = "x" * 1023 + "\n"

for epoch in range(2):
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if epoch == 0 and step == 0:
            for _ in range(50 * 1024):  # 50 MiB
                sys.stdout.write(LINE)
            sys.stderr.write(LINE * 1024)  # 1 MiB
            sys.stdout.flush()
    print(f"epoch {epoch}: loss {loss.item():.4f}", flush=True)
