"""The one compiled module: lib/html/native/lexwalk.c (see its header). Everything else is in
pyproject.toml. The extension is optional: if it does not compile, lib.html.extract runs its
pure-Python path, with the same output."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "lib.html._lexwalk",
            ["lib/html/native/lexwalk.c"],
            include_dirs=["lib/html/native/include"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
