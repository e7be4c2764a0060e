"""The ``huc`` command (also ``python -m huc_ref``).

``huc audit CASE.json`` prints a readable report; ``--json`` prints the ``huc-result/1``
document (on bad input, a ``huc-error/1`` document with the error's ``kind`` and ``path``).
``huc verify`` checks the paper's claims (:mod:`proofs_check`).  ``huc vectors``
exports the golden vectors and checks another implementation's answers.  Exit status
0 on success, 1 when a verified claim or a checked answer fails, 2 on bad input (one
line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .casefile import dumps, read_case
from .errors import HUCError
from .rational import decimal_text, fraction_text

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit status 2
        raise HUCError(message)


#: Exact numbers longer than this are shown as decimals in the report (``--json`` keeps them exact).
SHOWN_DIGITS = 24


def _show(x) -> str:
    """An exact number for a person: ``1/4``, or ``0.0191234...`` when its exact text is long."""
    if max(x.numerator.bit_length(), x.denominator.bit_length()) > 3.33 * SHOWN_DIGITS:
        return f"~{decimal_text(x)}"
    return fraction_text(x)


def _interval_text(interval):
    if interval is None:
        return "(empty)"
    lo, hi = (_show(x) for x in interval)
    return f"[{lo}, {hi}]"


def _report(case, result, top: int) -> str:
    lines = [f"case {case.id}: {case.description}".rstrip(": "),
             f"  {case.distribution!r}",
             f"  utilities: {', '.join(f'{n} ({u.kind})' for n, u in case.utilities.items())}",
             ""]
    for label, row in (("UC ", result.uc), ("HUC", result.huc)):
        where = ", ".join(f"{k}={v}" for k, v in (("subgroup", row.subgroup), ("utility", row.utility),
                                                  ("node", row.node)) if v is not None)
        shown = _show(row.sup)
        approx = "" if shown.startswith("~") else f"  (~{decimal_text(row.sup)})"
        lines.append(f"{label} = {shown}{approx}  at {where or '-'} "
                     f"on {_interval_text(row.interval)}, moment {_show(row.moment)}")
    lines.append("")
    lines.append("relevant nodes V_T(u): " + "; ".join(f"{u}: {', '.join(v) or '(none)'}"
                                                      for u, v in result.relevant_nodes.items()))
    for u, nodes in result.relevant_nodes.items():
        uc_u = max(r.sup for r in result.candidates if r.utility == u and r.node is None)
        huc_u = max((r.sup for r in result.candidates if r.utility == u and r.node is not None), default=0)
        lines.append(f"  Prop. 3.3 for {u}: UC = {_show(uc_u)} <= |V_T(u)| HUC = "
                     f"{len(nodes)} * {_show(huc_u)}: {'holds' if uc_u <= len(nodes) * huc_u else 'FAILS'}")
    rows = sorted((r for r in result.candidates if r.sup > 0), key=lambda r: -r.sup)[:top]
    if rows:
        lines += ["", f"largest violations (top {len(rows)}):",
                  f"  {'subgroup':<12} {'utility':<12} {'node':<12} {'sup':>12}  interval"]
        for r in rows:
            lines.append(f"  {r.subgroup:<12} {r.utility:<12} {r.node or '(UC)':<12} "
                         f"{decimal_text(r.sup):>12}  {_interval_text(r.interval)}")
    if any(_show(x).startswith("~") for r in result.candidates for x in (r.sup, r.moment)):
        lines += ["", "~: decimals of exact numbers too long to print; --json writes them exactly"]
    return "\n".join(lines) + "\n"


def _cmd_audit(args) -> int:
    case = read_case(Path(args.case), renormalize=args.renormalize, smooth=args.smooth)
    if args.engine == "fast":
        from .fast import audit_distribution
        doc = audit_distribution(case.distribution, case.utilities, case.id)
        if not args.json:
            raise HUCError("--engine fast: only --json output is available (the report is the exact engine's)")
        sys.stdout.write(dumps(doc))
        return 0
    result = case.audit()
    sys.stdout.write(dumps(result.to_json(case.id)) if args.json else _report(case, result, args.top))
    return 0


def _cmd_boost(args) -> int:
    from .boost import boost
    case = read_case(Path(args.case), renormalize=args.renormalize, smooth=args.smooth)
    step = args.step
    if step != "adaptive":
        if not step.startswith("fixed:"):
            raise HUCError(f"--step: expected 'adaptive' or 'fixed:A', got {step!r}")
        step = step[len("fixed:"):]
    result = boost(case.distribution, case.utilities, method=args.method, epsilon=args.epsilon,
                   max_updates=args.max_updates, step=step, select=args.select, digits=args.digits,
                   arithmetic=args.arithmetic)
    if args.json:
        sys.stdout.write(dumps(result.to_json()))
        return 0
    thm = result.theorem_3_5
    lines = [f"{args.method.upper()}-Boost on {case.id}: {len(result.updates)} updates, stopped by {result.stopped}",
             f"  log loss {result.initial['log_loss']} -> {result.final['log_loss']}",
             f"  final UC = {result.final['uc']}, HUC = {result.final['huc']} "
             f"(epsilon {fraction_text(result.epsilon)})",
             f"  Theorem 3.5 ({thm['step']} step, {'certified' if thm['certified'] else 'float, uncertified'}): "
             + ("holds" if thm["holds"] else "does not apply" if not thm["applies"] else "FAILS")
             + f"; update bound {result.bound_updates}"]
    for k, u in enumerate(result.updates[: args.top]):
        lines.append(f"  {k + 1:>4}  {u['subgroup']:<10} {u['utility']:<10} {u['node'] or '(all)':<10} "
                     f"Gamma {float(u['gamma']):+.6f}  Lambda {float(u['lambda']):.6f}  "
                     f"loss {float(u['log_loss_after']):.10f}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _cmd_vectors(args) -> int:
    from . import vectors
    source = Path(args.vectors) if args.vectors else None
    if args.action == "generate":
        for path in vectors.write_vector_files(Path(args.dir)):
            print(path)
        return 0
    if args.action == "export":
        print(f"wrote {vectors.export_cases(Path(args.dir), source)} case files to {args.dir}")
        return 0
    if args.action == "answer":
        print(f"wrote {vectors.answer_cases(Path(args.dir), source)} answers to {args.dir}")
        return 0
    report, failures = vectors.check_answers(Path(args.dir), source)
    for vid, reason in report:
        print(f"PASS {vid}" if reason is None else f"FAIL {vid}: {reason}")
    print(f"{len(report) - failures} passed, {failures} failed")
    return 1 if failures else 0


def _cmd_demo(args) -> int:
    from .demo import walkthrough
    print(walkthrough()[0])
    return 0


def _cmd_verify(args) -> int:
    from proofs_check.runner import main as verify

    return verify((["--json"] if args.json else []) + (["--only", args.only] if args.only else []))


def _case_arguments(parser, json_help):
    """The arguments every command that reads a case file shares."""
    parser.add_argument("case", help="path of a huc-case/1 JSON document")
    parser.add_argument("--json", action="store_true", help=json_help)
    parser.add_argument("--renormalize", action="store_true", help="divide each prediction by its sum, exactly")
    parser.add_argument("--smooth", metavar="KAPPA", help="mix predictions with the uniform law: (1-k) p + k/K")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``huc``."""
    parser = _Parser(prog="huc", description="Exact Utility Calibration (UC) and Hierarchical "
                     "Utility Calibration (HUC): the reference implementation.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("audit", help="exact UC and HUC of a huc-case/1 file, with witnesses")
    _case_arguments(p, "print the huc-result/1 document")
    p.add_argument("--top", type=int, default=10, help="violations listed in the report (default 10)")
    p.add_argument("--engine", choices=["exact", "fast"], default="exact",
                   help="exact (Fractions, the reference) or fast (numpy float64, JSON numbers)")
    p.set_defaults(run=_cmd_audit)
    b = sub.add_parser("boost", help="HUC-Boost or UC-Boost with certified arithmetic (huc-boost/1)")
    _case_arguments(b, "print the huc-boost/1 document")
    b.add_argument("--method", choices=["huc", "uc"], default="huc")
    b.add_argument("--epsilon", default="1/100", help="stopping tolerance (exact number, default 1/100)")
    b.add_argument("--max-updates", type=int, default=1000, help="update cap (default 1000)")
    b.add_argument("--step", default="adaptive", help="'adaptive' (alpha = Gamma/Lambda) or 'fixed:A'")
    b.add_argument("--select", choices=["greedy", "passes"], default="greedy")
    b.add_argument("--digits", type=int, default=30, help="working precision in significant digits (default 30)")
    b.add_argument("--arithmetic", choices=["certified", "float"], default="certified")
    b.add_argument("--top", type=int, default=20, help="updates listed in the report (default 20)")
    b.set_defaults(run=_cmd_boost)
    g = sub.add_parser("vectors", help="golden vectors: export cases, check another implementation's answers")
    g.add_argument("action", choices=["export", "check", "answer", "generate"],
                   help="export: write each vector's input to DIR; check: compare the answers in DIR; "
                        "answer: write this implementation's answers to DIR; generate: rebuild the vector files")
    g.add_argument("dir", help="the directory to write to or read answers from")
    g.add_argument("--vectors", metavar="SRC",
                   help="the folder of huc-vectors/1 files (default: the ones shipped in huc_ref/data/vectors)")
    g.set_defaults(run=_cmd_vectors)
    d = sub.add_parser("demo", help="the four-leaf cancellation walk-through (App. D.1), for a classroom")
    d.set_defaults(run=_cmd_demo)
    v = sub.add_parser("verify", help="check every identity, worked example and bound of the paper")
    v.add_argument("--json", action="store_true", help="print a JSON list of results")
    v.add_argument("--only", metavar="SUBSTRING", help="run only the checks whose name contains SUBSTRING")
    v.set_defaults(run=_cmd_verify)
    return parser


def main(argv=None) -> int:
    """Run ``huc``; return the exit status (0 success, 1 a failed check, 2 bad input).

    >>> main(["verify", "--only", "appendix_d3"]) == 0
    [  ok  ] 1/1 check_appendix_d3_branch_error_without_impact ...
    True
    """
    args = None
    try:
        args = build_parser().parse_args(argv)
        return args.run(args)
    except HUCError as err:
        if getattr(args, "json", False) and getattr(args, "command", None) in ("audit", "boost"):
            sys.stdout.write(dumps(err.to_json()))  # huc-error/1: the kind and the place, for programs
        print(f"huc: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader closed stdout (e.g. piped into head): not an error
        sys.stdout = None
        return 0
