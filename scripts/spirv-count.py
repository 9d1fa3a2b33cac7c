#!/usr/bin/env python3
"""Instruction count of a SPIR-V binary (the `Op` lines `spirv-dis` would
print), read from the words themselves so that modules newer than the
system SPIRV-Tools still count. Used by scripts/size-table.sh."""
import struct
import sys

data = open(sys.argv[1], "rb").read()
if len(data) % 4 or len(data) < 20:
    sys.exit(f"{sys.argv[1]}: not a SPIR-V binary")
words = struct.unpack(f"<{len(data) // 4}I", data)
if words[0] != 0x07230203:
    sys.exit(f"{sys.argv[1]}: bad magic {words[0]:#x}")
at, count = 5, 0
while at < len(words):
    length = words[at] >> 16
    if length == 0:
        sys.exit(f"{sys.argv[1]}: zero-length instruction at word {at}")
    at += length
    count += 1
if at != len(words):
    sys.exit(f"{sys.argv[1]}: the last instruction runs past the end")
print(count)
