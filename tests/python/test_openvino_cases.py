# SPDX-License-Identifier: Apache-2.0
"""OpenVINO's published cases on both variants, both packed word sizes, both bit orders, packed and unpacked
filters, float32 and uint8 input: the exact published values, bitwise, and the host reference agrees."""

import numpy as np
import pytest

import xnorcl
from conftest import runtime_for
from openvino_cases import CASES, DERIVED

CASE_BY_ID = {c["id"]: c for c in CASES}


def lsb_first(msb_first_bytes):
    """The same bits with each byte's order reversed (element i in bit i % 8)."""
    return np.array([int(f"{b:08b}"[::-1], 2) for b in msb_first_bytes], dtype=np.uint8)


def filters(case):
    """(filter_bits, bit_order) in every form the API takes, all describing the case's filter."""
    msb = np.array(case["filter_bytes_msb_first"], dtype=np.uint8)
    n = int(np.prod(case["filter_shape"]))
    values = np.unpackbits(msb)[:n].reshape(case["filter_shape"])
    return [
        (msb, "msb"),
        (lsb_first(msb), "lsb"),
        (values.astype(np.uint8), "msb"),
        (values.astype(np.float32), "lsb"),  # values ignore the bit order
    ]


def attributes(case, pad_value=None):
    return dict(
        strides=case["strides"],
        pads_begin=case["pads_begin"],
        pads_end=case["pads_end"],
        dilations=case["dilations"],
        pad_value=case["pad_value"] if pad_value is None else pad_value,
    )



def check(case, expected_output, variant, word_bits, pad_value=None):
    rt = runtime_for(variant, word_bits)
    attrs = attributes(case, pad_value)
    for dtype in (np.float32, np.uint8):
        x = np.array(case["input"], dtype=dtype).reshape(case["input_shape"])
        for filter_bits, order in filters(case):
            conv = xnorcl.BinaryConvolution(
                rt, case["input_shape"], filter_bits, case["filter_shape"], bit_order=order, **attrs
            )
            assert conv.plan()["variant"] == variant
            assert conv.plan()["word_bits"] == word_bits
            y = conv.run(x)
            assert y.dtype == np.float32
            assert y.shape == tuple(conv.output_shape)
            assert y.flatten().tolist() == expected_output, (case["id"], dtype, order)
            reference = xnorcl.reference_binary_convolution(
                x, filter_bits, case["filter_shape"], bit_order=order, **attrs
            )
            assert reference.tobytes() == y.tobytes()


@pytest.mark.parametrize("word_bits", [32, 64])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"case{c['id']}")
def test_published_case(case, variant, word_bits):
    check(case, case["expected_output"], variant, word_bits)


@pytest.mark.parametrize("word_bits", [32, 64])
@pytest.mark.parametrize("derived", DERIVED, ids=lambda d: f"case{d['id']}_pad{d['pad_value']}")
def test_derived_case(derived, variant, word_bits):
    check(CASE_BY_ID[derived["id"]], derived["expected_output"], variant, word_bits, derived["pad_value"])


def test_the_cases_are_the_published_ones():
    # A guard against the data drifting: nine cases, and case 1's well-known output.
    assert [c["id"] for c in CASES] == list(range(1, 10))
    assert CASE_BY_ID[1]["expected_output"] == [1, 1, 3, -1]
