"""A fuzz harness: hostile and random input to every public entry point, each case judged.

Run the CI set (the same as ``tests/test_fuzz.py``) or a longer one from the repository root::

    python -m tests.fuzz --cases 12000 --seed 0     # the CI set, about a minute
    python -m tests.fuzz --cases 200000 --seed 1    # a long run
    python -m tests.fuzz --seed 1 --case 1234       # remake one case in this process

See ``tests/fuzz/README.md`` for what a case is, how crashes are pinned on their case and what
counts as a failure.
"""
