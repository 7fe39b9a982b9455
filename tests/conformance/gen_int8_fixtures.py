#!/usr/bin/env python3
"""Generate oneDNN-subgraph and int8 fixtures with real MXNet 1.9.1 (its oneDNN build).

Two kinds of export MXNet's own tools write for its oneDNN (MKLDNN) backend:

  fp32 subgraph   net.optimize_for(x, backend='MKLDNN') then export: convolutions, their
                  BatchNorm, activation and residual add as `_sg_mkldnn_conv` nodes holding
                  the original ops in a nested `subgraphs` graph.
  int8            mxnet.contrib.quantization.quantize_net_v2 (calibrated on a few images)
                  then export: `_contrib_quantize_v2`, quantized `_sg_mkldnn_conv` and
                  `_sg_mkldnn_fully_connected`, `_contrib_quantized_*` ops.

Each case is a directory laid out as gen_fixtures.py's (model-symbol.json, model-0000.params,
input0.npy, output0.npy, case.json); the quantized cases' names start with `int8_`, the fp32
subgraph ones' with `sg_`.
The outputs come from loading the saved files back into MXNet with its oneDNN kernels on (the
quantized ops exist only there).  Cases are cached: a complete one is skipped unless --force.

    gen_int8_fixtures.py --out DIR [--only SUBSTRING[,SUBSTRING...]] [--force] [--list]
                         [--stamp FILE]

--stamp touches FILE once every case is complete (the build's custom target waits on it).

Run it with the MXNet 1.9.1 virtual environment (numpy < 1.24).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fixtures as gf  # noqa: E402  (sets MXNET_MKLDNN_ENABLED=0 for its own cases)

# gen_fixtures switches oneDNN off for its references; these ops exist only with it.  MXNet
# reads the variable when it first runs an op, which has not happened yet.
os.environ["MXNET_MKLDNN_ENABLED"] = "1"
import mxnet as mx  # noqa: E402
from mxnet.contrib import quantization  # noqa: E402
from mxnet.gluon import nn  # noqa: E402

SIZE = 64           # small images keep ResNet-18 fast; every layer still runs
CALIB_IMAGES = 8


class SmallNet(mx.gluon.HybridBlock):
    """Every fusion MXNet's oneDNN pass makes in a ResNet, small: conv+BN+ReLU, conv+BN+add+ReLU,
    a conv with bias and no BN, max pooling, global average pooling and a dense layer.  The last
    ReLU is the `relu` op, which the pass does not fuse: the quantized graph dequantizes before
    it and quantizes after it."""

    def __init__(self, **kwargs):
        super(SmallNet, self).__init__(**kwargs)
        with self.name_scope():
            self.conv0 = nn.Conv2D(16, 3, strides=2, padding=1, use_bias=False)
            self.bn0 = nn.BatchNorm()
            self.act0 = nn.Activation("relu")
            self.pool0 = nn.MaxPool2D(3, 2, 1)
            self.conv1 = nn.Conv2D(16, 3, padding=1, use_bias=False)
            self.bn1 = nn.BatchNorm()
            self.conv2 = nn.Conv2D(16, 3, padding=1, use_bias=False)
            self.bn2 = nn.BatchNorm()
            self.act2 = nn.Activation("relu")
            self.conv3 = nn.Conv2D(24, 1, use_bias=True)
            self.pool1 = nn.GlobalAvgPool2D()
            self.dense = nn.Dense(10)

    def hybrid_forward(self, F, x):
        x = self.pool0(self.act0(self.bn0(self.conv0(x))))
        y = F.relu(self.bn1(self.conv1(x)))
        x = self.act2(self.bn2(self.conv2(y)) + x)
        x = F.relu(self.conv3(x))
        return self.dense(self.pool1(x))


class BranchNet(mx.gluon.HybridBlock):
    """The quantized ops a ResNet does not make MXNet emit: `_contrib_quantized_concat` of two
    convolution branches (DenseNet's and Inception's join), one ending in a ReLU (uint8) and one
    not (int8), so the concat rescales both and mixes dtypes; a concat of two pooled uint8
    branches of different ranges, whose int8 output an Activation('relu') reads as
    `_contrib_quantized_act`; and `_contrib_quantized_flatten` before the quantized dense layer.  The add of two convolutions is fused into the second (with_sum)."""

    def __init__(self, **kwargs):
        super(BranchNet, self).__init__(**kwargs)
        with self.name_scope():
            self.stem = nn.Conv2D(8, 3, strides=2, padding=1)
            self.left = nn.Conv2D(8, 1)
            self.right = nn.Conv2D(8, 3, padding=1)
            self.sum_a = nn.Conv2D(8, 3, padding=1)
            self.sum_b = nn.Conv2D(8, 3, padding=1)
            self.act = nn.Activation("relu")
            self.flat = nn.Flatten()
            self.dense = nn.Dense(10)

    def hybrid_forward(self, F, x):
        x = F.relu(self.stem(x))
        y = F.concat(self.left(x), F.relu(self.right(x)), dim=1)
        z = F.relu(self.sum_a(x) + self.sum_b(x))
        y = F.Pooling(y, kernel=(2, 2), stride=(2, 2), pool_type="max")
        z = F.Pooling(z, kernel=(2, 2), stride=(2, 2), pool_type="max")
        y = self.act(F.concat(y, z, dim=1))
        y = F.Pooling(y, kernel=(4, 4), stride=(4, 4), pool_type="avg")
        return self.dense(self.flat(y))


class DepthwiseNet(mx.gluon.HybridBlock):
    """Depthwise convolutions in the places the zoo's MobileNets do not put them, small: one with
    a residual added (with_sum) whose data and residual are both the stem's output, and a 5x5 of
    stride 2 (MobileNetV3's kernel size) after it, every value between them a convolution's."""

    def __init__(self, **kwargs):
        super(DepthwiseNet, self).__init__(**kwargs)
        with self.name_scope():
            self.stem = nn.Conv2D(16, 3, strides=2, padding=1, use_bias=False)
            self.bn0 = nn.BatchNorm()
            self.act0 = nn.Activation("relu")
            self.dw_sum = nn.Conv2D(16, 3, padding=1, groups=16, use_bias=False)
            self.bn1 = nn.BatchNorm()
            self.act1 = nn.Activation("relu")
            self.dw_5x5 = nn.Conv2D(16, 5, strides=2, padding=2, groups=16, use_bias=False)
            self.bn2 = nn.BatchNorm()
            self.act2 = nn.Activation("relu")
            self.pool = nn.GlobalAvgPool2D()
            self.dense = nn.Dense(10)

    def hybrid_forward(self, F, x):
        x = self.act0(self.bn0(self.stem(x)))
        x = self.act1(self.bn1(self.dw_sum(x)) + x)
        x = self.act2(self.bn2(self.dw_5x5(x)))
        return self.dense(self.pool(x))


class PreActNet(mx.gluon.HybridBlock):
    """The two int8 ops ResNet v2 and MobileNetV3 add, small: a BatchNorm on the input and
    one on a convolution's output that also feeds a residual add (so the oneDNN pass cannot
    fold it into the convolution), both `_contrib_quantized_batch_norm`, and a hard swish,
    x * relu6(x + 3) / 6, whose product is `_contrib_quantized_elemwise_mul`."""

    def __init__(self, **kwargs):
        super(PreActNet, self).__init__(**kwargs)
        with self.name_scope():
            self.bn_data = nn.BatchNorm(scale=False, center=False)
            self.conv0 = nn.Conv2D(16, 3, strides=2, padding=1, use_bias=False)
            self.bn1 = nn.BatchNorm()
            self.conv1 = nn.Conv2D(16, 3, padding=1, use_bias=False)
            self.conv2 = nn.Conv2D(24, 1, use_bias=False)
            self.pool = nn.GlobalAvgPool2D()
            self.dense = nn.Dense(10)

    def hybrid_forward(self, F, x):
        x = self.conv0(self.bn_data(x))
        x = self.conv1(F.relu(self.bn1(x))) + x
        x = x * (F.clip(x + 3.0, 0.0, 6.0) / 6.0)
        return self.dense(self.pool(self.conv2(x)))


class ResidualNet(mx.gluon.HybridBlock):
    """Residual adds that no convolution absorbs, as in YOLOv3: the oneDNN pass fuses an add
    into the convolution that makes one of its operands, so here each operand is pooled first
    and the add stays `_contrib_quantized_elemwise_add`.  Its three dtype pairs: uint8 + int8
    (a ReLU branch and a plain one; MXNet reorders the uint8 one to int8), int8 + int8, and
    uint8 + uint8 (whose sum stays uint8)."""

    def __init__(self, **kwargs):
        super(ResidualNet, self).__init__(**kwargs)
        with self.name_scope():
            self.stem = nn.Conv2D(8, 3, strides=2, padding=1)
            self.relu_a = nn.Conv2D(8, 3, padding=1)
            self.plain_b = nn.Conv2D(8, 1)
            self.plain_c = nn.Conv2D(8, 1)
            self.relu_d = nn.Conv2D(8, 1)
            self.dense = nn.Dense(10)

    def hybrid_forward(self, F, x):
        def pool(v, kind="max"):
            return F.Pooling(v, kernel=(2, 2), stride=(2, 2), pool_type=kind)
        x = F.relu(self.stem(x))
        a = pool(F.relu(self.relu_a(x)))
        b = pool(self.plain_b(x))
        c = pool(self.plain_c(x))
        d = pool(F.relu(self.relu_d(x)), "avg")
        return self.dense(F.concat(a + b, b + c, a + d, dim=1))


class DeadNet(mx.gluon.HybridBlock):
    """Layers dead on every calibration image, for which quantize_net_v2 writes a calibrated
    range of [0, 0] (MobileNetV2's 23rd convolution on compare.py's bench models): a fused
    conv+BN+ReLU whose BatchNorm shift keeps it below 0, read by a convolution that adds a live
    residual; and a convolution whose bias keeps it below 0 under the unfused `relu` op, so the
    `_contrib_quantize_v2` after it is calibrated to [0, 0] and the convolution after that
    reads it.  dead_layers() sets those shifts after the seeded initialisation."""

    def __init__(self, **kwargs):
        super(DeadNet, self).__init__(**kwargs)
        with self.name_scope():
            self.stem = nn.Conv2D(8, 3, strides=2, padding=1)
            self.conv_dead = nn.Conv2D(8, 1, use_bias=False)
            self.bn_dead = nn.BatchNorm()
            self.act_dead = nn.Activation("relu")
            self.after_dead = nn.Conv2D(8, 3, padding=1)
            self.side = nn.Conv2D(8, 1)
            self.act_sum = nn.Activation("relu")
            self.conv_neg = nn.Conv2D(8, 1)
            self.after_neg = nn.Conv2D(8, 1)
            self.pool = nn.GlobalAvgPool2D()
            self.dense = nn.Dense(10)

    def hybrid_forward(self, F, x):
        x = F.relu(self.stem(x))
        d = self.act_dead(self.bn_dead(self.conv_dead(x)))
        z = self.act_sum(self.side(x) + self.after_dead(d))
        e = F.relu(self.conv_neg(x))
        f = self.after_neg(e)
        return self.dense(self.pool(F.concat(z, f, dim=1)))

    def dead_layers(self):
        self.bn_dead.beta.set_data(mx.nd.full(self.bn_dead.beta.shape, -1000.0))
        self.conv_neg.bias.set_data(mx.nd.full(self.conv_neg.bias.shape, -1000.0))


def build_net(model, mrng, calib):
    """A network with seeded weights and calibrated BatchNorm statistics, hybridized."""
    if model == "small":
        net = SmallNet(prefix="small_")
    elif model == "branches":
        net = BranchNet(prefix="branches_")
    elif model == "preact":
        net = PreActNet(prefix="preact_")
    elif model == "residual":
        net = ResidualNet(prefix="residual_")
    elif model == "dead":
        net = DeadNet(prefix="dead_")
    elif model == "depthwise":
        net = DepthwiseNet(prefix="depthwise_")
    elif model.startswith("mobilenetv3"):  # GluonCV's: MXNet's own zoo has no MobileNetV3
        import gluoncv
        net = gluoncv.model_zoo.get_model(model, pretrained=False)
    else:
        net = mx.gluon.model_zoo.vision.get_model(model, pretrained=False)
    net.initialize(mx.init.Xavier())
    net(mx.nd.array(calib[:1]))
    gf.randomize_gluon(net, mrng, xavier=True)
    gf.calibrate_batchnorm(net, calib[:2], mrng)
    if hasattr(net, "dead_layers"):
        net.dead_layers()
    net.hybridize()
    return net


def export_and_run(case, case_dir, net, x):
    """Export, then outputs from the saved files (and the live block as a check)."""
    live = net(mx.nd.array(x))
    live = [o.asnumpy() for o in live] if isinstance(live, (list, tuple)) else [live.asnumpy()]
    net.export(os.path.join(case_dir, "model"), epoch=0)
    outs = gf.run_symbol_files(os.path.join(case_dir, gf.SYMBOL_FILE),
                               os.path.join(case_dir, gf.PARAMS_FILE), {"data": x})
    gf.check_close(case.name, outs, live, rtol=1e-3)
    return outs


def fp32_subgraph_builder(model):
    def build(case, case_dir, rng):
        mrng = np.random.RandomState(gf.seed_of("int8_" + model))
        calib = gf.smooth_images(mrng, (CALIB_IMAGES, 3, SIZE, SIZE))
        net = build_net(model, mrng, calib)
        x = gf.smooth_images(rng, (1, 3, SIZE, SIZE))
        net.optimize_for(mx.nd.array(x), backend="MKLDNN")
        outs = export_and_run(case, case_dir, net, x)
        return gf.finish_case(case, case_dir, {"data": x}, outs)
    return build


def int8_builder(model, dtype, calib_mode, positive=False):
    def build(case, case_dir, rng):
        mrng = np.random.RandomState(gf.seed_of("int8_" + model))
        calib = gf.smooth_images(mrng, (CALIB_IMAGES, 3, SIZE, SIZE))
        x = gf.smooth_images(rng, (1, 3, SIZE, SIZE))
        if positive:  # images as read from a camera: no negative input for the first quantize
            calib, x = np.abs(calib), np.abs(x)
        net = build_net(model, mrng, calib)
        qnet = quantization.quantize_net_v2(
            net, quantized_dtype=dtype, quantize_mode="full", exclude_layers=None,
            calib_data=mx.io.NDArrayIter(calib, batch_size=CALIB_IMAGES // 2),
            num_calib_examples=CALIB_IMAGES, calib_mode=calib_mode, ctx=mx.cpu(),
            logger=None)
        qnet.hybridize(static_alloc=True, static_shape=True)
        outs = export_and_run(case, case_dir, qnet, x)
        gf.check_classifier_output(case, outs[0], 1)
        return gf.finish_case(case, case_dir, {"data": x}, outs)
    return build


DETECTOR_SIZE = 128  # the smallest input whose every SSD-512 feature map is still 1x1 or more


def int8_detector_builder(model):
    """A GluonCV detector, seeded, quantized as GluonCV's int8 scripts do: the concat layers
    (the heads' joins and the anchors, whose calibrated range MXNet cannot quantize: it writes
    an infinite one) stay fp32, the backbone and the heads' convolutions run int8."""
    def build(case, case_dir, rng):
        import gluoncv  # only this case needs it
        mrng = np.random.RandomState(gf.seed_of("int8_" + model))
        calib = gf.smooth_images(mrng, (4, 3, DETECTOR_SIZE, DETECTOR_SIZE))
        x = gf.smooth_images(rng, (1, 3, DETECTOR_SIZE, DETECTOR_SIZE))
        net = gluoncv.model_zoo.get_model(model, pretrained=False, pretrained_base=False)
        net.initialize()
        net(mx.nd.array(calib[:1]))
        gf.randomize_gluon(net, mrng, xavier=True)
        gf.calibrate_batchnorm(net, calib[:2], mrng)
        # The heads' BatchNorms are not on calibrate_batchnorm's path and keep the random
        # variances, some negative: a NaN scale, which MXNet's int8 layer saturates.
        for name, param in net.collect_params().items():
            if name.endswith("_var"):
                param.set_data(mx.nd.abs(param.data()) + 0.1)
        net.hybridize()
        qnet = quantization.quantize_net_v2(
            net, quantized_dtype="auto", quantize_mode="full", exclude_layers=None,
            exclude_layers_match=["concat"],
            calib_data=mx.io.NDArrayIter(calib, batch_size=2), num_calib_examples=4,
            calib_mode="naive", ctx=mx.cpu(), logger=None)
        qnet.hybridize(static_alloc=True, static_shape=True)
        outs = export_and_run(case, case_dir, qnet, x)
        ids, scores = outs[0].ravel(), outs[1].ravel()
        found = ids >= 0
        if found.sum() < 2 or len(set(ids[found])) < 2 or np.ptp(scores[found]) <= 0:
            raise RuntimeError("%s: degenerate detections (%d found)" % (case.name, found.sum()))
        return gf.finish_case(case, case_dir, {"data": x}, outs)
    return build


def register():
    for model in ("small", "resnet18_v1"):
        gf.register("sg_%s_fp32" % model, "int8", "zoo", fp32_subgraph_builder(model),
                    note="%s, optimize_for(backend='MKLDNN'), %dx%d" % (model, SIZE, SIZE))
    variants = [("small", "auto", "naive", False), ("small", "int8", "naive", False),
                ("small", "uint8", "naive", True), ("small", "auto", "entropy", True),
                ("branches", "auto", "naive", False), ("branches", "auto", "entropy", True),
                ("mobilenetv2_1.0", "auto", "naive", False),
                ("resnet18_v1", "auto", "naive", False),
                ("resnet18_v1", "auto", "entropy", True),
                # ResNet v2's pre-activation BatchNorms: _contrib_quantized_batch_norm, on
                # int8 data and (the first one, on a non-negative input) on uint8 data
                ("resnet18_v2", "auto", "naive", True),
                # MobileNetV3's hard swish: _contrib_quantized_elemwise_mul.  int8 only: with
                # auto or uint8 one factor is uint8, which MXNet 1.9.1 reads as int8 (it logs
                # an error and gives wrong products)
                ("mobilenetv3_large", "int8", "naive", False),
                # both ops small, for entropy calibration (slow on the zoo nets)
                ("preact", "int8", "naive", False), ("preact", "int8", "entropy", False),
                # YOLOv3's unfused residual adds: _contrib_quantized_elemwise_add
                ("residual", "auto", "naive", False), ("residual", "auto", "entropy", True),
                ("residual", "int8", "naive", False),
                # calibrated ranges of [0, 0]: layers dead on the calibration images
                ("dead", "auto", "naive", False), ("dead", "int8", "naive", False),
                # depthwise convolutions with a residual, and of 5x5 stride 2
                ("depthwise", "auto", "naive", False), ("depthwise", "int8", "naive", False)]
    for model, dtype, mode, positive in variants:
        name = "int8_%s_%s_%s%s" % (model, dtype, mode, "_positive" if positive else "")
        gf.register(name, "int8", "zoo", int8_builder(model, dtype, mode, positive),
                    note="%s, quantize_net_v2(quantized_dtype=%s, calib_mode=%s), %s input"
                    % (model, dtype, mode, "non-negative" if positive else "signed"))
    detector = "ssd_512_mobilenet1.0_voc"
    gf.register("int8_" + detector, "int8", "zoo", int8_detector_builder(detector),
                note="%s, quantize_net_v2 without its concat layers, %dx%d"
                % (detector, DETECTOR_SIZE, DETECTOR_SIZE))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output directory (one sub-directory per case)")
    ap.add_argument("--only", help="only cases whose name contains one of these "
                    "comma-separated substrings (a test that needs a few cases asks for them "
                    "alone, not for the whole set)")
    ap.add_argument("--force", action="store_true", help="regenerate cached cases")
    ap.add_argument("--list", action="store_true", help="print the case names")
    ap.add_argument("--stamp", help="file to touch once every case is complete")
    args = ap.parse_args(argv)
    register()
    wanted = args.only.split(",") if args.only else [""]
    cases = [c for c in gf.CASES if any(w in c.name for w in wanted)]
    if args.list:
        print("\n".join(c.name for c in cases))
        return 0
    if not args.out:
        ap.error("--out is required")
    os.makedirs(args.out, exist_ok=True)
    failed = []
    for case in cases:
        t0 = time.time()
        try:
            # gf.generate caches only its zoo set; these cases are as slow, cache them too
            if not args.force and gf.case_complete(os.path.join(args.out, case.name)):
                status = "cached"
            else:
                status = gf.generate(case, args.out, True)
        except Exception as err:
            failed.append(case.name)
            status = "FAILED: %s" % str(err).strip().splitlines()[0]
        print("%-48s %6.2fs  %s" % (case.name, time.time() - t0, status), flush=True)
    if failed:
        return 1
    if args.stamp:
        gf._atomic_write_text(args.stamp, "\n".join(c.name for c in cases) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
