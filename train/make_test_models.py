"""Small ONNX files for the hand model's bad-input tests (tests/hands.rs): a network
whose input shape is not the hand model's. Written to tests/data/.

    python train/make_test_models.py
"""

import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 8, 1))
    x = torch.zeros(1, 3, 64, 64)
    torch.onnx.export(net, (x,), "tests/data/wrong_input_shape.onnx", opset_version=17,
                      dynamo=False, input_names=["frame"], output_names=["maps"])


if __name__ == "__main__":
    main()
