# SPDX-License-Identifier: Apache-2.0
"""Threads: each thread runs its own layer, all at once, and every result is bitwise the reference; one layer
shared by several threads takes turns and stays right. The GIL is released while the device works, so this
is real concurrency on the device's queue."""

import threading

import numpy as np

import xnorcl


def make_layer(runtime, seed):
    rng = np.random.default_rng(seed)
    c, o = int(rng.integers(1, 40)), int(rng.integers(1, 40))
    x = rng.integers(0, 2, size=(1, c, 12, 11)).astype(np.float32)
    bits = rng.integers(0, 256, size=(o * c * 9 + 7) // 8, dtype=np.uint8)
    attrs = dict(pads_begin=(1, 1), pads_end=(1, 1), pad_value=float(rng.choice([0.0, -1.0])))
    conv = xnorcl.BinaryConvolution(runtime, x.shape, bits, (o, c, 3, 3), **attrs)
    return conv, x, xnorcl.reference_binary_convolution(x, bits, (o, c, 3, 3), **attrs)


def run_threads(target, count):
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as e:  # reported below, with the thread that raised it
            errors.append((i, e))

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_each_thread_runs_its_own_layer(runtime):
    layers = [make_layer(runtime, seed) for seed in range(8)]
    mismatches = []

    def work(i):
        conv, x, reference = layers[i]
        for _ in range(25):
            if conv.run(x).tobytes() != reference.tobytes():
                mismatches.append(i)

    run_threads(work, len(layers))
    assert mismatches == []


def test_threads_share_one_layer(runtime):
    conv, x, reference = make_layer(runtime, 99)
    results = []

    def work(_):
        for _ in range(25):
            results.append(conv.run(x).tobytes() == reference.tobytes())

    run_threads(work, 6)
    assert len(results) == 150 and all(results)
