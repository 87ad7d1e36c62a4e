"""nbval over the notebooks.

nbdev-clean keeps cell outputs (the rendered documentation shows them) but always clears execution counts,
and nbval refuses a cell that has outputs and no count as "unrun". Giving each such cell a count at
collection lets nbval run every cell, fail on any exception, and compare the outputs of the cells marked
NBVAL_CHECK_OUTPUT (the published tables) with the ones stored in the notebook.
"""

import os
# The references' float32 answers (the Loosh vectors above all: cosine ties between identical answers decide sybil
# pairs and the top-bonus label) were computed under OpenBLAS's Haswell kernel. On an AVX-512 host OpenBLAS picks its
# SkylakeX kernel, which rounds those dot products differently and flips exact ties (49 of 176 Loosh cases). The
# kernel is read once, when numpy loads, so it is chosen here, before any worker or notebook kernel starts; a value
# the machine already sets is kept.
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")



def pytest_collection_modifyitems(items):
    for n, item in enumerate(items, 1):
        cell = getattr(item, "cell", None)
        if cell is not None and cell.get("cell_type") == "code" and cell.get("execution_count") is None:
            cell["execution_count"] = n
