import time

import torch.nn as nn


class Slow(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        print("sleeping forever")
        while True:
            time.sleep(1)
