"""pip's own settings as ``uv pip install`` arguments (``./lab`` installs with uv when it can).

uv reads no ``pip.conf`` and no ``PIP_*`` variable, so a machine whose pip is set up with local
indexes, a folder of wheels (a CPU build of torch, say) or constraints would otherwise install other
files with uv than with pip.  This prints, NUL-separated, the arguments that give uv the same sources:
``--index-url``, ``--extra-index-url``, ``--find-links`` and ``--constraint`` from ``pip config list``
(the environment's ``PIP_*`` values come last there and win, as in pip), ``--native-tls`` when pip is
given a certificate bundle, and ``--index-strategy unsafe-best-match`` (pip's rule: every index is
searched for the best version, not just the first that has the package).
"""
from __future__ import annotations

import subprocess
import sys

FLAGS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links",
         "constraint": "--constraint"}


def uv_arguments(pip_config: str) -> list[str]:
    """The uv arguments for the output of ``pip config list``.

    >>> uv_arguments("global.find-links='/opt/wheels'\\n:env:.find-links='/srv/w'\\nglobal.cert='/etc/ca.crt'")
    ['--index-strategy', 'unsafe-best-match', '--find-links', '/srv/w', '--native-tls']
    """
    seen: dict[str, str] = {}
    cert = False
    for line in pip_config.splitlines():
        key, _, value = line.partition("=")
        name = key.rsplit(".", 1)[-1].strip()
        value = value.strip().strip("'\"")
        if name in FLAGS:
            seen[name] = value  # a later line (the environment's PIP_* value) wins, as in pip
        cert = cert or (name == "cert" and bool(value))
    args = ["--index-strategy", "unsafe-best-match"]
    for name, value in seen.items():
        for item in value.split():
            args += [FLAGS[name], item]
    return args + (["--native-tls"] if cert else [])


if __name__ == "__main__":
    out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True)
    sys.stdout.write("\0".join(uv_arguments(out.stdout)) + "\0")
