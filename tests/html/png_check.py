"""Screenshot check of the HTML report browser tests: decodes a PNG (8-bit RGB or RGBA, not
interlaced) with the standard library only and fails when it is blank.

Usage: python3 png_check.py SHOT.png [LABEL]  (exit 1 when under 1 % of the pixels are not white)
"""
import struct
import sys
import zlib


def nonwhite_share(path):
    """Returns (width, height, share of pixels with a channel below 240)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    nonwhite = 0
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp):
            if line[x] < 240 or line[x + 1] < 240 or line[x + 2] < 240:
                nonwhite += 1
        prev = line
    return w, h, nonwhite / (w * h)


if __name__ == "__main__":
    w, h, share = nonwhite_share(sys.argv[1])
    label = sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]
    print(f"{label}: screenshot {w}x{h}, {100 * share:.1f}% non-white")
    if share <= 0.01:
        sys.exit(f"{label}: screenshot is blank")
