#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Chart an `xnorcl-bench layers --json FILE` run: per layer, the binary convolution's time beside every
float32 baseline the run measured (CLBlast on the device, oneDNN on a CPU device's host) and a perfect float32
convolution at the measured FMA peak (medians, log scale). A `xnorcl-bench network --json FILE` run gets a
bar per step of the network instead (fused nodes are one step), binary and float steps told apart, and its
float32 twin's time in the title.

usage: tools/plot_bench.py bench.json [-o bench.png]
Needs matplotlib (Debian: python3-matplotlib); renders without a display (Agg). Run by a python3 without
matplotlib (a virtual environment first in PATH, say), it runs itself again with /usr/bin/python3, where
Debian's python3-matplotlib lives.
"""
import argparse
import json
import math
import os
import stat
import sys

SYSTEM_PYTHON = "/usr/bin/python3"


def import_pyplot():
    """matplotlib.pyplot with the Agg backend; re-runs this script with the system python3 if this one
    has no matplotlib, else exits with what to install."""
    try:
        import matplotlib
    except ImportError:
        retried = os.environ.get("XNORCL_PLOT_RETRIED") == "1"
        if not retried and os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON) and \
                os.access(SYSTEM_PYTHON, os.X_OK):
            os.environ["XNORCL_PLOT_RETRIED"] = "1"
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
        sys.exit(f"plot_bench.py: {sys.executable} has no matplotlib, nor has {SYSTEM_PYTHON}; install it "
                 "(Debian and Ubuntu: sudo apt install python3-matplotlib; elsewhere: pip install matplotlib)")
    matplotlib.use("Agg")  # no display on CI machines
    import matplotlib.pyplot as plt
    return plt


# The bench writes a few hundred kilobytes at most.
MAX_JSON_BYTES = 64 << 20


def file_kind(path):
    """None for a regular file or no file at all, else what is there ("a FIFO", "a directory", ...)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def load_run(path):
    """The bench's JSON, or an exit with a message that says what is wrong with the file."""
    kind = file_kind(path)
    if kind:  # a FIFO would be waited on forever, a device read without end
        sys.exit(f"plot_bench.py: cannot read {path}: it is {kind}, not a regular file")
    try:
        if os.path.getsize(path) > MAX_JSON_BYTES:
            sys.exit(f"plot_bench.py: {path} is larger than {MAX_JSON_BYTES >> 20} MiB: not a bench file")
        with open(path) as f:
            run = json.load(f)
    except OSError as e:
        sys.exit(f"plot_bench.py: cannot read {path}: {e.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        sys.exit(f"plot_bench.py: {path} is not JSON ({e}); give the file written by xnorcl-bench ... --json")
    if not isinstance(run, dict) or run.get("schema") != 1 or ("layers" not in run and "steps" not in run):
        found = run.get("schema") if isinstance(run, dict) else type(run).__name__
        sys.exit(f"plot_bench.py: {path} is not an xnorcl-bench schema 1 file (schema {found!r})")
    return run


def noise_note(run):
    """A title line for a run the bench judged noisy, else an empty string."""
    noise = run.get("noise") or {}
    return "\nNOISY RUN: the machine was busy, targets not judged" if noise.get("noisy") else ""


def median(stats):
    return stats["median"] if stats else None


def plot_graph(plt, run, output):
    """Per step of a graph run: median device time (ms, log scale), binary steps and float steps apart."""
    steps = run["steps"]
    names = [s["step"] if len(s["step"]) <= 40 else s["step"][:37] + "..." for s in steps]
    times = [s["device_median_ms"] if s["device_median_ms"] > 0 else float("nan") for s in steps]
    colors = ["tab:blue" if s["binary"] else "tab:orange" for s in steps]
    fig, ax = plt.subplots(figsize=(8, max(5, 0.22 * len(steps))))
    ax.barh(range(len(steps)), times, color=colors)
    ax.set_yticks(range(len(steps)))
    ax.set_yticklabels(names, fontsize=6)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("device time per step, ms (median, log scale)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in ("tab:blue", "tab:orange")]
    ax.legend(handles, ["binary step", "float step"], fontsize=8)
    ax.set_title(
        f"{run['model']}, batch {run['batch']}: xnorcl {run['library_version']} on {run['device']},\nvariant "
        f"{run['variant']}: device {run['device_median_ms']:.2f} ms, wall {run['wall_median_ms']:.2f} ms; perfect "
        f"float32 {run['perfect_float32_ms']:.2f} ms (ratio {run['device_over_perfect_float32']:.2f}); float32 twin "
        f"{run.get('float32_twin_device_median_ms', float('nan')):.2f} ms",
        fontsize=8,
    )
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(output, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="the file written by xnorcl-bench layers --json")
    parser.add_argument("-o", "--output", help="PNG to write (default: the JSON's name with .png)")
    args = parser.parse_args()

    run = load_run(args.json)
    output = args.output or (args.json[:-5] if args.json.endswith(".json") else args.json) + ".png"
    kind = file_kind(output)
    if kind:
        sys.exit(f"plot_bench.py: cannot write {output}: it is {kind}, not a regular file")
    plt = import_pyplot()
    if "steps" in run:
        plot_graph(plt, run, output)
        print(output)
        return

    names, binary, floating, onednn, perfect, marks = [], [], [], [], [], []
    for layer in run["layers"]:
        b = layer["binary"][0] if layer["binary"] else {}
        f = layer["float"]
        d = layer.get("onednn") or {}
        names.append(layer["name"])
        # binary_ms: the median device time the targets use (the wall median when there was no profiling).
        binary.append((b.get("binary_ms") or median(b.get("wall_ms"))) if b.get("status") == "ok" else None)
        floating.append(median(f.get("wall_ms")) if f.get("status") == "ok" else None)
        onednn.append(median(d.get("wall_ms")) if d.get("status") == "ok" else None)
        perfect.append(layer.get("perfect_float_ms"))
        # A wrong or failed binary result has no bar; the label says why.
        marks.append("" if b.get("status") == "ok" else f"\n({b.get('status', 'none')})")

    series = [
        ("binary xnorcl, pad_value %g (device time)" % run["settings"]["pad_value"], binary, "tab:blue"),
        ("float32 CLBlast Im2col+Gemm (wall time)", floating, "tab:orange"),
        ("float32 oneDNN on the host CPU (wall time)", onednn, "tab:green"),
        ("perfect float32 at the FMA peak", perfect, "tab:gray"),
    ]
    # Every baseline the run measured, and only those (oneDNN is measured on CPU devices only).
    series = series[:1] + [s for s in series[1:] if any(v is not None for v in s[1])]
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(8, 1.4 * len(names)), 5))
    for i, (label, values, color) in enumerate(series):
        xs = [k + (i - (len(series) - 1) / 2) * width for k in range(len(names))]
        heights = [v if v is not None and v > 0 and math.isfinite(v) else float("nan") for v in values]
        bars = ax.bar(xs, heights, width, label=label, color=color)
        for bar, v in zip(bars, heights):
            if math.isfinite(v):
                ax.annotate(f"{v:.3g}", (bar.get_x() + bar.get_width() / 2, v), ha="center", va="bottom",
                            fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("time per layer, ms (median, log scale)")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([n + m for n, m in zip(names, marks)], rotation=20, ha="right", fontsize=8)
    peak = run["peak"]
    ax.set_title(
        f"xnorcl {run['library_version']} on {run['device']}\nvariant {run['variant']}, "
        f"xor-popcount peak {peak['binary_gops_per_s']:.0f} G binMAC/s, "
        f"FMA peak {peak['float_gflops_per_s']:.0f} GFLOP/s, {run['settings']['reps']} reps{noise_note(run)}",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    print(output)


if __name__ == "__main__":
    main()
