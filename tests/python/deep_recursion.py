# Recursion deep enough that CPython 3.11 maps new frame-stack chunks and
# unmaps them on the way back (munmap while the current frame still points
# into the chunk): the recorder must not read the frame chain then.
def down(n):
    if n == 0:
        return bytearray(1000)
    return down(n - 1)


for _ in range(3):
    down(900)
print("ok")
