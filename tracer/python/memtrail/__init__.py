"""memtrail marks, scopes and loop iterations for Python programs.

    import memtrail

    for batch in loader:
        with memtrail.iteration("step"):   # one iteration of the loop "step"
            train_step(batch)

    $ memtrail run -o run.mtr -- python3 train.py
    $ memtrail check --iteration-mark step --max-scope-growth 0 run.mtr

Pure Python over memtrail's C API (memtrail/c_api.h) through ctypes. Under
`memtrail run` (which puts this package on PYTHONPATH) the calls reach the
recorder in libmemtrail.so, which the run's preload library brought into the
process; the module looks the functions up in the process itself, so it
never loads a library of its own. Anywhere else every call does nothing.
"""

import contextlib as _contextlib
import ctypes as _ctypes

__all__ = ["tracing", "mark", "scope", "iteration", "pause", "resume", "paused"]


def _find_recorder():
    """The C API's functions, or None when the recorder is not in the process."""
    try:
        process = _ctypes.CDLL(None)  # dlopen(NULL): the process's global scope
        version = process.memtrail_api_version
    except (OSError, AttributeError):
        return None
    version.restype = _ctypes.c_int
    version.argtypes = []
    if version() < 1:
        return None
    for name in ("memtrail_mark", "memtrail_scope_begin", "memtrail_scope_end",
                 "memtrail_iteration_begin", "memtrail_iteration_end"):
        fn = getattr(process, name)
        fn.argtypes = [_ctypes.c_char_p]
        fn.restype = None
    for name in ("memtrail_pause", "memtrail_resume"):
        fn = getattr(process, name)
        fn.argtypes = []
        fn.restype = None
    process.memtrail_tracing.argtypes = []
    process.memtrail_tracing.restype = _ctypes.c_int
    return process


_recorder = _find_recorder()


def _text(value):
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def tracing():
    """True while this process is being traced by memtrail."""
    return bool(_recorder is not None and _recorder.memtrail_tracing())


def mark(text):
    """Records a mark TEXT (report --from-mark / --to-mark / --iteration-mark)."""
    if _recorder is not None:
        _recorder.memtrail_mark(_text(text))


class _Bracket(_contextlib.ContextDecorator):
    """A context manager and decorator calling BEGIN(name) and END(name)."""

    def __init__(self, name, begin, end):
        self._name = _text(name)
        self._begin = getattr(_recorder, begin, None)
        self._end = getattr(_recorder, end, None)

    def __enter__(self):
        if self._begin is not None:
            self._begin(self._name)
        return self

    def __exit__(self, *exc):
        if self._end is not None:
            self._end(self._name)
        return False


class _Nothing:
    """What scope(), iteration() and paused() give outside a trace: one
    shared object whose `with` does nothing and whose decorator returns the
    function itself, so an untraced loop pays two empty method calls per
    iteration and a decorated function nothing (docs/BENCHMARKS.md)."""

    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, function):
        return function


_NOTHING = _Nothing()


def scope(name):
    """`with memtrail.scope("epoch"):` or `@memtrail.scope("epoch")`: a named
    scope, reported with the bytes its entries leave live."""
    if _recorder is None:
        return _NOTHING
    return _Bracket(name, "memtrail_scope_begin", "memtrail_scope_end")


def iteration(loop):
    """`with memtrail.iteration("step"):` or `@memtrail.iteration("step")`:
    one iteration of the loop LOOP. `memtrail report` shows the loop's growth
    per iteration and the sites that grow; `memtrail check --iteration-mark
    LOOP --max-scope-growth 0` fails a loop that keeps memory."""
    if _recorder is None:
        return _NOTHING
    return _Bracket(loop, "memtrail_iteration_begin", "memtrail_iteration_end")


def pause():
    """Stops recording new blocks, process-wide, until resume()."""
    if _recorder is not None:
        _recorder.memtrail_pause()


def resume():
    """Ends a pause()."""
    if _recorder is not None:
        _recorder.memtrail_resume()


@_contextlib.contextmanager
def _paused():
    pause()
    try:
        yield
    finally:
        resume()


def paused():
    """`with memtrail.paused():` records no new blocks inside."""
    return _NOTHING if _recorder is None else _paused()
