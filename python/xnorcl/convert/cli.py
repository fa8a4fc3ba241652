# SPDX-License-Identifier: Apache-2.0
"""xnorcl-convert MODEL -o OUT.xnn: the console script of xnorcl.convert."""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from .._xnorcl import Error
from . import convert, formats_text


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="xnorcl-convert",
        description="Converts a model into an xnorcl network file (.xnn).",
        epilog="formats:\n" + formats_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("model", nargs="?", help="the model file (its format by suffix)")
    parser.add_argument("-o", "--output", help="the .xnn file to write")
    parser.add_argument("--list-formats", action="store_true", help="list the formats and exit")
    args = parser.parse_args(argv)
    if args.list_formats:
        print(formats_text())
        return 0
    if not args.model or not args.output:
        parser.error("MODEL and -o OUT.xnn are required")
    try:
        report = convert(args.model, args.output)
    except Error as e:
        print(f"xnorcl-convert: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # writing the output (a full disk, a folder that vanished): one line, no traceback
        print(f"xnorcl-convert: {args.output}: cannot write it: {e.strerror or e}", file=sys.stderr)
        return 1
    for key, value in report.items():
        if isinstance(value, dict) and value:
            print(f"{key}:")
            for k, v in value.items():
                print(f"  {k}: {v}")
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            print(f"{key}:")
            for v in value:
                print(f"  {v}")
        else:
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
