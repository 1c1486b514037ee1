"""Reading gdrperf CSV files into rows: columns by name, every number checked.

A value that is not a finite number in range (NaN, inf, negative, too large,
not a number at all) never reaches a median or a ratio: it is dropped with a
FILE:LINE warning. A row whose size is unusable is dropped whole, since it has
no place in any table.
"""

import csv
import hashlib
import io
import math
import os
import re
import stat
import sys

from .common import PATH_ORDER, VERB_ORDER, InputError, clean, combo, shown, warn

# The text columns a row keeps (every reader of rows asks for these only):
# the others are dropped as the file is read, so that 10^6 rows fit in memory.
KEEP = ("timestamp", "host", "peer", "role", "verb", "path", "path_remote", "bidir", "status",
        "note", "label", "version", "gpu", "gpu_name", "gpu_uuid", "nic", "distance",
        "run_id", "stop")
ROUNDS_COLUMN = "rep_bw_gbps"
# What a file must have to be read as gdrperf output at all; a bandwidth file
# has bw_avg_gbps, a latency file lat_p50_us (either will do).
REQUIRED = ("verb", "path", "size_bytes", "status")
# What the bench tools write in status (docs/csv-json.md).
STATUSES = ("ok", "skipped", "failed")
BW_COLUMN = "bw_avg_gbps"
CEILING_COLUMN = "ceiling_gbps"
# The repeats' spread, the peak, the CPU and, in newer files, when the row was
# measured (t_start_s/t_end_s: seconds since its run began, on its side's clock)
# and its place in the rotation (order). Any of them may be absent: an older
# file is read as before, without intervals or timing.
SPREAD_COLUMNS = {"bw_min": "bw_min_gbps", "bw_median": "bw_median_gbps",
                  "bw_max": "bw_max_gbps", "bw_peak": "bw_peak_gbps"}
CPU_COLUMN = "cpu_util_pct"
TIME_COLUMNS = {"t_start": "t_start_s", "t_end": "t_end_s"}
SECONDARY = set(SPREAD_COLUMNS) | {"cpu"} | set(TIME_COLUMNS)
MAX_PCT = 1e5
MAX_S = 1e9
# Latency metric name (as --expect spells it) -> CSV column (COLUMNS.md).
LAT_COLUMNS = {
    "min_us": "lat_min_us",
    "p50_us": "lat_p50_us",
    "p90_us": "lat_p90_us",
    "p99_us": "lat_p99_us",
    "p999_us": "lat_p999_us",
    "max_us": "lat_max_us",
    "avg_us": "lat_avg_us",
}
LAT_MAIN = "p50_us"
_LAT_KEYS = frozenset(LAT_COLUMNS)
# Bounds beyond any real run; a larger number is a corrupt file, not a result.
# Sizes stay below 2^53 so that they convert to float exactly (log axes).
MAX_SIZE = 1 << 53
MAX_GBPS = 1e9
MAX_US = 1e12
MIN_POSITIVE = 1e-6
# The CSV's rounding (3 decimals): min <= mean <= max may be off by this much.
SLACK = 0.0015
_INT_RE = re.compile(r"[0-9]+")
_FLOAT_RE = re.compile(r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]{1,4})?|[0-9]+\.")


def parse_number(text, limit, integer=False):
    """(value, None) or (None, why); an empty field is (None, None)."""
    t = text.strip()
    if not t:
        return None, None
    low = t.lower().lstrip("+-")
    if low in ("nan", "inf", "infinity"):
        return None, "is not a finite number"
    if t.startswith("-"):
        return None, "is negative"
    if integer:
        if not _INT_RE.fullmatch(t):
            return None, "is not a whole number"
        if len(t.lstrip("0")) > 30:
            return None, f"is out of range (above {limit})"
        v = int(t)
    else:
        if not _FLOAT_RE.fullmatch(t.lstrip("+")):
            return None, "is not a number"
        v = float(t.lstrip("+"))
        if not math.isfinite(v):
            return None, "overflows (not a finite number)"
    if v > limit:
        return None, f"is out of range (above {limit if integer else format(limit, 'g')})"
    if 0 < v < MIN_POSITIVE:
        # Finer than any column is written (3 or 6 decimals): a ratio to it
        # would overflow to inf (1e9 / 1e-300).
        return None, f"is out of range (below {MIN_POSITIVE:g}, and not 0)"
    return v, None


def parse_rounds(text, n):
    """Each round's Gb/s from rep_bw_gbps ('96.5;95.1;...'): (list, None),
    (None, None) when empty, or (None, why) when a value is not a positive
    finite number or their count is not the row's repeats N."""
    t = text.strip()
    if not t:
        return None, None
    try:
        got = list(map(float, t.split(";")))
    except ValueError:
        return None, "holds a value that is not a number"
    if t.strip(_NUM_STR + ";") or not MIN_POSITIVE <= min(got) <= max(got) <= MAX_GBPS:
        return None, "holds a value that is not a positive finite number"
    if n is not None and len(got) != n:
        return None, f"holds {len(got)} rounds, the row's repeats say {n}"
    return got, None


def read_rows(paths):
    """Rows from every file as dicts; raises InputError on a file that cannot be used."""
    return read_inputs(paths)[0]


def read_inputs(paths):
    """(rows, duplicates): the rows of every file read once, and a line per
    input given again (the same file under another name, or the same
    content): its rows would count twice, so they are left out."""
    rows, dups = [], []
    seen = {}  # content digest -> first path
    firsts = []
    for path in paths:
        same = next((p for p in firsts if _same_file(p, path)), None)
        if same is not None:
            dups.append(f"{path} is {same} given again: read once" if path != same
                        else f"{path} given twice: read once")
            continue
        try:
            with open_input(path) as f:
                text = f.read()
        except OSError as e:
            hint = " (standard input is /dev/stdin)" if path == "-" else ""
            raise InputError(f"{path}: cannot read: {e.strerror or e}{hint}") from e
        digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
        if text and digest in seen:
            dups.append(f"{path} has the same content as {seen[digest]}: read once")
            continue
        seen.setdefault(digest, path)
        firsts.append(path)
        # The file is in memory already: a long field (a note) is no reason to refuse it.
        csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
        try:
            rows.extend(read_one(path, text))
        except csv.Error as e:
            raise InputError(f"{path}: not a CSV file: {e}") from e
    return rows, dups


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a == b


def open_input(path):
    """A text stream on PATH. A directory, a device (/dev/zero never ends) or a
    socket is refused; a FIFO is opened without blocking (a FIFO nobody writes
    to reads as empty instead of hanging), then read normally."""
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise OSError(21, os.strerror(21))  # EISDIR
    for test, what in ((stat.S_ISBLK, "a block device"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(st.st_mode):
            raise OSError(0, f"{what}, not a CSV file (give a regular file or a pipe)")
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
    if stat.S_ISFIFO(st.st_mode):
        fd = os.open(path, flags | os.O_NONBLOCK)
        os.set_blocking(fd, True)
    else:
        fd = os.open(path, flags)
    return os.fdopen(fd, "r", newline="", encoding="utf-8-sig", errors="replace")


def _number(path, line, row, col, limit, integer=False):
    v, why = parse_number(row.get(col) or "", limit, integer)
    if why:
        return None, f"{col} {shown(row[col])} {why}"
    return v, None


def _records(lines, after, until=None):
    """(first line, last line, fields) of the records after line AFTER (to
    line UNTIL, or the end), as they come."""
    reader = csv.reader(lines[after:until])
    first = after + 1
    for rec in reader:
        yield first, after + reader.line_num, rec
        first = after + reader.line_num + 1


def _sound_records(path, lines, after):
    """The records after line AFTER, a torn one left out with a warning: a
    quote opened in a torn row takes the next rows (to the end of the file,
    or to the next quote) into one field, so that line is skipped and the
    lines it took are read as rows again."""
    todo = [(after, None)]
    while todo:
        lo, hi = todo.pop()
        for start, end, rec in _records(lines, lo, hi):
            if end > start and _torn(lines[start - 1:end]):
                warn(f"{path}:{start}: skipped a malformed row: a quoted field opened there "
                     f"does not close where it should (a torn write?); read on from line "
                     f"{start + 1}")
                # The lines after the torn one, then the rest of this stretch.
                todo.append((end, hi))
                todo.append((start, end))
                break
            yield start, end, rec


def _torn(lines):
    """Whether a record of several LINES has a quote that is not RFC 4180's:
    one left open to the end of the file, or closed by the next row's (the
    csv module takes both silently). A quoted note with a newline is fine."""
    if len(lines) < 2:
        return False
    try:
        for _ in csv.reader(lines, strict=True):
            pass
    except csv.Error:
        return True
    return False


def _header(path, header, where):
    """HEADER (stripped names) when it names each column once and has the
    required ones; raises InputError naming WHERE ('the first line')."""
    for i, h in enumerate(header):
        if h and h in header[:i]:
            # dict(zip()) would silently keep the last one of them.
            raise InputError(f"{path}: not a gdrperf CSV file (column {h} twice in {where}: "
                             f"columns {header.index(h) + 1} and {i + 1})")
    missing = [c for c in REQUIRED if c not in header]
    if BW_COLUMN not in header and LAT_COLUMNS[LAT_MAIN] not in header:
        missing.insert(3, BW_COLUMN)
    if missing:
        raise InputError(
            f"{path}: not a gdrperf CSV file (no column {', '.join(missing)} in {where})")
    return header


class _Layout:
    """Where a header puts the columns a row needs."""

    def __init__(self, header):
        self.header = header
        self.ncols = len(header)
        idx = {h: i for i, h in enumerate(header)}
        self.idx = idx
        self.keep = [(k, idx[k]) for k in KEEP if k in idx]
        lat = [(m, c, MAX_US) for m, c in LAT_COLUMNS.items() if c in idx]
        self.nums = [(m, c, idx[c], lim) for m, c, lim in
                     [("bw", BW_COLUMN, MAX_GBPS), ("ceiling", CEILING_COLUMN, MAX_GBPS)]
                     + [(m, c, MAX_GBPS) for m, c in SPREAD_COLUMNS.items()]
                     + [("cpu", CPU_COLUMN, MAX_PCT)]
                     + [(m, c, MAX_S) for m, c in TIME_COLUMNS.items()] + lat
                     if c in idx]
        self.size = idx["size_bytes"]
        self.repeats = idx.get("repeats")
        self.looks = idx.get("looks")
        self.rounds = idx.get(ROUNDS_COLUMN)


_NUM_STR = "0123456789.eE+-"
_intern = sys.intern


def _fast_number(t, limit):
    """A plain number in range at C speed, else None (parse_number says why)."""
    try:
        v = float(t)
    except ValueError:
        return None
    if 0 <= v <= limit and (v == 0 or v >= MIN_POSITIVE) and not t.strip(_NUM_STR):
        return v
    return None


def read_one(path, f):
    """The rows of one file's text (F: the text, or a StringIO of it)."""
    text = f if isinstance(f, str) else f.getvalue()
    lines = text.splitlines(keepends=True)
    reader = csv.reader(lines[:1])
    header = next(reader, None)
    if header is None:
        raise InputError(f"{path}: empty file, not a gdrperf CSV")
    lay = _Layout(_header(path, [h.strip() for h in header], "the first line"))
    out = []
    odd = set()  # (column, value) of verbs and paths the tools never write, warned once
    for _first, line, rec in _sound_records(path, lines, 1):
        if not rec:
            continue  # blank line
        if "size_bytes" in rec or (len(rec) != lay.ncols and
                                   any(x.strip() == "size_bytes" for x in rec)):
            names = [x.strip() for x in rec]
            if names == lay.header:
                continue  # files concatenated with their headers
            if all(c in names for c in REQUIRED):
                # The header of another layout (files of two gdrperf releases
                # joined with cat): the rows below it are read by it.
                lay = _Layout(_header(path, names, f"line {line}"))
                continue
        where = f"{path}:{line}"
        if len(rec) != lay.ncols:
            warn(f"{where}: skipped a malformed row "
                 f"({len(rec)} fields, the header has {lay.ncols}): a torn write?")
            continue
        row = _row(path, line, where, rec, lay, odd)
        if row is not None:
            out.append(row)
    classify(out)
    return out


def _num(path, line, rec, lay, col, i, limit, integer=False):
    """(value, why) of column COL (at I) of REC, the fast way first."""
    t = rec[i]
    if integer:
        if t.isascii() and t.isdigit() and len(t) < 20:
            v = int(t)
            if v <= limit:
                return v, None
    else:
        v = _fast_number(t, limit)
        if v is not None:
            return v, None
    v, why = parse_number(t, limit, integer)
    return (None, f"{col} {shown(t)} {why}") if why else (v, None)


def _row(path, line, where, rec, lay, odd):
    """One record as a row (the columns readers use, numbers checked), or None."""
    size, why = _num(path, line, rec, lay, "size_bytes", lay.size, MAX_SIZE, integer=True)
    if size is None or size == 0:
        warn(f"{where}: skipped a row: "
             f"{why or 'size_bytes ' + shown(rec[lay.size]) + ' is not a size'}")
        return None
    row = {k: _intern(rec[i]) if rec[i].isprintable() else clean(rec[i]) for k, i in lay.keep}
    row["_where"] = where
    row["size_bytes"] = size
    vals = {}
    for metric, col, i, limit in lay.nums:
        t = rec[i]
        if not t:
            continue
        v = _fast_number(t, limit)
        if v is None:
            v, why = _num(path, line, rec, lay, col, i, limit)
            if metric == "ceiling" and v == 0:
                # The bench tools write an unknown ceiling as empty, never 0:
                # a zero would make every number "above the ceiling".
                v, why = None, f"{col} {shown(t)} is zero, not a ceiling"
            if why and metric in SECONDARY and "_why" in row:
                continue  # the row's number was bad already: one warning is enough
            if why:
                warn(f"{where}: {why}: value ignored")
                row.setdefault("_why", f"line {line}: {why}")
                continue
            if v is None:
                continue
        elif metric == "ceiling" and v == 0:
            why = f"{col} {shown(t)} is zero, not a ceiling"
            if "_why" not in row:
                warn(f"{where}: {why}: value ignored")
                row["_why"] = f"line {line}: {why}"
            continue
        vals[metric] = v
    lo, hi, avg = vals.get("bw_min"), vals.get("bw_max"), vals.get("bw")
    if lo is not None and hi is not None and (
            lo > hi or (avg is not None and not lo - SLACK <= avg <= hi + SLACK)):
        # min..max must hold the mean; a spread that does not (swapped or
        # zeroed columns) would be an interval that says nothing true.
        h = lay.header
        warn(f"{where}: {SPREAD_COLUMNS['bw_min']} {shown(rec[h.index(SPREAD_COLUMNS['bw_min'])])} "
             f"and {SPREAD_COLUMNS['bw_max']} {shown(rec[h.index(SPREAD_COLUMNS['bw_max'])])} do "
             f"not hold {BW_COLUMN} {shown(rec[h.index(BW_COLUMN)] if BW_COLUMN in h else '')}: "
             f"the repeats' spread ignored")
        del vals["bw_min"], vals["bw_max"]
    if vals.get("t_start", 0) > vals.get("t_end", float("inf")):
        # A row cannot end before it starts: no window to compare with others.
        h = lay.header
        warn(f"{where}: t_start_s {shown(rec[h.index('t_start_s')])} is after t_end_s "
             f"{shown(rec[h.index('t_end_s')])}: the row's times ignored")
        del vals["t_start"], vals["t_end"]
    row["vals"] = vals
    row["bw"] = vals.get("bw")
    row["_file"] = path
    row["repeats"] = None
    if lay.repeats is not None:
        n, why = _num(path, line, rec, lay, "repeats", lay.repeats, 1 << 31, integer=True)
        if why:
            warn(f"{where}: {why}: value ignored")
        row["repeats"] = n
    row["looks"] = None
    if lay.looks is not None and rec[lay.looks].strip():
        k, why = _num(path, line, rec, lay, "looks", lay.looks, 1 << 16, integer=True)
        if why or k == 0:
            warn(f"{where}: looks {shown(rec[lay.looks])} "
                 f"{why or 'is not a count of looks'}: taken as 1")
        row["looks"] = k or None
    row["reps"] = None
    if lay.rounds is not None and rec[lay.rounds] and "bw" in vals:
        reps, why = parse_rounds(rec[lay.rounds], row["repeats"])
        if why:
            warn(f"{where}: {ROUNDS_COLUMN} {shown(rec[lay.rounds])} {why}: the row's rounds "
                 f"ignored")
        row["reps"] = reps
    status = row["status"].strip() or "ok"
    if status.lower() in STATUSES:
        status = status.lower()
    else:
        warn(f"{where}: status {shown(rec[lay.idx['status']])} is not ok, skipped or failed: "
             f"the row counts as not ok")
        status = status if len(status) <= 20 else status[:17] + "..."  # a table cell
    row["status"] = status
    row["role"] = row.get("role", "").strip()
    row.setdefault("note", "")
    row["path"] = row["path"].strip() or "?"
    verb = row["verb"].strip() or "?"
    remote = row.get("path_remote", "").strip()
    for col, val, known in (("verb", verb, VERB_ORDER), ("path", row["path"], PATH_ORDER),
                            ("path_remote", remote or "host", PATH_ORDER)):
        if val not in known and (col, val) not in odd:
            odd.add((col, val))  # once per file and value
            warn(f"{where}: {col} {shown(rec[lay.idx[col]])} is not "
                 f"{', '.join(known[:-1])} or {known[-1]}: counted apart (no --expect rule "
                 f"can name it)")
    # Each side its own memory (issue 48): a combination is a path of its
    # own, LOCAL:REMOTE; both sides alike keep the one name.
    if remote and remote != row["path"]:
        row["path"] = _intern(combo(row["path"], remote))
    if row.get("bidir", "").strip() == "1":
        # Both directions at once roughly doubles the number: never mix it in.
        verb += " bidir"
    row["verb_key"] = _intern(verb)
    return row


def classify(rows):
    """Mark each row of one file as a bandwidth or a latency row.

    A row with a latency value is a latency row, one with a bandwidth a
    bandwidth row. A row with neither (skipped, failed) belongs to the kind
    the file otherwise holds; in a file with both kinds it counts as bandwidth.
    """
    lat = _LAT_KEYS
    kinds = ["lat" if not lat.isdisjoint(r["vals"]) else "bw" if r["bw"] is not None else None
             for r in rows]
    default = "lat" if "lat" in kinds and "bw" not in kinds else "bw"
    for r, k in zip(rows, kinds):
        r["kind"] = k or default
