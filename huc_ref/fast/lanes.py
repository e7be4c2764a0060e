"""Vector instructions for the compiled kernels (:mod:`huc_ref.fast.kernels`), written in LLVM IR.

numba compiles the kernels' loops to scalar code where these steps are meant to be vector
instructions (LLVM does not vectorise them: loads through index arrays, selects that keep an old
value, stores of a block of rows).  Each helper here is a numba intrinsic, with the IEEE operations
of the scalar loop it replaces, in its order (never fused, ordered compares), and a plain-Python
twin used where numba is not installed:

* :func:`_sum_run`, :func:`_choose`, :func:`_meet`, :func:`_path_masses`, :func:`_path_means`,
  :func:`_emit_rows`, :func:`_emit_terms`: the steps of ``top1_path_terms`` (F.4, K.2) for
  :data:`LANES` rows at once;
* :func:`_lane_update`: one entry of an atom in ``rank_scan``'s state of a column (Algorithm 2,
  App. F.3), :data:`GROUP_LANES` subgroups at once;
* :func:`_prefetch`: ``llvm.prefetch``, asking for an atom's row before a scan in rank order reads it.

What they pay: ``python bench/kernels_against.py --against REV`` (``bench/fast_audit.py``'s K = 30
workload, n = 3 10^5, one thread, the two alternating in one run), with this module's helpers
against plain numba loops doing the same operations lane by lane (the sample pass 4.6-5.1x and
the scans 1.4-2.5x slower, three runs), and against no requests ahead (the scans 2.8-2.9x
slower), on the project's 2-vCPU Intel Xeon (family 6, model 167, AVX-512), where the same code
on both sides measured 0.85-1.09x.  Nothing here changes a result: ``bench/kernels_against.py``
checks that both give the same bits, and tests/test_fast.py property-tests the kernels against
numpy.
"""

from __future__ import annotations

import math

import numpy as np

try:
    import numba  # noqa: F401 - (COMPILED)
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic
except ImportError:  # pragma: no cover - the numba extra is not installed
    numba = None

#: Whether numba compiles the kernels (the ``numba`` extra is installed).
COMPILED = numba is not None

#: Rows processed together by ``top1_path_terms``: the cut sums of a block of rows are
#: kept transposed (one row of ``LANES`` numbers per node), so every sum is a vector operation.
LANES = 16

#: Subgroups ``rank_scan`` updates together: one vector of float64 (one AVX-512 register, two
#: AVX2 ones; LLVM lowers it to what the machine has).
GROUP_LANES = 8


def _sum_run_python(buf, a, s, count):  # pragma: no cover - the plain-Python twin of the intrinsic
    acc = buf[s].copy()
    for t in range(s + 1, s + count):
        acc += buf[t]
    buf[a] = acc


def _choose_python(buf, rows, lo, hi, rel, pick, close, largest):  # pragma: no cover - the plain-Python twin
    top, second = buf[rows[lo]].copy(), np.full(LANES, -np.inf)
    pick[:] = lo
    for a in range(lo + 1, hi):
        x = buf[rows[a]]
        up = x > top
        second = np.where(up, top, np.where(x > second, x, second))
        top, pick[:] = np.where(up, x, top), np.where(up, a, pick)
    largest[:] = top
    close[:] = 1 + (second >= top - rel * (top + second))


def _meet_python(agree, at, width, labels, pick, meet):  # pragma: no cover - the plain-Python twin
    meet[:] = agree[at + labels * width + pick].astype(np.int64) + 1


def _path_masses_python(buf, prow, h, pis):  # pragma: no cover - the plain-Python twin
    for k in range(h + 1):
        p = buf[prow[k], np.arange(LANES)]
        pis[k] = np.where(p > 0, p, 1.0)


def _path_means_python(pis, pia, meet, d, mu):  # pragma: no cover - the plain-Python twin
    for k in range(d + 1):
        mu[k] = np.where(k < meet, pia / pis[k], 0.0)


def _emit_rows_python(mu, meet, d, scale, score, residual, error, row, col):  # pragma: no cover - twin
    score[row, col:col + LANES] = mu[0]
    residual[row, col:col + LANES] = np.where(meet > d, 1.0, 0.0) - mu[0]
    error[row, col:col + LANES] = scale * mu[0]


def _emit_terms_python(mu, terms, at, ks, D):  # pragma: no cover - the plain-Python twin
    for t in range(D):
        terms[at + t:at + t + LANES * D:D] = mu[ks[t] + 1] - mu[ks[t]]


if COMPILED:
    _F64, _I64, _I32 = ir.DoubleType(), ir.IntType(64), ir.IntType(32)
    _VEC, _IVEC = ir.VectorType(_F64, LANES), ir.VectorType(_I64, LANES)

    def _splat(builder, x, kind):
        """The vector of ``kind`` with ``x`` in every lane (of however many it has)."""
        out = ir.Constant(kind, ir.Undefined)
        for lane in range(kind.count):
            out = builder.insert_element(out, x, ir.Constant(_I32, lane))
        return out

    def _item_at(context, builder, kind, value, indices):
        """A pointer to ``arr[indices]`` of the array ``value`` of numba type ``kind`` (any layout)."""
        ary = context.make_array(kind)(context, builder, value)
        return cgutils.get_item_pointer2(context, builder, ary.data, cgutils.unpack_tuple(builder, ary.shape),
                                         cgutils.unpack_tuple(builder, ary.strides), kind.layout, indices)

    def _lanes_at(builder, data, row, kind):
        """A pointer to row ``row`` of a C-contiguous ``(rows, LANES)`` array whose data is ``data``,
        as one vector of ``kind``."""
        at = builder.gep(data, [builder.mul(row, ir.Constant(row.type, LANES))], inbounds=True)
        return builder.bitcast(at, kind.as_pointer())

    def _data(context, builder, kind, value):
        return context.make_array(kind)(context, builder, value).data

    def _gather(builder, data, where, kind, widen=None):
        """The vector of ``kind`` whose lane ``k`` is ``data[where[k]]`` (``where``: a vector of
        ``LANES`` indices; each element passed through ``widen`` first, if given): ``LANES`` loads."""
        out = ir.Constant(kind, ir.Undefined)
        for lane in range(LANES):
            c = ir.Constant(_I32, lane)
            x = builder.load(builder.gep(data, [builder.extract_element(where, c)], inbounds=True))
            out = builder.insert_element(out, x if widen is None else widen(x), c)
        return out

    @intrinsic
    def _sum_run(typingctx, buf, a, s, count):  # pragma: no cover - compiled
        """``buf[a] = buf[s] + buf[s + 1] + ... + buf[s + count - 1]``, added left to right, lane by
        lane, in vector instructions: the same IEEE additions, in the same order, as the scalar loop
        (rows of a C-contiguous ``(rows, LANES)`` array; ``count >= 1``)."""
        sig = types.void(buf, types.intp, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            b, a_, s_, count_ = args
            data = _data(context, builder, signature.args[0], b)
            acc = cgutils.alloca_once(builder, _VEC)
            builder.store(builder.load(_lanes_at(builder, data, s_, _VEC), align=8), acc)
            with cgutils.for_range(builder, builder.add(s_, count_), start=builder.add(s_, ir.Constant(s_.type, 1))) \
                    as loop:
                x = builder.load(_lanes_at(builder, data, loop.index, _VEC), align=8)
                builder.store(builder.fadd(builder.load(acc), x), acc)
            builder.store(builder.load(acc), _lanes_at(builder, data, a_, _VEC), align=8)
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def _choose(typingctx, buf, rows, lo, hi, rel, pick, close, largest):  # pragma: no cover - compiled
        """K.2's top-1 choice among the candidates ``a = lo .. hi - 1`` (rows ``rows[a]`` of ``buf``, a
        C-contiguous ``(rows, LANES)`` array), lane by lane in vector instructions, in one pass:
        ``pick``, the first candidate of largest mass, and ``largest``, that mass ``top`` (one of the
        candidates' own numbers: the chosen one's); ``close``, 2 where another candidate ``x`` is
        within the relative error bound ``rel`` of it (``x >= top - rel (top + x)``), else 1.  That
        bound falls as ``x`` rises (each rounding is monotone), so some other candidate is within it
        exactly when the largest of the others, ``second``, is: the pass keeps ``top`` and
        ``second``.  The scalar loop's ordered compares, multiply and additions, never fused (rows
        without NaN)."""
        sig = types.void(buf, rows, types.intp, types.intp, types.float64, pick, close, largest)

        def codegen(context, builder, signature, args):
            b, r, lo_, hi_, rel_, pick_, close_, largest_ = args
            data, at = _data(context, builder, signature.args[0], b), _data(context, builder, signature.args[1], r)

            def row(a):
                return builder.load(_lanes_at(builder, data, builder.load(builder.gep(at, [a], inbounds=True)), _VEC),
                                    align=8)
            top, second = cgutils.alloca_once(builder, _VEC), cgutils.alloca_once(builder, _VEC)
            chosen = cgutils.alloca_once(builder, _IVEC)
            builder.store(row(lo_), top)
            builder.store(ir.Constant(_VEC, [-math.inf] * LANES), second)
            builder.store(_splat(builder, lo_, _IVEC), chosen)
            with cgutils.for_range(builder, hi_, start=builder.add(lo_, ir.Constant(lo_.type, 1))) as loop:
                x, t, u = row(loop.index), builder.load(top), builder.load(second)
                up = builder.fcmp_ordered(">", x, t)
                builder.store(builder.select(up, t, builder.select(builder.fcmp_ordered(">", x, u), x, u)), second)
                builder.store(builder.select(up, x, t), top)
                builder.store(builder.select(up, _splat(builder, loop.index, _IVEC), builder.load(chosen)), chosen)
            t, u, rel_v = builder.load(top), builder.load(second), _splat(builder, rel_, _VEC)
            within = builder.fcmp_ordered(">=", u, builder.fsub(t, builder.fmul(rel_v, builder.fadd(t, u))))
            near = builder.add(_splat(builder, ir.Constant(_I64, 1), _IVEC), builder.zext(within, _IVEC))
            for value, out, k in ((t, largest_, 7), (builder.load(chosen), pick_, 5), (near, close_, 6)):
                builder.store(value, builder.bitcast(_data(context, builder, signature.args[k], out),
                                                     value.type.as_pointer()), align=8)
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def _meet(typingctx, agree, at, width, labels, pick, meet):  # pragma: no cover - compiled
        """How many of the label's path nodes contain the chosen candidate, for ``LANES`` rows at
        once: ``meet[lane] = agree[at + labels[lane] width + pick[lane]] + 1`` (a table of
        :meth:`huc_ref.fast.FastTree.agreement`, K.2's top-1 terms), the indices and the result
        vectors (one store the path means read back whole, not ``LANES`` of them)."""
        sig = types.void(agree, types.intp, types.intp, labels, pick, meet)

        def codegen(context, builder, signature, args):
            agree_, at_, width_, labels_, pick_, meet_ = args
            kinds = signature.args
            table = _data(context, builder, kinds[0], agree_)
            lab, chosen = (builder.load(builder.bitcast(_data(context, builder, kinds[k], v), _IVEC.as_pointer()),
                                        align=8) for k, v in ((3, labels_), (4, pick_)))
            where = builder.add(builder.add(builder.mul(lab, _splat(builder, width_, _IVEC)), chosen),
                                _splat(builder, at_, _IVEC))
            found = _gather(builder, table, where, _IVEC, lambda x: builder.sext(x, _I64))
            builder.store(builder.add(found, _splat(builder, ir.Constant(_I64, 1), _IVEC)),
                          builder.bitcast(_data(context, builder, kinds[5], meet_), _IVEC.as_pointer()), align=8)
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def _path_masses(typingctx, buf, prow, h, pis):  # pragma: no cover - compiled
        """The masses of the label's path nodes of ``LANES`` rows at once (K.2's top-1 path means
        divide by them): ``pis[k, lane] = buf[prow[k, lane], lane]``, or 1 where that is not above
        0, for ``k = 0 .. h``; read once a block of rows, whatever the utilities' depths."""
        sig = types.void(buf, prow, types.intp, pis)

        def codegen(context, builder, signature, args):
            b, prow_, h_, pis_ = args
            kinds = signature.args
            data, rows, out = (_data(context, builder, kinds[k], v) for k, v in ((0, b), (1, prow_), (3, pis_)))
            lanes, width = ir.Constant(_IVEC, list(range(LANES))), _splat(builder, ir.Constant(_I64, LANES), _IVEC)
            one, zero = ir.Constant(_VEC, [1.0] * LANES), ir.Constant(_VEC, [0.0] * LANES)
            with cgutils.for_range(builder, builder.add(h_, ir.Constant(h_.type, 1))) as loop:
                flat = builder.add(builder.mul(builder.load(_lanes_at(builder, rows, loop.index, _IVEC), align=8),
                                               width), lanes)
                pi = _gather(builder, data, flat, _VEC)
                builder.store(builder.select(builder.fcmp_ordered(">", pi, zero), pi, one),
                              _lanes_at(builder, out, loop.index, _VEC), align=8)
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def _path_means(typingctx, pis, pia, meet, d, mu):  # pragma: no cover - compiled
        """K.2's top-1 path means of ``LANES`` rows at once: ``mu[k, lane] = pia[lane] / pis[k, lane]``
        (the chosen node's mass over the label's path node's at depth ``k``, :func:`_path_masses`)
        for ``k < meet[lane]`` (the path nodes that contain the chosen node), else 0, for
        ``k = 0 .. d``: one vector division a depth instead of ``LANES`` scalar ones, the same IEEE
        quotients."""
        sig = types.void(pis, pia, meet, types.intp, mu)

        def codegen(context, builder, signature, args):
            pis_, pia_, meet_, d_, mu_ = args
            kinds = signature.args
            masses, out = (_data(context, builder, kinds[k], v) for k, v in ((0, pis_), (4, mu_)))
            num = builder.load(builder.bitcast(_data(context, builder, kinds[1], pia_), _VEC.as_pointer()), align=8)
            upto = builder.load(builder.bitcast(_data(context, builder, kinds[2], meet_), _IVEC.as_pointer()), align=8)
            zero = ir.Constant(_VEC, [0.0] * LANES)
            with cgutils.for_range(builder, builder.add(d_, ir.Constant(d_.type, 1))) as loop:
                pi = builder.load(_lanes_at(builder, masses, loop.index, _VEC), align=8)
                inside = builder.icmp_signed("<", _splat(builder, loop.index, _IVEC), upto)
                builder.store(builder.select(inside, builder.fdiv(num, pi), zero),
                              _lanes_at(builder, out, loop.index, _VEC), align=8)
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def _emit_rows(typingctx, mu, meet, d, scale, score, residual, error, row, col):  # pragma: no cover - compiled
        """The row outputs of :func:`huc_ref.fast.kernels.top1_path_terms` for ``LANES`` rows at once
        (a whole block): the score ``mu[0]``, the UC residual (1 where ``meet > d``, the label below
        the chosen node, less the score) and the error bound ``scale mu[0]`` at
        ``score[row, col:col + LANES]`` (and the same places of ``residual``, ``error``), each a
        vector store.  The scalar loop's IEEE operations."""
        sig = types.void(mu, meet, types.intp, types.float64, score, residual, error, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            mu_, meet_, d_, scale_, score_, residual_, error_, row_, col_ = args
            kinds = signature.args
            m = _data(context, builder, kinds[0], mu_)
            mu0 = builder.load(_lanes_at(builder, m, ir.Constant(_I64, 0), _VEC), align=8)
            upto = builder.load(builder.bitcast(_data(context, builder, kinds[1], meet_), _IVEC.as_pointer()), align=8)
            inside = builder.select(builder.icmp_signed(">", upto, _splat(builder, d_, _IVEC)),
                                    ir.Constant(_VEC, [1.0] * LANES), ir.Constant(_VEC, [0.0] * LANES))
            for k, value, out in ((4, mu0, score_), (5, builder.fsub(inside, mu0), residual_),
                                  (6, builder.fmul(_splat(builder, scale_, _VEC), mu0), error_)):
                at = _item_at(context, builder, kinds[k], out, [row_, col_])
                builder.store(value, builder.bitcast(at, _VEC.as_pointer()), align=8)
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def _emit_terms(typingctx, mu, terms, at, ks, D):  # pragma: no cover - compiled
        """The terms ``mu[ks[t] + 1] - mu[ks[t]]``, ``t < D``, of ``LANES`` rows at once, each a
        vector subtraction, at ``terms[at + lane D + t]`` (each row's ``D`` terms side by side)."""
        sig = types.void(mu, terms, types.intp, ks, types.intp)

        def codegen(context, builder, signature, args):
            mu_, terms_, at_, ks_, D_ = args
            kinds = signature.args
            m = _data(context, builder, kinds[0], mu_)
            out, depth = _data(context, builder, kinds[1], terms_), _data(context, builder, kinds[3], ks_)
            with cgutils.for_range(builder, D_) as loop:
                k = builder.load(builder.gep(depth, [loop.index], inbounds=True))
                v = builder.fsub(builder.load(_lanes_at(builder, m, builder.add(k, ir.Constant(k.type, 1)), _VEC),
                                              align=8),
                                 builder.load(_lanes_at(builder, m, k, _VEC), align=8))
                first = builder.add(at_, loop.index)
                for lane in range(LANES):
                    place = builder.add(first, builder.mul(D_, ir.Constant(D_.type, lane)))
                    builder.store(builder.extract_element(v, ir.Constant(_I32, lane)),
                                  builder.gep(out, [place], inbounds=True))
            return context.get_dummy_value()

        return sig, codegen
else:  # pragma: no cover - the numba extra is not installed
    _sum_run, _choose, _meet, _path_masses, _path_means = (_sum_run_python, _choose_python, _meet_python,
                                                           _path_masses_python, _path_means_python)
    _emit_rows, _emit_terms = _emit_rows_python, _emit_terms_python


def _prefetch_python(arr, i, j):  # pragma: no cover - the plain-Python twin of the intrinsic: a hint, no effect
    return None


if COMPILED:
    @intrinsic
    def _prefetch(typingctx, arr, i, j):  # pragma: no cover - compiled
        """Ask for the cache line of ``arr[i, j]`` (``arr[i]`` of a vector; any layout; ``llvm.prefetch``:
        read, kept in every cache level); a hint: nothing is read, and no index is checked."""
        sig = types.void(arr, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            data, i_, j_ = args
            kind = signature.args[0]
            at = _item_at(context, builder, kind, data, [i_, j_][:kind.ndim])
            byte, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32]),
                                                "llvm.prefetch.p0i8")
            builder.call(fn, [builder.bitcast(at, byte), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return sig, codegen
else:  # pragma: no cover - the numba extra is not installed
    _prefetch = _prefetch_python


def _lane_update_python(S, src, dst, v, W, wb, b):  # pragma: no cover - the plain-Python twin of the intrinsic
    for g in range(GROUP_LANES):
        c, hi, lo, f_hi, f_lo = (S[src + k * GROUP_LANES + g] for k in range(5))
        c = c + v * W[wb + g]
        up, down = c > hi, c < lo
        for k, x in enumerate((c, c if up else hi, c if down else lo, b if up else f_hi, b if down else f_lo)):
            S[dst + k * GROUP_LANES + g] = x


if COMPILED:
    @intrinsic
    def _lane_update(typingctx, S, src, dst, v, W, wb, b):  # pragma: no cover - compiled
        """One entry ``v`` of an atom (its weights: ``W[wb : wb + GROUP_LANES]``, one per subgroup) in
        a column's state, read from ``S[src : src + 5 GROUP_LANES]`` and written to ``S[dst : ...]``,
        at block prefix ``b``, as vector instructions: ``C += v w``, then where ``C`` exceeds the
        largest (is below the smallest) so far, it and ``b`` replace them.  The same IEEE
        operations, lane by lane, as the scalar ``C = C + v * w; if C > mx: ...`` (a multiply and
        an add, never fused; ordered compares).

        Why two places: written back where it was read, each "keep the old value or take the new"
        is a store of a select of a load from that address, which LLVM turns into a masked store
        (``vmaskmovpd``) on AVX2.  On AMD Zen 3 a masked store is slow and the next update of the
        column cannot read its result from the store queue: 20.5 ns an atom for the UC column
        alone, against 5.6 ns with the state read from one copy and written whole to the other
        (n = 10^5, |C| = 7; AVX-512 machines mask stores in other instructions)."""
        sig = types.void(S, types.intp, types.intp, types.float64, W, types.intp, types.float64)

        def codegen(context, builder, signature, args):
            s_data, src_, dst_, v_, w_data, wb_, b_ = args
            s_arr = context.make_array(signature.args[0])(context, builder, s_data)
            w_arr = context.make_array(signature.args[4])(context, builder, w_data)
            vec = ir.VectorType(ir.DoubleType(), GROUP_LANES)

            def at(arr, start, k):
                p = builder.gep(arr.data, [builder.add(start, ir.Constant(start.type, k * GROUP_LANES))],
                                inbounds=True)
                return builder.bitcast(p, vec.as_pointer())

            c, hi, lo, f_hi, f_lo = (builder.load(at(s_arr, src_, k), align=8, typ=vec) for k in range(5))
            w = builder.load(at(w_arr, wb_, 0), align=8, typ=vec)
            c = builder.fadd(c, builder.fmul(_splat(builder, v_, vec), w))
            up, down = builder.fcmp_ordered(">", c, hi), builder.fcmp_ordered("<", c, lo)
            b_vec = _splat(builder, b_, vec)
            for k, value in enumerate((c, builder.select(up, c, hi), builder.select(down, c, lo),
                                       builder.select(up, b_vec, f_hi), builder.select(down, b_vec, f_lo))):
                builder.store(value, at(s_arr, dst_, k), align=8)
            return context.get_dummy_value()

        return sig, codegen
else:  # pragma: no cover - the numba extra is not installed
    _lane_update = _lane_update_python
