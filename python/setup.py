"""Builds the extension module over libstrata.

The library is built from the repository this folder sits in (CMake, a
Release build of the shared library alone) unless STRATA_LIBDIR names a
folder that already holds libstrata.so (a CMake build directory).  It is
built without jemalloc: jemalloc's thread-local state uses the
initial-exec TLS model, which a library loaded with dlopen (as Python
loads extension modules) cannot get, so the engine allocates through the
C library's malloc here.  The
library is shipped inside the package, beside the module, which finds it
through an rpath of $ORIGIN.
"""
import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LIBRARY = "libstrata.so.0"


def library_dir():
    given = os.environ.get("STRATA_LIBDIR")
    if given:
        return os.path.abspath(given)
    out = os.path.join(HERE, "build", "libstrata")
    subprocess.check_call(["cmake", "-S", ROOT, "-B", out, "-DCMAKE_BUILD_TYPE=Release",
                           "-DSTRATA_TESTS=OFF", "-DSTRATA_BENCH=OFF", "-DSTRATA_JEMALLOC=OFF"])
    subprocess.check_call(["cmake", "--build", out, "--target", "strata_shared",
                           "-j", str(os.cpu_count() or 1)])
    return out


class BuildWithLibrary(build_ext):
    def run(self):
        libdir = library_dir()
        for ext in self.extensions:
            ext.library_dirs.append(libdir)
        super().run()
        package_dir = os.path.join(HERE if self.inplace else self.build_lib, "strata")
        os.makedirs(package_dir, exist_ok=True)
        shutil.copy2(os.path.join(libdir, LIBRARY), os.path.join(package_dir, LIBRARY))


sources = sorted(os.path.join("src", f) for f in os.listdir(os.path.join(HERE, "src"))
                 if f.endswith(".c"))

setup(
    ext_modules=[Extension(
        "strata._strata",
        sources=sources,
        include_dirs=[os.path.join(ROOT, "include")],
        libraries=["strata"],
        extra_compile_args=["-std=gnu11", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                            "-Wno-cast-function-type", "-Werror"],
        extra_link_args=["-Wl,-rpath,$ORIGIN"],
        define_macros=[("Py_LIMITED_API", "0x030B0000")],
        py_limited_api=True,
    )],
    cmdclass={"build_ext": BuildWithLibrary},
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
