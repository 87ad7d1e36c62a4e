"""nbval over the notebooks.

nbdev-clean keeps cell outputs (the rendered documentation shows them) but always clears execution counts,
and nbval refuses a cell that has outputs and no count as "unrun". Giving each such cell a count at
collection lets nbval run every cell, fail on any exception, and compare the outputs of the cells marked
NBVAL_CHECK_OUTPUT (the published tables) with the ones stored in the notebook.
"""


def pytest_collection_modifyitems(items):
    for n, item in enumerate(items, 1):
        cell = getattr(item, "cell", None)
        if cell is not None and cell.get("cell_type") == "code" and cell.get("execution_count") is None:
            cell["execution_count"] = n
