"""Build hook: ship the top-level schema.sql inside the wheel as mindos/store/schema.sql
(and wake_texts.md as mindos/comms/wake_texts.md).

Everything else about the package is declared in pyproject.toml.  schema.sql stays at the
repository's top level (the one source of the schema); a checkout reads it there, an
installed wheel reads this copy.
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithSchema(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "mindos", "store", "schema.sql")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema.sql"), target)
        # the mood poller's recovery copy of its wake texts travels the same way
        texts = os.path.join(self.build_lib, "mindos", "comms", "wake_texts.md")
        os.makedirs(os.path.dirname(texts), exist_ok=True)
        shutil.copyfile(os.path.join(os.path.dirname(os.path.abspath(__file__)), "wake_texts.md"), texts)


setup(cmdclass={"build_py": BuildWithSchema})
