"""Build hook: ship the top-level schema.sql inside the wheel as mindos/store/schema.sql
(and wake_texts.md as mindos/comms/wake_texts.md, and the shipped repair policies
policies/repairs/*.yaml as mindos/autonomy/policies/).

Everything else about the package is declared in pyproject.toml.  schema.sql, the wake
texts and the repair policies stay at the repository's top level (their one source); a
checkout reads them there, an installed wheel reads these copies.
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithSchema(build_py):
    def run(self):
        super().run()
        here = os.path.dirname(os.path.abspath(__file__))
        target = os.path.join(self.build_lib, "mindos", "store", "schema.sql")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(here, "schema.sql"), target)
        # the mood poller's recovery copy of its wake texts travels the same way
        texts = os.path.join(self.build_lib, "mindos", "comms", "wake_texts.md")
        os.makedirs(os.path.dirname(texts), exist_ok=True)
        shutil.copyfile(os.path.join(here, "wake_texts.md"), texts)
        # so do the shipped repair policies (mindos.autonomy.repairs reads this copy first)
        policies = os.path.join(here, "policies", "repairs")
        shipped = os.path.join(self.build_lib, "mindos", "autonomy", "policies")
        os.makedirs(shipped, exist_ok=True)
        for name in sorted(os.listdir(policies)):
            if name.endswith(".yaml"):
                shutil.copyfile(os.path.join(policies, name), os.path.join(shipped, name))


setup(cmdclass={"build_py": BuildWithSchema})
