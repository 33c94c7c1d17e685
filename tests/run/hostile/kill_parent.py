"""Hostile script for the dry-run supervisor: sends SIGKILL to its parent process
(os.kill(os.getppid(), 9)) after the first step.
"""
import os
import signal

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,))), batch_size=8)

for epoch in range(2):
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if epoch == 0 and step == 0:
            print(f"killing parent {os.getppid()}", flush=True)
            os.kill(os.getppid(), signal.SIGKILL)
    print(f"epoch {epoch}: loss {loss.item():.4f}", flush=True)
