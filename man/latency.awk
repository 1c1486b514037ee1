# gdr_write_lat.1 / gdr_read_lat.1 from gdr_write_bw.1 (mk/man.am): the
# latency tools' names in NAME and SYNOPSIS, man/latency.roff at the head of
# DESCRIPTION, and no .TP entry for an option they refuse (the same list as
# refused[] in common/core/lat_opts.c; tests/docs/t_help_man.sh compares the
# page with --help both ways). Variables: title (GDR_WRITE_LAT), roff (the
# latency.roff to insert).
BEGIN {
	n = split("qp tx-depth post_list cq-mod bidirectional duration validate pin no-pin" \
	    " alpha margin time-per-size", r, " ")
	for (i = 1; i <= n; i++) {
		name = r[i]
		gsub(/-/, "\\\\-", name)
		refused["\\-\\-" name] = 1
	}
}
# The long option an entry's tag line names: \-\-NAME.
function tag_option(line,    m) {
	if (match(line, /\\-\\-[A-Za-z0-9_\\-]+/) == 0)
		return ""
	m = substr(line, RSTART, RLENGTH)
	sub(/\\-$/, "", m)
	return m
}
/^\.TH / { sub(/^\.TH GDR_WRITE_BW /, ".TH " title " ") }
/^gdr_write_bw, gdr_read_bw \\- RDMA WRITE\/READ bandwidth/ {
	sub(/RDMA WRITE\/READ bandwidth/, "RDMA WRITE/READ latency")
	sub(/^gdr_write_bw, gdr_read_bw/, "gdr_write_lat, gdr_read_lat")
}
/^\.SH / { section = $2 }
section == "SYNOPSIS" { gsub(/_bw/, "_lat") }
pending {
	pending = 0
	skip = (tag_option($0) in refused)
	if (!skip)
		print ".TP"
}
/^\.TP/ { pending = 1; next }
/^\.(SH|SS|PP)/ { skip = 0 }
skip { next }
{ print }
/^\.SH DESCRIPTION/ {
	while ((getline line < roff) > 0)
		print line
}
