"""--prom FILE: the verdict and the gate as a Prometheus textfile-collector file.

The numbers are the table's (one cell per verb/size/path: its ratio to host
and that ratio's interval, docs/gdr-ab.md) and the gate's (each rule's outcome
at each size it covers, as 0/1/3, gdr-ab's exit statuses). Names follow the
C tools' convention (docs/cluster-outputs.md): a gdrperf_ prefix, the unit in
the name, labels host, gpu, nic, path, verb, size_bytes (plus peer, and rule
on the gate). With --matrix every node pair gets its own cells and gate.
The file is written by outfile.write_file: replaced atomically, never half.
"""

from . import pairs
from .common import EXIT_FAIL, EXIT_OK, EXIT_UNDECIDED, PATH_ORDER, ordered
from .gate import FAIL, PASS, UNDECIDED
from .table import BW
from .verdict import judge

GATE_CODE = {PASS: EXIT_OK, FAIL: EXIT_FAIL, UNDECIDED: EXIT_UNDECIDED}

# The verdict word of a GPU path's bandwidth cell, one gauge per word (a
# state set: 1 for the cell's word, 0 for the others).
VERDICTS = ("slower", "same", "faster", "no_interval", "no_host", "not_measured")

FAMILIES = (
    ("gdrperf_ab_ratio",
     "Bandwidth of the path over host memory's at the same verb, size and role "
     "(median of bw_avg_gbps)."),
    ("gdrperf_ab_ratio_lower",
     "Low end of the ratio's interval: with rounds, one of the verdict's intervals that "
     "hold all at once with probability >= 1 - alpha; without, path min / host max over "
     "the repeats (no claim)."),
    ("gdrperf_ab_ratio_upper",
     "High end of the ratio's interval (as the low end's)."),
    ("gdrperf_ab_verdict",
     "The path against host memory: 1 for the cell's verdict (slower, same, faster: "
     "the ratio's interval below, holding or above 1.0 at the error rate; no_interval: "
     "one repeat or no rounds in the file; "
     "no_host: no host row to compare with; not_measured: skipped or failed), 0 for "
     "the others."),
    ("gdrperf_ab_bw_gbps", "Median bw_avg_gbps of the cell's rows, in Gb/s (10^9 bit/s)."),
    ("gdrperf_ab_lat_ratio",
     "Latency (median lat_p50_us) of the path over host memory's at the same verb, "
     "size and role."),
    ("gdrperf_ab_anomalies",
     "Anomalies found in the cell (marked ! in the table): above host, above ceiling, "
     "CPU-bound, wide spread."),
    ("gdrperf_ab_gate",
     "An --expect rule at one verb and size: 0 pass, 1 fail, 3 undecided (gdr-ab's "
     "exit statuses); size_bytes empty when the rule failed before any size."),
    ("gdrperf_ab_gate_status",
     "The gate over every rule and size of the node pair: 0 all passed, 1 one failed, "
     "3 none failed and one undecided (gdr-ab's exit status, --strict aside)."),
)


def escape(value):
    """A label value as the text exposition format wants it."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def escape_help(text):
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _num(v):
    return format(v, ".6g")


def _joined(rows, col):
    """The distinct values of COL in ROWS, sorted and joined with ','."""
    return ",".join(sorted({r.get(col, "").strip() for r in rows} - {""}))


def verdict(cell):
    if cell.value is None:
        return "not_measured"
    if cell.ratio is None:
        return "no_host"
    if cell.iv is None:
        return "no_interval"  # one repeat, or no rounds in the file: no claim
    return {"equal": "same", "below": "slower", "above": "faster"}[cell.word]


def _scopes(rows, v, args, rules, baseline):
    """[(host, peer, verdict)]: the whole input, or with --matrix each node
    pair's own verdict (its cells, anomalies and gate)."""
    if not args.matrix:
        counted = [r for r in rows if r["role"] == "client"] or rows
        return [(_joined(counted, "host"), _joined(counted, "peer"), v)]
    out = []
    for (host, peer), grp in pairs.node_pairs(rows).items():
        out.append((host, peer, judge(grp, rules, args.alpha, args.margin, args.max_spread,
                                      baseline, across_pairs=True)))
    return out


def _labels(labels):
    """[(name, value)] as {name="value",...}."""
    return "{" + ",".join(f'{k}="{escape(v)}"' for k, v in labels) + "}"


def _cell_labels(host, peer, cell, path, verb, size):
    return [("host", host), ("peer", peer), ("gpu", _joined(cell.rows, "gpu")),
            ("nic", _joined(cell.rows, "nic")), ("path", path),
            ("verb", verb.replace(" ", "-")), ("size_bytes", str(size))]


def _cells(table):
    for verb in table.verbs():
        sizes = table.cells[verb]
        for size in sorted(sizes):
            for path in ordered(sizes[size], PATH_ORDER):
                yield verb, size, path, sizes[size][path]


def _cell_samples(add, host, peer, tables):
    bw, lat = tables
    for verb, size, path, c in _cells(bw):
        labels = _cell_labels(host, peer, c, path, verb, size)
        if c.value is not None:
            add("gdrperf_ab_bw_gbps", labels, _num(c.value))
        add("gdrperf_ab_anomalies", labels, str(len(c.flags)))
        if path == "host":
            continue
        if c.ratio is not None:
            add("gdrperf_ab_ratio", labels, _num(c.ratio))
        if c.rlo is not None:
            add("gdrperf_ab_ratio_lower", labels, _num(c.rlo))
            add("gdrperf_ab_ratio_upper", labels, _num(c.rhi))
        word = verdict(c)
        for v in VERDICTS:
            add("gdrperf_ab_verdict", labels + [("verdict", v)], "1" if v == word else "0")
    for verb, size, path, c in _cells(lat):
        if path != "host" and c.ratio is not None:
            add("gdrperf_ab_lat_ratio", _cell_labels(host, peer, c, path, verb, size),
                _num(c.ratio))


def _gate_samples(add, host, peer, v):
    tables = v.tables
    for rule, verb, size, outcome in v.per_size:
        table = tables[0] if rule.kind is BW else tables[1]
        cell = table.cells.get(verb, {}).get(size, {}).get(rule.path) if verb else None
        rows = cell.rows if cell is not None else []
        add("gdrperf_ab_gate",
            [("host", host), ("peer", peer), ("gpu", _joined(rows, "gpu")),
             ("nic", _joined(rows, "nic")), ("path", rule.path),
             ("verb", (verb or "").replace(" ", "-")),
             ("size_bytes", "" if size is None else str(size)), ("rule", rule.text)],
            str(GATE_CODE[outcome]))
    outcomes = {o for o, _line in v.gate_lines}
    worst = FAIL if FAIL in outcomes else UNDECIDED if UNDECIDED in outcomes else PASS
    add("gdrperf_ab_gate_status", [("host", host), ("peer", peer)], str(GATE_CODE[worst]))


def render(rows, v, args, rules=(), baseline=None):
    """The whole file, as bytes: HELP and TYPE, then the samples, per family."""
    samples = {name: [] for name, _help in FAMILIES}

    def add(name, labels, value):
        samples[name].append(f"{name}{_labels(labels)} {value}")

    for host, peer, pv in _scopes(rows, v, args, rules, baseline):
        _cell_samples(add, host, peer, pv.tables)
        if rules:
            _gate_samples(add, host, peer, pv)
    out = []
    for name, text in FAMILIES:
        if samples[name]:
            out += [f"# HELP {name} {escape_help(text)}", f"# TYPE {name} gauge"]
            out += samples[name]
    return ("\n".join(out) + "\n" if out else "").encode("utf-8")
