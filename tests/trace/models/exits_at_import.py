import sys

import torch.nn as nn

print("setting up, then exiting")
sys.exit(3)


class Net(nn.Module):
    def forward(self, x):
        return x
