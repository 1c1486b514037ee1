# A generated hwloc 2.x XML topology for the scale tests (tests/topo/inputs.sh):
#   awk -v gpus=G -v nics=N -f gen-large.awk
# one NUMA node; host bridge i (PCI domain i) holds a bridge with GPU i (when
# i < G) and NIC mlx5_i (when i < N) below it, so GPU i and mlx5_i are PIX and
# every other pair is NODE.
BEGIN {
	q = "\""
	set = "cpuset=" q "0x1" q " complete_cpuset=" q "0x1" q " allowed_cpuset=" q "0x1" q \
	    " nodeset=" q "0x1" q " complete_nodeset=" q "0x1" q " allowed_nodeset=" q "0x1" q
	print "<?xml version=" q "1.0" q " encoding=" q "UTF-8" q "?>"
	print "<!DOCTYPE topology SYSTEM " q "hwloc2.dtd" q ">"
	print "<topology version=" q "2.0" q ">"
	print "<object type=" q "Machine" q " os_index=" q "0" q " " set " gp_index=" q "1" q ">"
	print "<object type=" q "NUMANode" q " os_index=" q "0" q " " set " gp_index=" q "2" q \
	    " local_memory=" q "1073741824" q "/>"
	print "<object type=" q "PU" q " os_index=" q "0" q " " set " gp_index=" q "3" q "/>"
	gp = 10
	n = gpus > nics ? gpus : nics
	for (i = 0; i < n; i++) {
		d = sprintf("%04x", i)
		printf "<object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"%s:[00-01]\">\n", gp++, d
		printf "<object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"1-1\" depth=\"1\" bridge_pci=\"%s:[01-01]\" pci_busid=\"%s:00:00.0\" pci_type=\"0604 [1000:c030] [0000:0000] 00\">\n", gp++, d, d
		if (i < gpus)
			printf "<object type=\"PCIDev\" gp_index=\"%d\" pci_busid=\"%s:01:00.0\" pci_type=\"0302 [10de:2330] [0000:0000] 00\" pci_link_speed=\"63.015385\"/>\n", gp++, d
		if (i < nics) {
			printf "<object type=\"PCIDev\" gp_index=\"%d\" pci_busid=\"%s:01:01.0\" pci_type=\"0207 [15b3:101d] [0000:0000] 00\" pci_link_speed=\"31.507692\">\n", gp++, d
			printf "<object type=\"OSDev\" gp_index=\"%d\" name=\"mlx5_%d\" osdev_type=\"3\"/>\n", gp++, i
			print "</object>"
		}
		print "</object>"
		print "</object>"
	}
	print "</object>"
	print "</topology>"
}
