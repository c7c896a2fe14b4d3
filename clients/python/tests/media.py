"""A real movie of any size, written a frame at a time: an AVI of uncompressed 24-bit frames
(a format the service's transcoder decodes), so a large upload needs no media tools here."""

from __future__ import annotations

import struct
from typing import BinaryIO


def _chunk(fourcc: bytes, payload: bytes) -> bytes:
    return fourcc + struct.pack("<I", len(payload)) + payload + (b"\0" if len(payload) % 2 else b"")


def _frame(width: int, height: int, n: int) -> bytes:
    """A moving diagonal gradient (rows are 4-byte aligned for these widths)."""
    row = bytearray(width * 3)
    for x in range(width):
        v = (x + n * 4) % 256
        row[3 * x : 3 * x + 3] = bytes((v, (v * 2) % 256, 255 - v))
    band = bytes(row)
    return b"".join(band[(y % 64) * 3 :] + band[: (y % 64) * 3] for y in range(height))


def write_avi(out: BinaryIO, min_bytes: int, width: int = 640, height: int = 360, fps: int = 25) -> int:
    """Writes an AVI of at least ``min_bytes`` to ``out``; returns its frame count. Memory: a frame."""
    frame_size = width * height * 3
    frames = -(-min_bytes // (frame_size + 8))
    stride = 25  # distinct frames, repeated: a second of motion, looped
    cache = [_frame(width, height, n) for n in range(stride)]
    avih = struct.pack(
        "<IIIIIIIIII4I",
        1_000_000 // fps, frame_size * fps, 0, 0x10, frames, 0, 1, frame_size, width, height, 0, 0, 0, 0,
    )
    strh = b"vids" + b"DIB " + struct.pack("<IHHIIIIIIIIhhhh", 0, 0, 0, 0, 1, fps, 0, frames, frame_size, 0xFFFFFFFF, 0, 0, 0, width, height)
    strf = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, frame_size, 0, 0, 0, 0)
    hdrl = b"hdrl" + _chunk(b"avih", avih) + b"LIST" + struct.pack("<I", 4 + 8 + len(strh) + 8 + len(strf)) + b"strl" + _chunk(b"strh", strh) + _chunk(b"strf", strf)
    movi_size = 4 + frames * (8 + frame_size)
    idx_size = 16 * frames
    riff_size = 4 + (8 + len(hdrl)) + (8 + movi_size) + (8 + idx_size)
    out.write(b"RIFF" + struct.pack("<I", riff_size) + b"AVI ")
    out.write(b"LIST" + struct.pack("<I", len(hdrl)) + hdrl)
    out.write(b"LIST" + struct.pack("<I", movi_size) + b"movi")
    head = b"00db" + struct.pack("<I", frame_size)
    for n in range(frames):
        out.write(head)
        out.write(cache[n % stride])
    out.write(b"idx1" + struct.pack("<I", idx_size))
    offset = 4
    entry = bytearray()
    for _ in range(frames):
        entry += b"00db" + struct.pack("<III", 0x10, offset, frame_size)
        offset += 8 + frame_size
        if len(entry) >= 65536:
            out.write(bytes(entry))
            entry = bytearray()
    out.write(bytes(entry))
    return frames
