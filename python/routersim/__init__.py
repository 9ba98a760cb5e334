"""routersim's wheel: the `routersim` binary, installed into the environment's scripts folder.

`find_routersim_bin()` says where it is (as ruff's wheel does for `ruff`); `python -m routersim`
runs it. The simulation is the binary; nothing here imports or wraps it.
"""

from __future__ import annotations

import os
import shutil
import sysconfig


def find_routersim_bin() -> str:
    """The binary this wheel installed (beside the running Python), else the one on PATH."""
    name = "routersim.exe" if os.name == "nt" else "routersim"
    # The environment's scripts folder, then the user's (`pip install --user`).
    for scheme in (None, f"{os.name}_user"):
        try:
            if scheme:
                folder = sysconfig.get_path("scripts", scheme)
            else:
                folder = sysconfig.get_path("scripts")
        except KeyError:
            continue
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(
        "no routersim binary beside this Python or on PATH (pip install routersim)"
    )
