"""What every gdr-ab module shares: the program name, warnings, sizes, text."""

import re
import sys

PROG = "gdr-ab"
PATH_ORDER = ("host", "dmabuf", "peermem", "bounce")
VERB_ORDER = ("write", "read")


# The exit statuses, the same table as the C tools' (docs/exit-status.md).
EXIT_OK = 0         # done; every --expect rule passed
EXIT_FAIL = 1       # a rule failed, an output could not be written, --strict anomalies
EXIT_USAGE = 2      # bad usage or unusable input (a rule typo, a missing file, a baseline
                    # from another pair)
EXIT_UNDECIDED = 3  # a rule is undecided: its interval straddles the threshold


class InputError(Exception):
    """Unreadable or foreign input: exit EXIT_USAGE."""


class UsageError(Exception):
    """Bad command line: exit EXIT_USAGE."""


def did_you_mean(word, choices):
    """' (did you mean X?)' when WORD is close to one of CHOICES, else ''."""
    import difflib

    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {near[0]}?)" if near else ""


def warn(msg):
    print(f"{PROG}: warning: {msg}", file=sys.stderr)


_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0080-\u009f]")


def clean(text):
    """Text from a CSV with its control bytes made visible (\\x1b), so that a
    field can neither drive the terminal nor break a table line."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def shown(text, limit=40):
    """A field as quoted in a message: cleaned and shortened."""
    t = clean(text)
    if len(t) > limit:
        t = t[:limit - 3] + "..."
    return f"'{t}'"


def fmt_size(n):
    """Same as gdr_fmt_size(): 4096 -> '4 KiB', exact powers only."""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
    u = 0
    while u + 1 < len(units) and n >= 1024 and n % 1024 == 0:
        n //= 1024
        u += 1
    return f"{n} {units[u]}"


def fmt_size_short(n):
    s = fmt_size(n).replace(" ", "")
    return s.replace("KiB", "K").replace("MiB", "M").replace("GiB", "G").replace("TiB", "T")


def ordered(names, order):
    """NAMES in ORDER's order, the others after them by name. Paths of each side
    its own memory (LOCAL:REMOTE) come after the symmetric ones, by local and
    remote path in ORDER."""
    def key(n):
        if n in order:
            return (0, order.index(n), 0, n)
        local, colon, remote = n.partition(":")
        if colon and local in order and remote in order:
            return (1, order.index(local), order.index(remote), n)
        return (2, len(order), 0, n)
    return sorted(names, key=key)


def combo(local, remote):
    """The path name of a row: LOCAL, or LOCAL:REMOTE when the sides differ."""
    return local if not remote or remote == local else f"{local}:{remote}"


def verb_sort(v):
    base, _, bidir = v.partition(" ")
    return (VERB_ORDER.index(base) if base in VERB_ORDER else len(VERB_ORDER), base, bidir)
