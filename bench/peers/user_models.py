#!/usr/bin/env python3
"""The user's own models of bench/train_bench.py (PROTOCOL.md, "Exported
models"): a model as its author wrote it in PyTorch or Keras, trained by
that framework from its own module, against Kiln training what the
framework exports (an ONNX file, a frozen GraphDef).

    cnn        PyTorch's MNIST example network (examples/mnist in
               pytorch/examples, without its dropout): Conv2d(1, 32, 3)
               ReLU MaxPool2d(2) Conv2d(32, 64, 3) ReLU MaxPool2d(2)
               Linear(3136, 128) ReLU Linear(128, 10), on 28x28 images
               (padding 1); exported with torch.onnx.export.
    encoder    a token classifier as the real-models issue's encoder:
               nn.Embedding, nn.TransformerEncoder of 2 post-norm
               nn.TransformerEncoderLayer (d_model 128, 4 heads, feed-forward
               512, ReLU, dropout 0, batch_first), a Linear head over the
               vocabulary; loss over every position. torch.onnx.export.
    lstm, gru  a sequence classifier: nn.LSTM (or nn.GRU) of 128 inputs and
               256 hidden units, batch_first, over 32 steps, and a Linear(256,
               10) head on the last step's output; torch.onnx.export (ONNX
               LSTM/GRU, which kilnc unrolls over the 32 steps).
    keras_cnn  the Keras MNIST convnet (keras.io's "Simple MNIST convnet",
               without its dropout, with a Dense(128) as cnn): Conv2D(32, 3,
               relu, same) MaxPooling2D Conv2D(64, 3, relu, same)
               MaxPooling2D Flatten Dense(128, relu) Dense(10), NHWC; frozen
               with convert_variables_to_constants_v2.
    keras_lstm lstm's model in Keras: LSTM(256) (a while loop, as Keras
               writes it without unroll=True) over 32 steps of 128 inputs,
               Dense(10); frozen the same way.
    keras_atrous
               DeepLab's atrous convolutions in Keras: Conv2D(32, 3, relu,
               same) then three 3x3 Conv2D(32) dilated 2, 4 and 2 (relu,
               same; TensorFlow writes each as SpaceToBatchND, Conv2D and
               BatchToSpaceND, which kilnc folds into one dilated
               convolution), global average pooling, Dense(10), on 32x32x3
               images, NHWC; frozen the same way.
    llama      Hugging Face transformers' LlamaForCausalLM (vocabulary 1000,
               width 128, 2 layers, 4 heads sharing 2 key/value heads,
               SwiGLU 352, RMSNorm, rotary embeddings) on 32 tokens, loss
               over every position; torch.onnx.export(dynamo=True,
               optimize=False): the TorchScript exporter refuses it.

Every loss is the mean softmax cross-entropy of the logits against integer
labels. The convnets train with SGD and momentum 0.9 at 1e-3, the encoder
and the recurrent models with Adam at 1e-3 (MODELS says why). Imported by the harness (torch) and the peers (torch or
TensorFlow): the frameworks are imported inside the functions that use them.
Run under TensorFlow's Python, it writes a Keras model's workload files:

    /work/venv-tf/bin/python bench/peers/user_models.py --export-keras keras_cnn W
"""

import argparse
import os
import sys

import numpy as np

# name: framework, batch, the input's name, shape (batch first) and dtype,
# the token range of an id input, the classes, the output Kiln trains, and
# the optimizer as kilnc's flags. The convnets train with SGD and momentum,
# the convnet recipe (PyTorch's ImageNet example): under Adam their float32
# curves part from the float64 one by 1e-5 to 1e-4 within 15 to 40 steps
# in every framework (Adam turns the sign of a tiny, rounding-sized gradient
# into a full step; which max-pool input wins a near tie differs between
# kernels), so no row could agree with another within 1e-5.
CONVNET_OPTIMIZER = ["--optimizer=momentum", "--lr=0.001", "--momentum=0.9"]
MODELS = {
    "cnn": {"framework": "torch", "batch": 32, "input": "x", "shape": [32, 1, 28, 28],
            "dtype": "float32", "classes": 10, "output": "logits", "seed": 11,
            "optimizer": CONVNET_OPTIMIZER},
    "encoder": {"framework": "torch", "batch": 16, "input": "ids", "shape": [16, 32],
                "dtype": "int64", "vocabulary": 1000, "classes": 1000, "output": "logits",
                "seed": 12, "optimizer": ["--optimizer=adam", "--lr=0.001"]},
    "lstm": {"framework": "torch", "batch": 64, "input": "x", "shape": [64, 32, 128],
             "dtype": "float32", "classes": 10, "output": "logits", "seed": 14,
             "optimizer": ["--optimizer=adam", "--lr=0.001"]},
    "gru": {"framework": "torch", "batch": 64, "input": "x", "shape": [64, 32, 128],
            "dtype": "float32", "classes": 10, "output": "logits", "seed": 15,
            "optimizer": ["--optimizer=adam", "--lr=0.001"]},
    # At most 40 steps a run (warm-up included): from step 35 on, Kiln's
    # float32 curve parts from TensorFlow's (1e-6 at step 35, 2.9e-6 by step
    # 40, 1.1e-5 at step 54), and from the float64 curve of the same model
    # as much, while TensorFlow's float32 curve stays within 1e-7 of its
    # float64 one (docs/performance.md; not yet explained).
    # transformers' own LlamaForCausalLM (LLAMA below): the TorchScript
    # exporter refuses its causal mask (aten::diff), so the dynamo exporter.
    "llama": {"framework": "torch", "batch": 16, "input": "ids", "shape": [16, 32],
              "dtype": "int64", "vocabulary": 1000, "classes": 1000, "output": "logits",
              "seed": 18, "optimizer": ["--optimizer=adam", "--lr=0.001"],
              "exporter": "dynamo"},
    "keras_cnn": {"framework": "tf", "batch": 32, "input": "x", "shape": [32, 28, 28, 1],
                  "dtype": "float32", "classes": 10, "output": "Identity", "seed": 13,
                  "optimizer": CONVNET_OPTIMIZER, "max_steps": 40},
    "keras_lstm": {"framework": "tf", "batch": 64, "input": "x", "shape": [64, 32, 128],
                   "dtype": "float32", "classes": 10, "output": "Identity", "seed": 16,
                   "optimizer": ["--optimizer=adam", "--lr=0.001"]},
    "keras_atrous": {"framework": "tf", "batch": 16, "input": "x", "shape": [16, 32, 32, 3],
                     "dtype": "float32", "classes": 10, "output": "Identity", "seed": 17,
                     "optimizer": CONVNET_OPTIMIZER, "max_steps": 40},
}
ENCODER = {"d_model": 128, "heads": 4, "feed_forward": 512, "layers": 2}
LLAMA = {"hidden_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
         "intermediate_size": 352, "num_hidden_layers": 2, "max_position_embeddings": 64}
RECURRENT_HIDDEN = 256


# --- PyTorch -------------------------------------------------------------------


def torch_module(name):
    """The seeded nn.Module of a PyTorch model, in training mode."""
    import torch

    class MnistCnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(1, 32, 3, padding=1)
            self.conv2 = torch.nn.Conv2d(32, 64, 3, padding=1)
            self.fc1 = torch.nn.Linear(64 * 7 * 7, 128)
            self.fc2 = torch.nn.Linear(128, 10)

        def forward(self, x):
            x = torch.nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
            x = torch.nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
            x = torch.relu(self.fc1(torch.flatten(x, 1)))
            return self.fc2(x)

    class TokenEncoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            vocabulary, d = MODELS["encoder"]["vocabulary"], ENCODER["d_model"]
            self.emb = torch.nn.Embedding(vocabulary, d)
            layer = torch.nn.TransformerEncoderLayer(
                d_model=d, nhead=ENCODER["heads"], dim_feedforward=ENCODER["feed_forward"],
                dropout=0.0, batch_first=True)
            self.encoder = torch.nn.TransformerEncoder(layer, ENCODER["layers"],
                                                       enable_nested_tensor=False)
            self.head = torch.nn.Linear(d, vocabulary)

        def forward(self, ids):
            return self.head(self.encoder(self.emb(ids)))

    class SequenceClassifier(torch.nn.Module):
        def __init__(self, cell):
            super().__init__()
            features, classes = MODELS[name]["shape"][2], MODELS[name]["classes"]
            self.rnn = cell(features, RECURRENT_HIDDEN, batch_first=True)
            self.head = torch.nn.Linear(RECURRENT_HIDDEN, classes)

        def forward(self, x):
            outputs, _ = self.rnn(x)
            return self.head(outputs[:, -1])

    class CausalLanguageModel(torch.nn.Module):
        """transformers' LlamaForCausalLM returning its logits, no cache."""

        def __init__(self):
            super().__init__()
            import transformers
            self.model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
                vocab_size=MODELS["llama"]["vocabulary"], **LLAMA))

        def forward(self, ids):
            return self.model(ids, use_cache=False).logits

    if MODELS.get(name, {}).get("framework") != "torch":
        raise KeyError("no PyTorch model %r" % name)
    torch.manual_seed(MODELS[name]["seed"])
    build = {"cnn": MnistCnn, "encoder": TokenEncoder,
             "lstm": lambda: SequenceClassifier(torch.nn.LSTM),
             "gru": lambda: SequenceClassifier(torch.nn.GRU),
             "llama": CausalLanguageModel}[name]
    return build().train()


def torch_loss(torch, logits, labels):
    """Mean cross-entropy over every position (the encoder's [B, S, V])."""
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             labels.reshape(-1))


# --- Keras ---------------------------------------------------------------------


def keras_model(name):
    """The Keras model (Keras 3 on TensorFlow), seeded."""
    import keras
    if MODELS.get(name, {}).get("framework") != "tf":
        raise KeyError("no Keras model %r" % name)
    spec = MODELS[name]
    keras.utils.set_random_seed(spec["seed"])
    layers = keras.layers
    x = keras.Input(tuple(spec["shape"][1:]), batch_size=spec["batch"], name="x")
    if name == "keras_lstm":
        # As users build it: a while loop over the steps (no unroll=True),
        # which kilnc unrolls at import.
        h = layers.LSTM(RECURRENT_HIDDEN, name="lstm")(x)
        return keras.Model(x, layers.Dense(spec["classes"], name="head")(h), name=name)
    if name == "keras_atrous":
        h = layers.Conv2D(32, 3, padding="same", activation="relu", name="stem")(x)
        for k, rate in enumerate((2, 4, 2)):
            h = layers.Conv2D(32, 3, dilation_rate=rate, padding="same", activation="relu",
                              name="atrous%d" % k)(h)
        h = layers.GlobalAveragePooling2D(name="pool")(h)
        return keras.Model(x, layers.Dense(spec["classes"], name="head")(h), name=name)
    h = layers.Conv2D(32, 3, padding="same", activation="relu", name="conv1")(x)
    h = layers.MaxPooling2D(2, name="pool1")(h)
    h = layers.Conv2D(64, 3, padding="same", activation="relu", name="conv2")(h)
    h = layers.MaxPooling2D(2, name="pool2")(h)
    h = layers.Flatten(name="flatten")(h)
    h = layers.Dense(128, activation="relu", name="fc1")(h)
    logits = layers.Dense(spec["classes"], name="fc2")(h)
    return keras.Model(x, logits, name=name)


def export_keras(name, folder):
    """folder/model.pb (model(x, training=False) frozen by
    convert_variables_to_constants_v2: input `x`, output `Identity`) and
    folder/weights.npz (each trainable variable by its path)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ["KERAS_BACKEND"] = "tensorflow"
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)
    model = keras_model(name)
    function = tf.function(lambda x: model(x, training=False))
    concrete = function.get_concrete_function(
        tf.TensorSpec(MODELS[name]["shape"], tf.float32, name="x"))
    frozen = convert_variables_to_constants_v2(concrete)
    (fetch,) = frozen.outputs
    if fetch.name.split(":")[0] != MODELS[name]["output"]:
        raise SystemExit("the frozen graph's output is %s, not %s"
                         % (fetch.name, MODELS[name]["output"]))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "model.pb"), "wb") as f:
        f.write(frozen.graph.as_graph_def().SerializeToString())
    np.savez(os.path.join(folder, "weights.npz"),
             **{v.path: v.numpy() for v in model.trainable_variables})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export-keras", nargs=2, metavar=("MODEL", "FOLDER"), required=True)
    args = parser.parse_args()
    export_keras(*args.export_keras)
    return 0


if __name__ == "__main__":
    sys.exit(main())
