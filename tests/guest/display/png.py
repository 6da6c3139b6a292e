#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""png: read QEMU's screendumps, name their colour, put two side by side.

The display tests and tools/demo use it; standard library only (zlib).

usage: png.py colour PNG...            print "PNG: NAME" per file
       png.py compose OUT LEFT RIGHT [LEFT_CAPTION RIGHT_CAPTION]
                                       OUT = LEFT and RIGHT at half size,
                                       side by side on grey, captioned
"""

import struct
import sys
import zlib

# kfdsync-kms's frame colours, by the names it prints.
PALETTE = {
    "blue": (0, 0, 255), "green": (0, 255, 0), "red": (255, 0, 0),
    "yellow": (255, 255, 0), "magenta": (255, 0, 255), "cyan": (0, 255, 255),
}


def read(path):
    """(width, height, rows) with rows[y][x] = (r, g, b); 8-bit RGB/RGBA only."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    if ihdr is None:
        raise ValueError(f"{path}: no IHDR")
    width, height, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"{path}: unsupported PNG (depth {depth}, type {ctype})")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):  # undo the row filter (PNG spec, section 9)
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xff
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xff
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xff
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def write(path, width, height, rows):
    """Write rows[y][x] = (r, g, b) as an 8-bit RGB PNG."""
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + \
            struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff)
    raw = b"".join(b"\0" + bytes(c for px in row for c in px) for row in rows)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(chunk(b"IEND", b""))


def screen_colour(path):
    """The palette colour at sample points away from the frame number, or why not."""
    try:
        w, h, rows = read(path)
    except (OSError, ValueError, zlib.error, struct.error) as e:
        return f"unreadable: {e}"
    names = set()
    for x, y in ((w // 2, h // 2), (3 * w // 4, 3 * h // 4), (w - 8, h - 8), (w // 4, 3 * h // 4)):
        px = rows[y][x]
        match = [n for n, c in PALETTE.items() if all(abs(a - b) <= 24 for a, b in zip(px, c))]
        names.add(match[0] if match else f"rgb{px}")
    return names.pop() if len(names) == 1 else f"mixed {sorted(names)}"


# A 5x7 font for captions: the characters they use.
FONT = {
    "A": "01110 10001 10001 11111 10001 10001 10001",
    "C": "01110 10001 10000 10000 10000 10001 01110",
    "D": "11110 10001 10001 10001 10001 10001 11110",
    "E": "11111 10000 10000 11110 10000 10000 11111",
    "F": "11111 10000 10000 11110 10000 10000 10000",
    "G": "01110 10001 10000 10111 10001 10001 01111",
    "H": "10001 10001 10001 11111 10001 10001 10001",
    "I": "01110 00100 00100 00100 00100 00100 01110",
    "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001",
    "N": "10001 11001 10101 10011 10001 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110",
    "P": "11110 10001 10001 11110 10000 10000 10000",
    "R": "11110 10001 10001 11110 10100 10010 10001",
    "S": "01111 10000 10000 01110 00001 00001 11110",
    "T": "11111 00100 00100 00100 00100 00100 00100",
    "W": "10001 10001 10001 10101 10101 10101 01010",
    "0": "01110 10011 10101 10101 11001 10001 01110",
    "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00110 01000 10000 11111",
    "3": "11110 00001 00001 01110 00001 00001 11110",
    ":": "00000 01100 01100 00000 01100 01100 00000",
    " ": "00000 00000 00000 00000 00000 00000 00000",
}


def text(canvas, x, y, string, scale=2, colour=(255, 255, 255)):
    """Draw @string (characters of FONT) at (x, y)."""
    for ch in string.upper():
        for r, bits in enumerate(FONT.get(ch, FONT[" "]).split()):
            for c, bit in enumerate(bits):
                if bit == "1":
                    for dy in range(scale):
                        row = canvas[y + r * scale + dy]
                        row[x + c * scale:x + (c + 1) * scale] = [colour] * scale
        x += 6 * scale


def compose(out, left, right, left_caption="", right_caption="", gap=24):
    """LEFT and RIGHT at half size, side by side on grey, captions below."""
    imgs = [read(p) for p in (left, right)]
    halves = [(w // 2, h // 2, [row[::2][:w // 2] for row in rows[::2][:h // 2]])
              for w, h, rows in imgs]
    caption_h = 14 + gap if left_caption or right_caption else 0
    height = max(h for _, h, _ in halves) + 2 * gap + caption_h
    width = sum(w for w, _, _ in halves) + 3 * gap
    grey = (64, 64, 64)
    canvas = [[grey] * width for _ in range(height)]
    x0 = gap
    for (w, h, rows), caption in zip(halves, (left_caption, right_caption)):
        for y in range(h):
            canvas[gap + y][x0:x0 + w] = rows[y]
        if caption:
            text(canvas, x0, gap + h + gap // 2, caption)
        x0 += w + gap
    write(out, width, height, canvas)


def main(argv):
    if len(argv) >= 2 and argv[0] == "colour":
        for p in argv[1:]:
            print(f"{p}: {screen_colour(p)}")
        return 0
    if len(argv) in (4, 6) and argv[0] == "compose":
        compose(*argv[1:])
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
