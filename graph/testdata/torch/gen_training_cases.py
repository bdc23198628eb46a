#!/usr/bin/env python3
"""Writes training_cases.json: a small LeNet-like network trained for a few
steps in PyTorch (CPU, float64 math on float32 values), once per optimizer,
from fixed initial weights and batches: graph/train_torch_test.go trains the
same graph in vkmps and compares the losses and parameters step by step.

Network: conv 3x3 (2 -> 4, pad 1) + relu, max pool 2x2, conv 3x3 (4 -> 6) +
tanh, fully connected 6*2*2 -> 5, softmax cross-entropy (mean), on inputs
of 6x2x8x8 with one-hot labels; four steps, a new batch each.

    /usr/bin/python3 graph/testdata/torch/gen_training_cases.py
"""
import json, os
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(7)
N, STEPS = 6, 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(2, 4, 3, padding=1)
        self.c2 = nn.Conv2d(4, 6, 3)
        self.f1 = nn.Linear(24, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = torch.tanh(self.c2(x))
        return self.f1(x.flatten(1))


base = Net()
init = {k: v.detach().clone() for k, v in base.state_dict().items()}
xs = [torch.randn(N, 2, 8, 8) for _ in range(STEPS)]
ys = [torch.randint(0, 5, (N,)) for _ in range(STEPS)]
names = {"c1.weight": "c1.weights", "c1.bias": "c1.bias", "c2.weight": "c2.weights", "c2.bias": "c2.bias",
         "f1.weight": "f1.weights", "f1.bias": "f1.bias"}
optimizers = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "momentum": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
    "nesterov": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.99, eps=1e-8),
    "adam": lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.9, 0.999), eps=1e-8),
    "sgd-weight-decay": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.5, weight_decay=0.01),
}
cases = []
for name, make in optimizers.items():
    net = Net()
    net.load_state_dict(init)
    opt = make(net.parameters())
    losses, params = [], []
    for s in range(STEPS):
        loss = F.cross_entropy(net(xs[s]), ys[s])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        params.append({names[k]: v.detach().flatten().tolist() for k, v in net.state_dict().items()})
    cases.append({"optimizer": name, "losses": losses, "params": params})

out = {
    "init": {names[k]: {"shape": list(v.shape), "data": v.flatten().tolist()} for k, v in init.items()},
    "x": [x.flatten().tolist() for x in xs],
    "labels": [F.one_hot(y, 5).float().flatten().tolist() for y in ys],
    "cases": cases,
}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "training_cases.json"), "w") as f:
    json.dump(out, f)
