# A native block that outlives the interpreter: 123,457 bytes from libc's
# malloc through ctypes, never freed, asked for two Python calls deep
# (keep_native <- outer <- <module>). Python's own objects are freed when
# it finalizes; this block is still there at the exit scan, so its site is
# a row of the GUI's Leaks view (tests/gui/leaks_model_test.cpp).
import ctypes

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]


def keep_native(size):
    return libc.malloc(size)  # KEEP_NATIVE


def outer():
    return keep_native(123457)  # OUTER_CALL


block = outer()  # MODULE_CALL
print("ok")
