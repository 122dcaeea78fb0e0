"""``python -m tests.fuzz``: run fuzz cases and print the counts (see the package docstring)."""

from __future__ import annotations

import argparse
import sys

from .runner import remake, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--cases", type=int, default=12000, help="number of cases (12000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the run (0)")
    parser.add_argument("--start", type=int, default=0, help="first case id (0)")
    parser.add_argument("--case", type=int, help="remake this one case here and print it")
    parser.add_argument("--target", action="append", help="only this target (repeatable)")
    parser.add_argument("--per-child", type=int, default=2000, help="cases per child (2000)")
    args = parser.parse_args(argv)
    if args.case is not None:
        print(remake(args.seed, args.case, args.target))
        return 0
    report = run(
        args.seed,
        args.cases,
        start=args.start,
        only=args.target,
        per_child=args.per_child,
        progress=True,
    )
    print(report.summary())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
