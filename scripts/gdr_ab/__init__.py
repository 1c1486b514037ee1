"""gdr-ab's modules: rows (CSV in), table (verdict), gate (--expect),
outfile (atomic output), plots (PNG), pairs (per pair and node x node)."""
