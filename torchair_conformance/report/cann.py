"""CANN version strings as Ascend numbers them, in release order (SPEC BE-4: "the previous CANN version").

A CANN version is `MAJOR.MINOR.STAGE[.PATCH][.SUFFIX]`:

- STAGE is `T<n>` (an early trial build: `8.0.T2`), `RC<n>` (a release candidate, which Ascend ships to users:
  `8.0.RC3`) or a number (the final release of the line and its patches: `8.0.0`, `8.0.1`); within a line
  `T` < `RC1` < `RC2` < ... < `0` < `1`;
- PATCH is a number after the stage: a commercial patch release of it, after it and before the next stage
  (`8.0.RC3.20`, which Ascend's Ascend Extension for PyTorch 6.0.0 release notes list beside 8.0.0);
- SUFFIX marks a build of that version: `alpha<n>` and `beta<n>` (community previews: `8.1.RC1.alpha001`,
  `8.0.0.beta1`; CANN 9 spells them `9.0.0-beta.1` in image tags and `9.1.0.beta.1` in packages) and `B<n>` (internal
  builds: `8.2.RC1.B010`) come BEFORE the version they prefix, alphas before betas before B-builds.

So `8.0.RC3 < 8.0.RC3.20 < 8.0.0 < 8.1.RC1.alpha001 < 8.1.RC1.B010 < 8.1.RC1 < 8.2.RC1 < 8.10.RC1`. Letters compare
case-insensitively (image tags write `8.1.rc1`, the toolkit's install info `8.1.RC1`); `.`, `-` and `.` before a
suffix's number are one spelling (`9.0.0-beta.1` is `9.0.0.beta1`). `packaging.version` cannot order these: it
reads `8.1.RC1.alpha001` as a release after every `8.1.RC1`, and a string sort puts `8.10` before `8.2`.
"""
from __future__ import annotations

import os
import platform
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchair_conformance.errors import ConformanceError

_PATTERN = re.compile(
    r"(?P<major>\d+)\.(?P<minor>\d+)\.(?:(?P<final>\d+)|RC(?P<rc>\d+)|T(?P<trial>\d+))"
    r"(?:\.(?P<patch>\d+))?"
    r"(?:[.-](?P<pre>alpha|beta|B)\.?(?P<pre_n>\d+))?",
    re.IGNORECASE)
#: stage ranks within a MAJOR.MINOR line
_TRIAL, _RC, _FINAL = 0, 1, 2
#: suffix ranks within a stage: the pre-release builds, then the version itself
_PRE = {"alpha": 0, "beta": 1, "b": 2}
_RELEASE = 3


class CannVersionError(ConformanceError, ValueError):
    """Not a CANN version string; the message names the value and the expected shape."""


def parse(version: str) -> tuple[int, ...]:
    """The sort key of a CANN version string (see the module docstring); raises `CannVersionError`."""
    match = _PATTERN.fullmatch(str(version).strip())
    if match is None:
        raise CannVersionError(f"{version!r} is not a CANN version: expected MAJOR.MINOR.RC<n>, MAJOR.MINOR.<n> or "
                               f"MAJOR.MINOR.T<n>, optionally followed by a patch .<n> and by .alpha<n>, .beta<n> "
                               f"or .B<n> (e.g. 8.1.RC1, 8.0.0, 8.0.RC3.20, 8.1.RC1.alpha001, 8.2.RC1.B010, "
                               f"9.0.0-beta.1)")
    if match["final"] is not None:
        stage = (_FINAL, int(match["final"]))
    elif match["rc"] is not None:
        stage = (_RC, int(match["rc"]))
    else:
        stage = (_TRIAL, int(match["trial"]))
    patch = int(match["patch"]) if match["patch"] is not None else -1
    suffix = (_PRE[match["pre"].lower()], int(match["pre_n"])) if match["pre"] else (_RELEASE, 0)
    return (int(match["major"]), int(match["minor"]), *stage, patch, *suffix)


def normalize(version: str) -> str:
    """The spelling the toolkit's install info uses (`8.1.rc1` -> `8.1.RC1`, `.b010` -> `.B010`); alpha and beta
    builds keep their own spelling."""
    parse(version)
    text = re.sub(r"\.rc(\d)", r".RC\1", str(version).strip(), flags=re.IGNORECASE)
    text = re.sub(r"\.t(\d)", r".T\1", text, flags=re.IGNORECASE)
    return re.sub(r"[.-]b(\d)", r".B\1", text, flags=re.IGNORECASE)


def spelled(version: Any) -> str:
    """A CANN field in one spelling: `normalize`d where it parses, else as written."""
    return normalize(str(version)) if sort_key(version)[0] == 1 else str(version)


def release(version: str) -> str:
    """The release a build leads to: `8.2.RC1.B010` -> `8.2.RC1`, `9.0.0-beta.1` -> `9.0.0`; a patch and a release
    are their own (`8.0.RC3.20`)."""
    parse(version)
    return normalize(re.sub(r"[.-](alpha|beta|B)\.?\d+$", "", str(version).strip(), flags=re.IGNORECASE))


def sort_key(version: Any) -> tuple:
    """A key ordering any CANN field: none first, then parsed versions in release order, then unparsable ones by
    their text (shown last, never taken for a newer release)."""
    if version is None:
        return (0, (), "")
    try:
        return (1, parse(str(version)), "")
    except CannVersionError:
        return (2, (), str(version))


def same(a: Any, b: Any) -> bool:
    """Whether two CANN fields name one release (`8.1.rc1` is `8.1.RC1`)."""
    return sort_key(a) == sort_key(b) if sort_key(a)[0] == 1 else str(a) == str(b)


#: the toolkit's install info, relative to $ASCEND_HOME_PATH (the CANN layout changed across releases)
INSTALL_INFO = ("{arch}-linux/ascend_toolkit_install.info", "ascend_toolkit_install.info",
                "../{arch}-linux/ascend_toolkit_install.info", "compiler/version.info")


def from_install_info(environ: Mapping[str, str] | None = None, arch: str | None = None) -> str | None:
    """BE-3: the `version=` line of CANN's install info under `$ASCEND_HOME_PATH` (or `$ASCEND_TOOLKIT_HOME`), or
    None: the suite's one reader of the installed CANN version, standard library only (no `torch_npu`, which fails
    to import without CANN). The bench's environment, the results file's name and the nightly's leg use it."""
    environ = os.environ if environ is None else environ
    home = environ.get("ASCEND_HOME_PATH") or environ.get("ASCEND_TOOLKIT_HOME")
    if not home:
        return None
    arch = arch or platform.machine()
    for relative in INSTALL_INFO:
        try:
            text = Path(home, relative.format(arch=arch)).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip().lower() == "version" and value.strip().strip("'\""):
                return value.strip().strip("'\"")
    return None
