"""``python -m bench`` (from the repository root) runs the benchmark command line."""

from bench.cli import main

main()
