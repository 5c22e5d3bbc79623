# Python frames between native ones: a 123,457-byte bytearray made two
# Python calls deep (make_buffer <- outer <- <module>), kept to the end of
# the loop, and a loop "step" that keeps one 5,000-byte block per step from
# grow_one. The test reads report, check and export for these lines.
import memtrail


def make_buffer(size):
    return bytearray(size)  # MAKE_BUFFER


def outer():
    return make_buffer(123457)  # OUTER_CALL


kept = []


def grow_one():
    kept.append(bytearray(5000))  # GROW_ONE


big = outer()
for step in range(20):
    with memtrail.iteration("step"):
        grow_one()
print(len(big), len(kept))
