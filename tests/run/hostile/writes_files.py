"""Hostile script for the dry-run supervisor: writes files into the current directory and to an
absolute path under /tmp.
"""
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,))), batch_size=8)
ABS_DIR = "/tmp/torchlint-hostile-writes"

for epoch in range(2):
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if step == 0:
            with open("train_log.txt", "a") as f:  # relative: the working directory
                f.write(f"epoch {epoch} loss {loss.item():.4f}\n")
            os.makedirs("checkpoints", exist_ok=True)
            torch.save(model.state_dict(), os.path.join("checkpoints", f"epoch{epoch}.pt"))
            os.makedirs(ABS_DIR, exist_ok=True)  # absolute: outside any working directory
            torch.save(model.state_dict(), os.path.join(ABS_DIR, "model.pt"))
            with open(os.path.join(ABS_DIR, "log.txt"), "a") as f:
                f.write("written by tests/run/hostile/writes_files.py\n")
    print(f"epoch {epoch}: loss {loss.item():.4f}", flush=True)
