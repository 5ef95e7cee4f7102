"""The compiled modules; everything else is in pyproject.toml.

- lib/html/native/lexwalk.c (see its header), the compiled DOM walker of preprocess, built for
  the selectolax version pyproject.toml pins. Required: an install that cannot compile it fails
  rather than leave every night on the pure-Python path (several times slower); that path is
  chosen with DAILYSLICE_NATIVE_HTML=off, and lib/html/walk.py reports any other way into it.
- lib/serve/native/maxscore.c (the search engine's top-k kernel), required: search has no
  pure-Python path fast enough to serve."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "lib.html._lexwalk",
            ["lib/html/native/lexwalk.c"],
            include_dirs=["lib/html/native/include"],
            extra_compile_args=["-O2"],
        ),
        Extension("lib.serve._maxscore", ["lib/serve/native/maxscore.c"], extra_compile_args=["-O3"]),
    ]
)
