"""gdr-ab's version: configure's PACKAGE_VERSION, the C tools' own.

The build writes gdr_ab/_version.py from PACKAGE_VERSION (mk/report.am) and
installs it with the modules; a source tree without it reads AC_INIT in
configure.ac, two levels up. Either way one number, set in configure.ac.
"""

import os
import re


def _from_configure():
    here = os.path.dirname(os.path.realpath(__file__))
    try:
        with open(os.path.join(here, "..", "..", "configure.ac"), encoding="utf-8") as f:
            m = re.search(r"AC_INIT\(\[[^\]]*\],\s*\[([^\]]+)\]", f.read())
    except OSError:
        return None
    return m.group(1) if m else None


def _version():
    try:
        from ._version import VERSION as built
    except ImportError:
        built = None
    return built or _from_configure() or "unknown"


VERSION = _version()
