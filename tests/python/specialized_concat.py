# One Python line that CPython 3.11's specializing interpreter runs through
# two places of _PyEval_EvalFrameDefault: the first few `+` go through the
# generic BINARY_OP, the rest through BINARY_OP_ADD_UNICODE once the
# instruction is specialized; both call PyUnicode_Concat, which mallocs the
# 2,000-odd-character result. Two recorded stacks, one source line: the
# report's site grouping must make them one site of 200 calls
# (tests/python/python_api_test.cpp).
kept = []


def join(i):
    kept.append(" " * 2000 + str(i))  # CONCAT


for i in range(200):
    join(i)
print(len(kept))
