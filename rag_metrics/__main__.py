"""``python -m rag_metrics`` is the ``rag-metrics`` command."""
import sys

from rag_metrics.cli import main

sys.exit(main())
