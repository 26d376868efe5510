"""Every numba setting of treekit lives here, and only kernel modules import this module.

Importing ``treekit_core`` does not import numba (numba alone costs about half a second):
kernel modules are imported the first time a tree is fitted or evaluated.

The criterion ABI
-----------------
A criterion's impurity is a plain Python function with the signature::

    impurity(statistics: float64[::1], total_weight: float64, params: float64[::1]) -> float64

``statistics`` are the weighted sums of the evidence rows of a node (length K),
``total_weight`` is the node's weight and ``params`` the criterion's parameters as a
runtime array (so changing a parameter never recompiles anything).

Kernels receive the compiled impurity as a first-class function value of type
``IMPURITY_TYPE``. We chose this over passing the dispatcher as a plain argument: a
dispatcher argument specialises the kernel per criterion and its on-disk cache never
hits across processes (numba issues #2956, #6264), whereas a kernel with an explicit
``FunctionType`` signature compiles once for every criterion and is loaded from the cache
by every later process. The price is an indirect call (no inlining); benchmarks/README.md
has the figures.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading

import numba
import numpy as np
from numba import types

from treekit_core.compile_errors import compile_failure, is_compile_failure
from treekit_core.kernels.first_compile import install_listener

#: Options every treekit kernel is compiled with. cache=True writes machine code next to
#: the source (or to NUMBA_CACHE_DIR) so a new process does not compile again.
JIT_OPTIONS = {"cache": True, "nogil": True}

# Short names of the numba types in kernel signatures.
f8 = types.float64
i8 = types.int64
F1 = types.float64[::1]
F2C = types.float64[:, ::1]
F2A = types.Array(types.float64, 2, "A")
I1 = types.int64[::1]

IMPURITY_SIGNATURE = types.float64(types.float64[::1], types.float64, types.float64[::1])
IMPURITY_TYPE = types.FunctionType(IMPURITY_SIGNATURE)

JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")

#: The most statistics a kernel keeps in :func:`stack_scratch` arrays; a node with more
#: (a classification with more classes) takes heap arrays.
STACK_STATS = 64


#: How many floats :func:`add_lanes` adds at once: an SSE and an AVX register's float64 lanes.
LANE_COUNTS = (2, 4)


if JIT_DISABLED:

    def stack_scratch(count):
        """Python's :func:`stack_scratch` (``NUMBA_DISABLE_JIT``): a heap array."""
        return np.empty(count)

    def prefetch(array, index):
        """Python's :func:`prefetch` (``NUMBA_DISABLE_JIT``): nothing to do."""

    def add_lanes(run, at, values):
        """Python's :func:`add_lanes` (``NUMBA_DISABLE_JIT``): one add after another."""
        for lane, value in enumerate(values):
            run[int(at) + lane] += value

    def as_float64(bits):
        """Python's :func:`as_float64` (``NUMBA_DISABLE_JIT``): numpy's view."""
        return np.int64(bits).view(np.float64)

    def as_int64(value):
        """Python's :func:`as_int64` (``NUMBA_DISABLE_JIT``): numpy's view."""
        return np.float64(value).view(np.int64)

else:
    from llvmlite import ir
    from numba.core import cgutils
    from numba.extending import intrinsic
    from numba.np.arrayobj import populate_array

    @intrinsic
    def stack_scratch(typingctx, count):
        """A float64 array of ``count`` <= :data:`STACK_STATS` elements in the stack frame
        of the compiled function it is inlined into, for running sums a kernel writes at
        every row. Why: LLVM must assume that a heap array may share memory with any other
        array, so every store to heap sums made it reload what the loop reads; memory on
        the stack that is never handed out cannot be shared, and a threshold sweep with its
        sums there takes 14% less time (benchmarks/README.md). Valid while that function
        runs: never return it or store it anywhere."""
        array_type = types.Array(types.float64, 1, "C")

        def codegen(context, builder, signature, args):
            # one slot of the largest size per call site, in the function's entry block
            data = cgutils.alloca_once(builder, ir.DoubleType(), size=STACK_STATS)
            array = context.make_array(array_type)(context, builder)
            itemsize = context.get_constant(types.intp, 8)
            populate_array(
                array,
                data=data,
                shape=[args[0]],
                strides=[itemsize],
                itemsize=itemsize,
                meminfo=None,
            )
            return array._getvalue()

        return array_type(types.int64), codegen

    @intrinsic
    def prefetch(typingctx, array, index):
        """Ask the processor to bring ``array[index]`` (a 1-D array) into its caches, to be
        read soon (LLVM's ``llvm.prefetch``). It reads nothing and changes nothing the
        program computes; an index outside the array faults nothing (a hint the processor
        may drop). Why: a histogram reads each of a node's rows from tables far larger
        than the caches, at rows the processor's own prefetcher cannot guess once the node
        holds a fraction of them; asking 16 rows ahead took 15% off a boosting fit's
        histogram builds (benchmarks/README.md). Where the rows are dense it costs more
        than it saves."""
        if not (isinstance(array, types.Array) and array.ndim == 1):
            return None  # numba then refuses the call, naming the argument types
        if not isinstance(index, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            array_type, index_type = signature.args
            data = context.make_array(array_type)(context, builder, args[0])
            position = context.cast(builder, args[1], index_type, types.intp)
            address = cgutils.get_item_pointer(
                context, builder, array_type, data, [position], wraparound=False
            )
            byte_pointer = ir.IntType(8).as_pointer()
            int32 = ir.IntType(32)
            function = cgutils.get_or_insert_function(
                builder.module,
                ir.FunctionType(ir.VoidType(), [byte_pointer, int32, int32, int32]),
                "llvm.prefetch.p0i8",
            )
            read, every_cache_level, data_cache = 0, 3, 1
            builder.call(
                function,
                [
                    builder.bitcast(address, byte_pointer),
                    ir.Constant(int32, read),
                    ir.Constant(int32, every_cache_level),
                    ir.Constant(int32, data_cache),
                ],
            )
            return context.get_dummy_value()

        return types.void(array, index), codegen

    @intrinsic
    def as_float64(typingctx, bits):
        """The double whose IEEE bits are the int64 ``bits`` (LLVM's bitcast: no
        instruction, so a loop that reinterprets stays one vector). Why: an exponent's
        bits make a power of two, and a double's bits give its exponent, without the
        C library (kernels/elementary.py)."""
        if bits != types.int64:
            return None  # numba then refuses the call, naming the argument type

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.DoubleType())

        return types.float64(types.int64), codegen

    @intrinsic
    def as_int64(typingctx, value):
        """The int64 holding the IEEE bits of the double ``value`` (LLVM's bitcast; see
        :func:`as_float64`)."""
        if value != types.float64:
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.IntType(64))

        return types.int64(types.float64), codegen

    @intrinsic
    def add_lanes(typingctx, run, at, values):
        """``run[at + i] += values[i]`` for each i, as one vector load, add and store
        (``values``: a tuple of 2 or 4 floats of any width; ``run``: a 1-D contiguous float64 array;
        ``at`` is not checked against its length, as numba checks no index). Each lane
        is the IEEE sum a scalar add gives, so the bits are the same. Why: a histogram
        bin's count and sums are updated at every row of every feature, and the
        processor retires about one store a cycle: a bin of count and one sum as one
        16-byte store, a bin of count and two sums padded to four lanes as one 32-byte
        store, took a histogram pass from 0.74 to 0.54 ns a value, and from 1.17 to
        0.79 ns (benchmarks/README.md); LLVM does not merge the scalar adds itself."""
        array_ok = (
            isinstance(run, types.Array)
            and run.ndim == 1
            and run.layout == "C"
            and run.dtype == types.float64
        )
        tuple_ok = (
            isinstance(values, types.BaseTuple)
            and len(values.types) in LANE_COUNTS
            and all(isinstance(lane, types.Float) for lane in values.types)
        )
        if not (array_ok and tuple_ok and isinstance(at, types.Integer)):
            return None  # numba then refuses the call, naming the argument types

        def codegen(context, builder, signature, args):
            run_type, at_type, values_type = signature.args
            data = context.make_array(run_type)(context, builder, args[0])
            position = context.cast(builder, args[1], at_type, types.intp)
            address = cgutils.get_item_pointer(
                context, builder, run_type, data, [position], wraparound=False
            )
            lanes = values_type.types
            vector_type = ir.VectorType(ir.DoubleType(), len(lanes))
            pointer = builder.bitcast(address, vector_type.as_pointer())
            added = ir.Constant(vector_type, ir.Undefined)
            for lane, lane_type in enumerate(lanes):
                value = builder.extract_value(args[2], lane)
                value = context.cast(builder, value, lane_type, types.float64)
                added = builder.insert_element(added, value, ir.Constant(ir.IntType(32), lane))
            element_alignment = 8  # a float64 array's: a vector may straddle 16 or 32 bytes
            current = builder.load(pointer, align=element_alignment)
            builder.store(builder.fadd(current, added), pointer, align=element_alignment)
            return context.get_dummy_value()

        return types.void(run, at, values), codegen


def generic_jit(function):
    """Compile a kernel body that entry points specialise: no signature (numba compiles it
    for the types of each caller, including a criterion passed as a dispatcher, which it
    then inlines) and no cache of its own (the calling entry point's cache holds its
    machine code). Inlined into its callers before type inference (``inline="always"``):
    numba then runs one compile pipeline per entry point instead of one per callee, each
    with its own wrappers and LLVM module, which takes a fifth off a cold first fit
    (benchmarks/README.md) and leaves the machine code as fast (LLVM inlined these small
    kernels anyway). Called from Python, such a kernel compiles as any other."""
    return numba.njit(nogil=True, inline="always")(function)


def python_function(kernel):
    """The plain Python function behind a kernel (the kernel itself without the JIT)."""
    return getattr(kernel, "py_func", kernel)


install_listener()  # this module is imported when kernels are first needed


#: One lock for everything that builds or compiles kernels in this process. Re-entrant,
#: since a cached builder may call another (a specialised module asks for its impurity).
#: numba holds its own compiler lock while it compiles; this one keeps two threads from
#: both building a wrapper around the same dispatcher (issue 33: one wrapper compiled and
#: disabled compilation, the other then failed for good).
KERNEL_LOCK = threading.RLock()


def once_per_process(builder):
    """``functools.cache`` for functions that build or compile kernels, safe under threads:
    the first call with given arguments runs under :data:`KERNEL_LOCK`, so concurrent first
    fits get one result (one wrapper per kernel) instead of one each. A later call returns
    the stored result without waiting for a compile of something else."""
    results: dict = {}

    @functools.wraps(builder)
    def wrapper(*args):
        try:
            return results[args]
        except KeyError:
            pass
        with KERNEL_LOCK:
            if args not in results:
                results[args] = builder(*args)
            return results[args]

    wrapper.cache_clear = results.clear
    return wrapper


def jit(signature=None, **options):
    """Decorator compiling a kernel with treekit's options (and an optional signature):
    numba's ``njit``, with the on-disk cache loading as :func:`load_without_registries`
    says (a signature compiles, or loads, at decoration as with ``njit``)."""
    merged = {**JIT_OPTIONS, **options}
    if inspect.isfunction(signature):  # ``@jit`` without parentheses, as ``numba.njit``
        return jit(**options)(signature)

    def decorate(function):
        dispatcher = numba.njit(**merged)(function)
        if JIT_DISABLED:
            return dispatcher
        if merged.get("cache"):
            load_without_registries(dispatcher)
        if signature is not None:
            from numba.core import typeinfer

            # as numba's decorator compiles a signature (a recursive kernel finds itself)
            with typeinfer.register_dispatcher(dispatcher):
                dispatcher.compile(signature)
            dispatcher.disable_compile()
        return dispatcher

    return decorate


def load_without_registries(dispatcher) -> None:
    """Make ``dispatcher`` load its machine code from numba's on-disk cache after starting
    only numba's runtime, not its compiler's registries. Why: numba's cache refreshes the
    target before every load, which imports the implementations of everything numba can
    compile (its linear algebra probes for BLAS by importing ``scipy.linalg``), 0.3 s of
    a warm process's first fit of 1.4 s (benchmarks/README.md); machine code that is
    already compiled needs only the runtime its allocations call and the C helpers numba
    installs when it starts. A compile (a cache miss, a new signature) still refreshes
    the target itself. Where numba's cache lacks the two members this relies on (another
    numba version), the dispatcher keeps numba's own loading."""
    if RuntimeOnlyCache is not None:
        dispatcher._cache = RuntimeOnlyCache(dispatcher.py_func)


#: numba's per-function disk cache loading as :func:`load_without_registries` says, or
#: None (no JIT, or a numba whose cache lacks the members it relies on).
RuntimeOnlyCache = None
if not JIT_DISABLED:
    from numba.core.caching import FunctionCache
    from numba.core.runtime import rtsys

    if hasattr(FunctionCache, "_load_overload") and hasattr(
        FunctionCache, "_guard_against_spurious_io_errors"
    ):

        class RuntimeOnlyCache(FunctionCache):
            """numba's per-function disk cache, whose load starts only numba's runtime
            (:func:`load_without_registries`)."""

            def load_overload(self, sig, target_context):
                rtsys.initialize(target_context)
                with self._guard_against_spurious_io_errors():
                    return self._load_overload(sig, target_context)
                return None  # the guard swallowed a spurious I/O error: compile instead


@once_per_process
def compile_impurity(function):
    """Compile a plain Python impurity function against the criterion ABI.

    The result is memoised per function object, and ``cache=True`` stores it on disk keyed
    by the function's source file, so a third-party criterion compiles once per machine; a
    function without a source file (typed at a prompt) compiles once per process.
    """
    if JIT_DISABLED:
        return function
    options = {} if source_file(function) else {"cache": False}
    try:
        return jit(IMPURITY_SIGNATURE, **options)(function)
    except Exception as exc:
        if is_compile_failure(exc):
            raise compile_failure(function, exc) from None
        raise


def source_file(function) -> str | None:
    """The file defining ``function``, or None (typed at a prompt, made by ``exec``): numba
    can cache, and treekit specialise, only functions defined in a file."""
    try:
        path = inspect.getsourcefile(function)
    except TypeError:
        return None
    return path if path and os.path.isfile(path) else None
