#!/usr/bin/env python3
"""Writes the ResNet graph files beside this script (vkmps's graph JSON,
../shared TRAINING.md): resnet18.json (ImageNet's ResNet-18: 3x224x224 in,
1000 classes, torchvision's layout) and resnet_small.json (a CIFAR-style
ResNet of three stages of two BasicBlocks, 3x32x32 in, 10 classes).
BasicBlock: conv3x3-bn-relu-conv3x3-bn, plus the shortcut (identity, or
conv1x1-bn when the shape changes), then relu. Convolutions have no bias;
parameters start from PyTorch's defaults (kaiming uniform, bn gamma 1 and
beta 0).

    python3 cmd/vkmps/models/gen_resnet.py
"""
import json, os


def resnet(stem, stages, classes, pool):
    nodes = []

    def conv(name, src, cin, cout, k, s, p):
        nodes.append({"name": name, "op": "conv", "sources": [src], "in_channels": cin, "out_channels": cout,
                      "kernel": k, "stride": s, "padding": {"pad": [p, p, p, p]}, "bias": False})
        return name

    def bn(name, src, c, relu):
        n = {"name": name, "op": "batch_norm", "sources": [src], "channels": c}
        if relu:
            n["neuron"] = {"type": "relu"}
        nodes.append(n)
        return name

    x, c = "x", 3
    if stem == "imagenet":
        x = bn("bn1", conv("conv1", x, 3, 64, 7, 2, 3), 64, True)
        nodes.append({"name": "maxpool", "op": "max", "sources": [x], "kernel": 3, "stride": 2, "padding": {"pad": [1, 1, 1, 1]}})
        x, c = "maxpool", 64
    else:
        x = bn("bn1", conv("conv1", x, 3, 16, 3, 1, 1), 16, True)
        c = 16
    for li, (width, stride) in enumerate(stages, 1):
        for b in range(2):
            s = stride if b == 0 else 1
            p = "layer%d.%d" % (li, b)
            h = bn(p + ".bn1", conv(p + ".conv1", x, c, width, 3, s, 1), width, True)
            h = bn(p + ".bn2", conv(p + ".conv2", h, width, width, 3, 1, 1), width, False)
            short = x
            if s != 1 or c != width:
                short = bn(p + ".downsample.1", conv(p + ".downsample.0", x, c, width, 1, s, 0), width, False)
            nodes.append({"name": p + ".add", "op": "add", "sources": [h, short]})
            nodes.append({"name": p, "op": "neuron", "type": "relu", "sources": [p + ".add"]})
            x, c = p, width
    nodes.append({"name": "avgpool", "op": "avg", "sources": [x], "kernel": pool, "stride": 1, "padding": {"pad": [0, 0, 0, 0]}})
    nodes.append({"name": "fc", "op": "fully_connected", "sources": ["avgpool"], "in_features": c, "out_features": classes})
    nodes.append({"name": "loss", "op": "loss", "loss": "softmax-cross-entropy", "reduction": "mean", "sources": ["fc", "labels"]})
    return {"inputs": {"x": None, "labels": None}, "nodes": nodes, "outputs": ["loss"], "loss": "loss"}


here = os.path.dirname(os.path.abspath(__file__))
for name, g in [("resnet18.json", resnet("imagenet", [(64, 1), (128, 2), (256, 2), (512, 2)], 1000, 7)),
                ("resnet_small.json", resnet("cifar", [(16, 1), (32, 2), (64, 2)], 10, 8))]:
    with open(os.path.join(here, name), "w") as f:
        json.dump(g, f, indent=1)
        f.write("\n")
