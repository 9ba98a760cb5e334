"""`python -m routersim ARGS...`: runs the wheel's binary with ARGS and exits with its code."""

import os
import subprocess
import sys

from routersim import find_routersim_bin


def main() -> int:
    binary = find_routersim_bin()
    if os.name == "nt":
        return subprocess.run([binary, *sys.argv[1:]], check=False).returncode
    os.execv(binary, [binary, *sys.argv[1:]])
    return 0  # unreachable: execv replaces the process


if __name__ == "__main__":
    sys.exit(main())
