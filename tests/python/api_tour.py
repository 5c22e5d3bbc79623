# Every call of the `memtrail` module once, traced or not; prints whether it
# is traced so the test can tell the two runs apart.
import memtrail

memtrail.mark("start")
with memtrail.scope("epoch"):
    data = [bytearray(100) for _ in range(3)]


@memtrail.iteration("batch")
def one_batch(i):
    return bytearray(64 + i)


for i in range(4):
    one_batch(i)
with memtrail.paused():
    hidden = bytearray(1 << 20)  # not in the trace
memtrail.pause()
memtrail.resume()
memtrail.mark("end")
print("tracing" if memtrail.tracing() else "not tracing")
