"""The compiled modules; everything else is in pyproject.toml.

- lib/html/native/lexwalk.c (see its header) is optional: if it does not compile,
  lib.html.extract runs its pure-Python path, with the same output.
- lib/serve/native/maxscore.c (the search engine's top-k kernel) is required: search has no
  pure-Python path fast enough to serve."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "lib.html._lexwalk",
            ["lib/html/native/lexwalk.c"],
            include_dirs=["lib/html/native/include"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension("lib.serve._maxscore", ["lib/serve/native/maxscore.c"], extra_compile_args=["-O3"]),
    ]
)
