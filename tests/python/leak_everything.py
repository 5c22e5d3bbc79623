#!/usr/bin/python3
# Issue 27's "leak-everything" script: it leaks a block of every size so
# that any stray word of the process -- an integer, a stale address -- lands
# in a leak, and makes it read "possibly lost" where Valgrind says
# "definitely lost". 1,756 blocks of 16 B to 19,920 B from libc's malloc
# (they fill every hole of the brk heap) and 5 of 128 KiB to 512 KiB (glibc
# maps those, where mappings made and unmapped earlier lay). Every one of
# them is a direct leak; scripts/leak-stress runs it traced many times and
# keeps the scan's words of every run that read one otherwise.
import ctypes

libc = ctypes.CDLL(None)
libc.malloc.restype = None  # the address lives in no Python int
libc.malloc.argtypes = [ctypes.c_size_t]
for size in range(16, 8192, 8):
    libc.malloc(size)
for size in range(8192, 19921, 16):
    libc.malloc(size)
for size in (128 << 10, 160 << 10, 196 << 10, 256 << 10, 512 << 10):
    libc.malloc(size)
