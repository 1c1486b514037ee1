"""--expect: rules that a run must meet, for cluster acceptance.

    RULE    := LHS OP RHS
    LHS     := [VERB "."] PATH ["." METRIC] ["@" SIZES]
    OP      := ">=" | "<=" | ">" | "<"
    RHS     := NUMBER [UNIT] | [NUMBER "*"] REF
    REF     := [VERB "."] PATH ["." METRIC] | "ceiling" | "baseline"
    VERB    := write | read | write-bidir | read-bidir
    METRIC  := bw | min_us | p50_us | p90_us | p99_us | p999_us | max_us | avg_us
               (lat_p50_us etc. are accepted too)
    SIZES   := SIZE | SIZE ".." SIZE | SIZE ".." | ".." SIZE | all
    SIZE    := digits [K | KiB | M | MiB | G | GiB]   (powers of 1024)
    UNIT    := Gbps | Gb/s | Mbps | Mb/s | Tbps | Tb/s  (bw; default Gb/s)
             | us | ns | ms                            (latency; default us)

A rule is checked for each verb (LHS's VERB, or each one-way verb in the data)
at each size of SIZES (default: the summary's window, table.window(); latency
at the smallest size present). Every one of those must hold. Data that is
missing (no rows, a skipped or failed path, no host baseline, no ceiling_gbps)
fails the rule with the reason: never a silent pass.

A bandwidth rule is judged on the intervals from the repeats (spread.py): it
passes when the whole interval meets the threshold, fails when none of it
does, and is UNDECIDED (spread too large) when the interval straddles it. A
number without an interval (one repeat, a latency percentile) is judged as it
is, and the line says so.
"""

import re
from collections import OrderedDict

from .common import PATH_ORDER, UsageError, combo, did_you_mean, fmt_size, ordered
from .rows import LAT_COLUMNS, MAX_GBPS, MAX_US
from . import anomalies, stats
from .stats import fmt_interval, fmt_ratio
from .table import BW, LAT, pairs, window

PASS, FAIL, UNDECIDED = "PASS", "FAIL", "UNDECIDED"

VERBS = {"write": "write", "read": "read", "write-bidir": "write bidir",
         "read-bidir": "read bidir"}
METRICS = {"bw": BW, **{m: LAT for m in LAT_COLUMNS}}
BW_UNITS = {"gbps": 1.0, "gb/s": 1.0, "mbps": 1e-3, "mb/s": 1e-3, "tbps": 1e3, "tb/s": 1e3}
LAT_UNITS = {"us": 1.0, "ns": 1e-3, "ms": 1e3}
SIZE_UNITS = {"": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20,
              "g": 1 << 30, "gib": 1 << 30}
OPS = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b,
       ">": lambda a, b: a > b, "<": lambda a, b: a < b}
_OP_RE = re.compile(r"(>=|<=|>|<)")
_NAME_RE = re.compile(r"[a-z][a-z0-9_]*(?::[a-z][a-z0-9_]*)?")
_NUM = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[-+]?[0-9]{1,3})?"
_ABS_RE = re.compile(rf"({_NUM})\s*([a-z/]*)")
_REL_RE = re.compile(rf"(?:({_NUM})\s*\*\s*)?([a-z0-9_.:-]+)")
_SIZE_RE = re.compile(r"([0-9]{1,16})([a-z]*)")


class Rule:
    def __init__(self, text):
        self.text = text.strip()
        parts = _OP_RE.split(self.text.lower())
        if len(parts) != 3:
            raise UsageError(f"--expect '{text}': needs one comparison (>=, <=, > or <)")
        lhs, self.op, rhs = (p.strip() for p in parts)
        lhs, at, sizes = lhs.partition("@")
        self.verb, self.path, metric = self._term(lhs, text, allow_ceiling=False)
        self.metric = metric or "bw"
        self.kind = METRICS[self.metric]
        self.sizes = self._sizes(sizes, text) if at else None
        self._rhs(rhs, text)

    def _term(self, term, text, allow_ceiling):
        words = term.split(".")
        verb = None
        if words and words[0] in VERBS:
            verb = VERBS[words.pop(0)]
        elif len(words) >= 2 and words[0] not in PATH_ORDER and words[1] in PATH_ORDER:
            raise UsageError(f"--expect '{text}': unknown verb '{words[0]}'"
                             f"{did_you_mean(words[0], VERBS)} (one of {', '.join(VERBS)})")
        metric = None
        if len(words) == 2:
            metric = words.pop()
            metric = metric[4:] if metric.startswith("lat_") else metric
            if metric not in METRICS:
                raise UsageError(f"--expect '{text}': unknown metric '{metric}'"
                                 f"{did_you_mean(metric, METRICS)} (one of {', '.join(METRICS)})")
        if len(words) != 1 or not _NAME_RE.fullmatch(words[0]):
            raise UsageError(f"--expect '{text}': '{term}' is not [VERB.]PATH[.METRIC] "
                             f"(e.g. dmabuf, write.dmabuf, write.dmabuf.p50_us)")
        path = words[0]
        if path in VERBS or path in METRICS:
            raise UsageError(f"--expect '{text}': '{term}' names no path")
        if path in ("ceiling", "baseline") and not allow_ceiling:
            raise UsageError(f"--expect '{text}': the {path} is a reference, not a path "
                             f"(e.g. host>=0.9*{path})")
        # Each side its own memory (issue 48): LOCAL:REMOTE, the client's side first.
        for side in path.split(":", 1) if ":" in path else [path]:
            if side not in PATH_ORDER:
                raise UsageError(f"--expect '{text}': unknown path '{side}'"
                                 f"{did_you_mean(side, PATH_ORDER + ('ceiling', 'baseline'))} "
                                 f"(paths: {', '.join(PATH_ORDER)}, or LOCAL:REMOTE; "
                                 f"references: ceiling, baseline)")
        return verb, combo(*path.split(":", 1)) if ":" in path else path, metric

    @staticmethod
    def _size(s, text):
        m = _SIZE_RE.fullmatch(s)
        if not m or m.group(2) not in SIZE_UNITS:
            raise UsageError(f"--expect '{text}': size '{s}' is not a size "
                             f"(4096, 4K, 4KiB, 1M, 1MiB, 1G)")
        return int(m.group(1)) * SIZE_UNITS[m.group(2)]

    def _sizes(self, spec, text):
        """(lo, hi) inclusive; None for either end means open."""
        if spec == "all":
            return (None, None)
        lo, dots, hi = spec.partition("..")
        if not dots:
            n = self._size(spec, text)
            return (n, n)
        if not lo and not hi:
            raise UsageError(f"--expect '{text}': size range '..' needs an end")
        lo = self._size(lo, text) if lo else None
        hi = self._size(hi, text) if hi else None
        if lo is not None and hi is not None and lo > hi:
            raise UsageError(f"--expect '{text}': size range {spec} is empty")
        return (lo, hi)

    def _rhs(self, rhs, text):
        self.factor, self.ref = 1.0, None
        self.threshold = None
        m = _ABS_RE.fullmatch(rhs)
        if m:
            units = BW_UNITS if self.kind is BW else LAT_UNITS
            unit = m.group(2)
            if unit and unit not in units:
                raise UsageError(f"--expect '{text}': unit '{unit}' does not fit {self.metric} "
                                 f"(one of {', '.join(units)})")
            self.threshold = float(m.group(1)) * (units[unit] if unit else 1.0)
            self.unit = self.kind.unit
            limit = MAX_GBPS if self.kind is BW else MAX_US
            if not self.threshold <= limit:  # also inf ('1e999') and nan
                raise UsageError(f"--expect '{text}': {rhs} is out of range (above "
                                 f"{limit:g} {self.kind.unit})")
            return
        m = _REL_RE.fullmatch(rhs)
        if not m:
            raise UsageError(f"--expect '{text}': '{rhs}' is not NUMBER[UNIT], PATH, "
                             f"FACTOR*PATH, FACTOR*ceiling or FACTOR*baseline")
        if m.group(1):
            self.factor = float(m.group(1))
        if not 0 < self.factor <= 1e6:
            raise UsageError(f"--expect '{text}': factor {m.group(1)} is out of range")
        if m.group(2) == "ceiling":
            if self.kind is not BW:
                raise UsageError(f"--expect '{text}': the ceiling is a bandwidth, "
                                 f"{self.metric} is not")
            self.ref = ("ceiling", None, None)
            return
        if m.group(2) == "baseline":
            self.ref = ("baseline", None, (self.path, self.metric))
            return
        verb, path, metric = self._term(m.group(2), text, allow_ceiling=False)
        metric = metric or self.metric  # REF without a metric: the LHS's
        if METRICS[metric] is not self.kind:
            raise UsageError(f"--expect '{text}': {self.metric} and {metric} are not "
                             f"the same kind of number")
        self.ref = ("path", verb, (path, metric))


def parse_rules(values):
    """Every --expect value (each may hold several rules, comma-separated)."""
    rules = []
    for v in values or []:
        for part in v.split(","):
            if part.strip():
                rules.append(Rule(part))
            else:
                raise UsageError(f"--expect '{v}': an empty rule")
    return rules


def _fmt(v, kind):
    return f"{v:.3f} {kind.unit}"


def default_sizes(all_sizes, kind):
    if kind is BW:
        return window(all_sizes, kind)[0]
    return all_sizes[:1]


def select_sizes(rule, all_sizes):
    if rule.sizes is None:
        return default_sizes(all_sizes, rule.kind)
    lo, hi = rule.sizes
    return [s for s in all_sizes if (lo is None or s >= lo) and (hi is None or s <= hi)]


def sizes_text(rule):
    if rule.sizes is None:
        return ">= 1 MiB (or the largest third)" if rule.kind is BW else "the smallest size"
    lo, hi = rule.sizes
    if lo == hi and lo is not None:
        return fmt_size(lo)
    return f"{fmt_size(lo) if lo else ''}..{fmt_size(hi) if hi else ''}"


# Why a size's check came out as it did, beyond its numbers (check_at).
MISSING, VOID, NO_INTERVAL = "missing", "void", "no interval"


def _ratio_to_host(rule, verb):
    """Whether RULE compares its path's bandwidth with host's at the same verb
    and size: the cells' own intervals decide it, no interval of its own."""
    return (rule.kind is BW and rule.metric == "bw" and rule.ref is not None
            and rule.ref[0] == "path" and rule.ref[2][0] == "host"
            and rule.ref[2][1] == "bw" and (rule.ref[1] is None or rule.ref[1] == verb))


def _rounds(cell):
    return [x for reps in cell.runs.values() for x in reps]


def extra_intervals(rules, tables, baseline=None):
    """How many intervals the rules need beyond the cells' and summaries'
    (each counts in the verdict's family): one per verb and size where a
    bandwidth rule compares with another path, a number, the ceiling, a
    baseline or another verb, and rounds exist."""
    n = 0
    bw = tables[BW.name]
    for rule in rules:
        if rule.kind is not BW:
            continue
        verbs = [rule.verb] if rule.verb else [v for v in bw.verbs() if " " not in v]
        for verb in verbs:
            if _ratio_to_host(rule, verb):
                continue
            sizes = select_sizes(rule, sorted(bw.cells.get(verb, {})))
            for size in sizes:
                cell = bw.cells.get(verb, {}).get(size, {}).get(rule.path)
                if cell is not None and (cell.runs or cell.spread):
                    n += 1
    return n


def _fmt(v, kind):
    return f"{v:.3f} {kind.unit}"


def judge(op, lo, hi, llo, lhi):
    """PASS when all of [LO, HI] meets OP against all of [LLO, LHI], FAIL when
    none of it does, else UNDECIDED."""
    if op in (">=", ">"):
        if OPS[op](lo, lhi):
            return PASS
        return FAIL if not OPS[op](hi, llo) else UNDECIDED
    if OPS[op](hi, llo):
        return PASS
    return FAIL if not OPS[op](lo, lhi) else UNDECIDED


def _void(rule, table, verb, size, cell, ref):
    """Why the comparison at this size is void, or ''. Impossible numbers
    (a path above host: host's own may be impaired; above the ceiling for a
    rule against a number), paths not side by side, or a CPU-bound side
    where the two paths cost the CPU differently."""
    cells = table.cells.get(verb, {}).get(size, {})
    comparing = ref is not None
    if comparing:
        if any("one after another" in c.flags for c in (cell, ref)):
            return "paths measured one after another"
        above = [p for p, c in cells.items() if "above host" in c.flags]
        if above and ("host" in (rule.path, rule.ref[2][0]) or rule.path in above
                      or rule.ref[2][0] in above):
            return f"{', '.join(above)} above host (impossible: host's number is suspect)"
        busy = [c for c in (cell, ref) if "CPU-bound" in c.flags]
        if busy:
            cpu = [c.metrics.get("cpu") for c in (cell, ref)]
            bounce = [p.partition(":")[0] == "bounce" for p in (rule.path, rule.ref[2][0])]
            if (bounce[0] != bounce[1] or None in cpu
                    or abs(cpu[0] - cpu[1]) > anomalies.CPU_COST_GAP):
                return "a CPU-bound side, and the two paths cost the CPU differently"
    elif "above ceiling" in cell.flags:
        return "above the pair's ceiling (the ceiling or the timing is wrong)"
    return ""


def check_at(rule, table, verb, size, baseline=None, family=None):
    """(outcome, size text, detail, margin, why) for RULE at one verb and
    size of TABLE; the margin (how far from failing, relative) finds the
    closest size; why: MISSING (no data: the rule fails), VOID (an anomaly
    voids the comparison), NO_INTERVAL, or None."""
    cells = table.cells.get(verb, {}).get(size, {})
    at = fmt_size(size)
    cell = cells.get(rule.path)
    if cell is None:
        known = ordered({p for c in table.cells.get(verb, {}).values() for p in c}, PATH_ORDER)
        hint = "" if rule.path in known else f" (the {verb} paths: {', '.join(known)})"
        return FAIL, at, f"no {rule.path} rows{hint}", 0, MISSING
    val = cell.metrics.get(rule.metric)
    if val is None:
        return FAIL, at, f"{rule.path} {_why(cell, rule.path, rule.metric)}", 0, MISSING
    what = f"{rule.path}" + ("" if rule.metric == "bw" else f" {rule.metric}")
    ref = None
    if rule.threshold is not None:
        limit, said = rule.threshold, _fmt(rule.threshold, rule.kind)
    elif rule.ref[0] == "ceiling":
        if cell.ceiling is None:
            return FAIL, at, f"the {rule.path} rows carry no ceiling_gbps", 0, MISSING
        limit = rule.factor * cell.ceiling
        said = f"{_fmt(limit, rule.kind)} = {rule.factor:g} x ceiling {cell.ceiling:.3f}"
    else:
        base = rule.ref[0] == "baseline"
        rverb = rule.ref[1] or verb
        rpath, rmetric = rule.ref[2]
        if base:
            if baseline is None:
                return FAIL, at, "no --baseline given", 0, MISSING
            src = baseline.get(rule.kind.name)
            rname = f"baseline {rpath}"
        else:
            src = table
            rname = (f"{rverb} " if rule.ref[1] else "") + rpath
        ref = src.same_role(rverb, size, rpath, cell) if src is not None else None
        if ref is None:
            return FAIL, at, f"no {rname} rows ({cell.role} role) to compare with", 0, MISSING
        rval = ref.metrics.get(rmetric)
        if rval is None:
            return FAIL, at, f"{rname} {_why(ref, rpath, rmetric)}", 0, MISSING
        limit = rule.factor
        said = f"{rule.factor:g} x {rname}"
        if not base and rverb == verb:
            ref = _own(table, verb, size, rpath, cell) or ref
    if rule.kind is not BW:
        # Latency: a row is one run of many samples with no rounds: judged as it is.
        if ref is not None:
            lim = rule.factor * ref.metrics[rule.ref[2][1]]
            said = f"{_fmt(lim, rule.kind)} = {said} {ref.metrics[rule.ref[2][1]]:.3f}"
        else:
            lim = limit
        outcome = PASS if OPS[rule.op](val, lim) else FAIL
        op = rule.op if outcome == PASS else _neg(rule.op)
        rel = ((val - lim) if rule.op in (">=", ">") else (lim - val)) / (lim or 1)
        return (outcome, at, f"{what} {_fmt(val, rule.kind)} {op} {said} (latency: no "
                             f"interval, not at the error rate)", rel, None)
    void = _void(rule, table, verb, size, cell, ref if rule.ref and rule.ref[0] == "path"
                 else None)
    iv = _interval(rule, table, verb, size, cell, ref, family)
    if void and iv is None:
        return UNDECIDED, at, f"void: {void}", 0, VOID
    if iv is None:
        n = cell.n_rep
        why = ("one repeat" if n == 1 else f"fewer than {stats.MIN_ROUNDS} rounds"
               + (" in one run with the reference" if ref is not None and cell.runs else ""))
        return UNDECIDED, at, f"{what}: {why}: no interval to decide at the error rate", 0, \
            NO_INTERVAL
    ratio = ref is not None or rule.ref is not None and rule.ref[0] == "ceiling"
    if rule.ref is not None and rule.ref[0] == "ceiling":
        # The ceiling is a number: the path's level against it, as Gb/s.
        ratio = False
    if ratio:
        word = "below" if iv.hi < limit else "above" if iv.lo > limit else None
        shown = (f"{what} {fmt_ratio(iv.est)}x {said.split(' x ', 1)[1]} "
                 f"({fmt_interval(iv.lo, iv.hi, word, limit)})")
        thr = f"{limit:g}"
    else:
        word = "below" if iv.hi < limit else "above" if iv.lo > limit else None
        ends = fmt_interval(iv.lo / limit, iv.hi / limit, word).split("-")
        # The Gb/s ends with 3 decimals, more where they would print the threshold.
        dec = max(3, len(ends[0].split(".")[1]) + 1)
        shown = f"{what} {_fmt(iv.est, rule.kind)} ({iv.lo:.{dec}f}-{iv.hi:.{dec}f})"
        thr = said
    outcome = judge(rule.op, iv.lo, iv.hi, limit, limit)
    margin = ((iv.lo - limit) if rule.op in (">=", ">") else (limit - iv.hi)) / (limit or 1)
    if void:
        return UNDECIDED, at, f"void: {void} ({shown})", margin, VOID
    op = {PASS: rule.op, FAIL: _neg(rule.op), UNDECIDED: "vs"}[outcome]
    return outcome, at, f"{shown} {op} {thr}", margin, None


def _own(table, verb, size, path, cell):
    """PATH's cell at this size in the table itself (its rounds), when of CELL's role."""
    c = table.cells.get(verb, {}).get(size, {}).get(path)
    return c if c is not None and c.role == cell.role else None


def _interval(rule, table, verb, size, cell, ref, family):
    """The interval that decides RULE at this size, at the family's level;
    None without rounds or a range to take one from."""
    if family is None:
        return None
    if _ratio_to_host(rule, verb):
        return cell.iv
    if rule.threshold is not None or rule.ref[0] == "ceiling":
        q = family.q(cell.looks)
        if cell.runs:
            return stats.level(_rounds(cell), q)
        return stats.Interval(*cell.spread, 0, q) if cell.spread else None
    if ref is None:
        return None
    q = family.q(max(cell.looks, ref.looks))
    if cell.runs and ref.runs:
        if rule.ref[0] == "path" and (rule.ref[1] or verb) == verb:
            num, den = pairs(cell, ref)
            return stats.paired(num, den, q)
        return stats.welch(_rounds(cell), _rounds(ref), q)
    if cell.spread and ref.spread:
        return stats.unpaired(cell.spread, ref.spread, q)
    return None


def _why(cell, path, metric):
    why = cell.why_not(metric)
    # The program's notes start with the path ("peermem: ..."): say it once.
    return why.replace(f": {path}: ", ": ", 1)


def _neg(op):
    return {">=": "<", "<=": ">", ">": "<=", "<": ">="}[op]


def _pooled_fail(rule, table, verb, family):
    """The summary's pooled interval wholly on the failing side of a default
    ratio-to-host rule: then some size fails it. (detail) or None."""
    claim = getattr(table, "summaries", {}).get((verb, rule.path))
    if (rule.sizes is not None or claim is None or claim.iv is None or family is None
            or not _ratio_to_host(rule, verb)):
        return None
    iv = claim.iv
    if (rule.op in (">=", ">") and iv.hi < rule.factor) or \
            (rule.op in ("<=", "<") and iv.lo > rule.factor):
        word = "below" if iv.hi < rule.factor else "above"
        return (f"the summary: {rule.path} {fmt_ratio(iv.est)}x host "
                f"({fmt_interval(iv.lo, iv.hi, word, rule.factor)}) {_neg(rule.op)} "
                f"{rule.factor:g}")
    return None


def evaluate(rules, tables, scope="", baseline=None, per_size=None, family=None, verdict=None):
    """[(outcome, line)] for every rule and verb; SCOPE prefixes the lines (a
    node pair); BASELINE ({kind: Table}) is what 'baseline' refers to.
    PER_SIZE, a list, gets (rule, verb, size, outcome) for every size checked
    (verb or size None where the rule failed before any size: no rows).
    VERDICT.gate gets (rule text, verb, outcome)."""
    results = []
    per_size = [] if per_size is None else per_size
    for rule in rules:
        table = tables[rule.kind.name]
        verbs = [rule.verb] if rule.verb else [v for v in table.verbs() if " " not in v]
        where = f"{scope} " if scope else ""
        if not verbs:
            bidir = [v for v in table.verbs() if " " in v]
            hint = (f" (only {', '.join(bidir)}: name it, e.g. "
                    f"{bidir[0].replace(' ', '-')}.{rule.path})" if bidir else "")
            results.append((FAIL, f"FAIL {where}{rule.text}: no {rule.kind.noun} rows "
                                  f"for any verb{hint}"))
            per_size.append((rule, None, None, FAIL))
            if verdict is not None:
                verdict.gate.append((rule.text, None, FAIL))
            continue
        for verb in verbs:
            outcome, line = _rule_at_verb(rule, table, verb, where, baseline, per_size, family)
            results.append((outcome, line))
            if verdict is not None:
                verdict.gate.append((rule.text, verb, outcome))
    return results


def _rule_at_verb(rule, table, verb, where, baseline, per_size, family):
    all_sizes = sorted(table.cells.get(verb, {}))
    sizes = select_sizes(rule, all_sizes)
    head = f"{where}{verb}: {rule.text}"
    if not all_sizes:
        per_size.append((rule, verb, None, FAIL))
        return FAIL, f"FAIL {head}: no {verb} {rule.kind.noun} rows"
    if not sizes:
        per_size.append((rule, verb, None, FAIL))
        return FAIL, f"FAIL {head}: no rows at {sizes_text(rule)}"
    checks = [check_at(rule, table, verb, s, baseline, family) for s in sizes]
    span = ", ".join(fmt_size(s) for s in sizes) if len(sizes) <= 4 else \
        f"{len(sizes)} sizes {fmt_size(sizes[0])}..{fmt_size(sizes[-1])}"
    missing = [c for c in checks if c[4] == MISSING]
    voids = [c for c in checks if c[4] == VOID]
    pooled = None if voids or missing else _pooled_fail(rule, table, verb, family)
    if missing:
        outcome = FAIL
    elif voids:
        outcome = UNDECIDED
    elif pooled or any(c[0] == FAIL for c in checks):
        outcome = FAIL
    elif all(c[0] == PASS for c in checks):
        outcome = PASS
    else:
        outcome = UNDECIDED
    for s, c in zip(sizes, checks):
        per_size.append((rule, verb, s, c[0] if outcome != UNDECIDED or c[0] != FAIL
                         else UNDECIDED))
    if outcome == PASS:
        worst = min(checks, key=lambda c: c[3])
        return PASS, f"PASS {head}: at {span}; closest at {worst[1]}: {worst[2]}"
    pick = {FAIL: missing or [c for c in checks if c[0] == FAIL],
            UNDECIDED: voids or [c for c in checks if c[0] == UNDECIDED]}[outcome]
    bad = OrderedDict()
    for _got, at, detail, _m, _w in pick:
        # The same missing data at several sizes is said once.
        bad.setdefault(detail, (detail, []))[1].append(at)
    parts = [f"at {', '.join(ats)}: {detail}" for detail, ats in bad.values()]
    if outcome == FAIL and pooled and not pick:
        parts = [pooled]
    elif outcome == FAIL and pooled:
        parts.append(pooled)
    more = f"; and {len(parts) - 3} more" if len(parts) > 3 else ""
    return outcome, f"{outcome} {head}: {'; '.join(parts[:3])}{more}"
