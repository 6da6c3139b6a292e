#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""pixel: read one pixel of a PNG (a compositor's capture), for the tests.

usage: pixel.py at PNG XFRAC YFRAC          print the pixel at (XFRAC*w, YFRAC*h) as rrggbb
       pixel.py is PNG XFRAC YFRAC RRGGBB   exit 0 if it is that colour, else 1
       pixel.py compose OUT LEFT RIGHT LEFT_CAPTION RIGHT_CAPTION

Positions are fractions of the image so one call fits any output size.
Uses tests/guest/display/png.py (standard library only).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "display"))
import png  # noqa: E402


def at(path, xf, yf):
    w, h, rows = png.read(path)
    x, y = min(int(float(xf) * w), w - 1), min(int(float(yf) * h), h - 1)
    return "%02x%02x%02x" % tuple(rows[y][x][:3])


def main(argv):
    if len(argv) == 4 and argv[0] == "at":
        print(at(*argv[1:]))
        return 0
    if len(argv) == 5 and argv[0] == "is":
        got = at(*argv[1:4])
        print(f"# {os.path.basename(argv[1])}: pixel at ({argv[2]}, {argv[3]}) is {got}, "
              f"want {argv[4].lower()}")
        return 0 if got == argv[4].lower() else 1
    if len(argv) == 6 and argv[0] == "compose":
        png.compose(*argv[1:])
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
