"""`python -m replcheck ...`, and the file spark-submit runs: `spark-submit replcheck/__main__.py campaign ...`."""
import os
import sys

if __name__ == "__main__":
    # Run as a file (spark-submit), this folder would come first on sys.path and shadow the
    # standard library's io and html with replcheck's own modules of those names.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    from replcheck.cli import main

    sys.exit(main())
