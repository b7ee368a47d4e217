"""The examples in the docstrings (Python modules and the native module's) run and give what
they show."""

import doctest
import importlib

import pytest

MODULES = ["tensorcast", "tensorcast.errors", "tensorcast.io", "tensorcast.train", "tensorcast.saved_model", "tensorcast._native"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = finder.find(module, name)
    if name == "tensorcast._native":
        # Builtin functions and classes: the finder skips objects it cannot place in the
        # module, so walk the module's own names too.
        for attr in dir(module):
            obj = getattr(module, attr)
            if getattr(obj, "__doc__", None) and ">>>" in obj.__doc__:
                tests.extend(finder.find(obj, f"{name}.{attr}", module=False, globs={}))
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    examples = 0
    seen = set()
    for test in tests:
        if test.name in seen or not test.examples:
            continue
        seen.add(test.name)
        examples += len(test.examples)
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0
    assert examples > 0, f"{name} has no examples"
