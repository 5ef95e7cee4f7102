"""The compiled modules; everything else is in pyproject.toml.

- lib/html/native/lexwalk.c (see its header), the compiled DOM walker of preprocess, built for
  the selectolax version pyproject.toml pins. Required: an install that cannot compile it fails
  rather than leave every night on the pure-Python path (several times slower); that path is
  chosen with DAILYSLICE_NATIVE_HTML=off, and lib/html/walk.py reports any other way into it.
  Its rule tables (lexwalk_rules.h) are generated from lib/html/rules.py before it is compiled
  (scripts/gen_lexwalk_rules.py), and it is compiled with warnings as errors.
- lib/serve/native/maxscore.c (the search engine's top-k kernel), required: search has no
  pure-Python path fast enough to serve.
- lib/neardup/native/minhash.c (the MinHash signatures of preprocess's ``minhash`` column, issue 62):
  the numpy path of lib/neardup/minhash.py gives the same bytes at several times the CPU."""

import pathlib
import runpy

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = pathlib.Path(__file__).resolve().parent
#: lexwalk.c reads another package's memory: every warning is a build failure
STRICT = ["-Wall", "-Wextra", "-Werror"]


class BuildExt(build_ext):
    """build_ext that first writes lexwalk.c's rule tables from lib/html/rules.py."""

    def run(self):
        runpy.run_path(str(HERE / "scripts" / "gen_lexwalk_rules.py"), run_name="gen")["main"]([])
        super().run()


setup(
    cmdclass={"build_ext": BuildExt},
    ext_modules=[
        Extension(
            "lib.html._lexwalk",
            ["lib/html/native/lexwalk.c"],
            include_dirs=["lib/html/native/include"],
            depends=["lib/html/native/lexwalk_rules.h"],
            extra_compile_args=["-O2", *STRICT],
        ),
        Extension("lib.serve._maxscore", ["lib/serve/native/maxscore.c"], extra_compile_args=["-O3", *STRICT]),
        Extension("lib.neardup._minhash", ["lib/neardup/native/minhash.c"], extra_compile_args=["-O3", *STRICT]),
    ],
)
