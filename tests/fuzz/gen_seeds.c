/*
 * Writes the fuzz_proto seed corpus: one real encoded message of each type
 * (and a hello), as the programs build them. Not part of the build; rerun
 * after a protocol change:
 *   cc -I../.. -iquote ../../common/core (one -iquote per common/ part) gen_seeds.c ../../common/libgdrperf.a \
 *      -libverbs -lrdmacm -lhwloc -ldl -o /tmp/gen_seeds && /tmp/gen_seeds corpus/fuzz_proto
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "options.h"
#include "proto.h"

static int write_seed(const char *dir, const char *name, const uint8_t *buf, int n)
{
	char path[512];
	FILE *f;

	if (n < 0) {
		fprintf(stderr, "%s: encode failed (%d)\n", name, n);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, (size_t)n, f) != (size_t)n || fclose(f)) {
		perror(path);
		return 1;
	}
	return 0;
}

static int seed(const char *dir, const char *name, const struct gdr_msg *m)
{
	uint8_t buf[GDR_CTRL_MAX];

	return write_seed(dir, name, buf, gdr_msg_encode(m, buf, sizeof(buf)));
}

int main(int argc, char **argv)
{
	static struct gdr_msg m;
	struct gdr_opts o;
	struct gdr_hello h = { .version = GDR_PROTO_VERSION,
			       .nqps = 4,
			       .qp_index = 1,
			       .tx_depth = 128,
			       .extra_recv = 16,
			       .session = 0x1234 };
	uint8_t hb[56] = { 0 };
	char *args[] = { "gdr_write_bw", "-a",	     "-q", "4", "--mem", "host,bounce",
			 "--validate",	 "--repeat", "3",  "x", NULL };
	const char *dir = argc > 1 ? argv[1] : ".";
	int bad = 0;

	if (gdr_opts_parse(&o, GDR_VERB_WRITE, 10, args))
		return 1;
	m.type = GDR_MSG_PLAN;
	gdr_plan_from_opts(&o, 0xdeadbeef, &m.u.plan);
	bad |= seed(dir, "plan", &m);
	/* Each side its own memory (version 4): the combinations the client names. */
	char *sides[] = { "gdr_write_bw", "--mem", "all:all", "--validate", "x", NULL };
	if (gdr_opts_parse(&o, GDR_VERB_WRITE, 5, sides))
		return 1;
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_PLAN;
	gdr_plan_from_opts(&o, 0xfeedface, &m.u.plan);
	bad |= seed(dir, "plan-sides", &m);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_ACK;
	bad |= seed(dir, "ack", &m);
	/* The plan's ACK from a server whose own --mem chose its side. */
	m.u.error.nmem = 2;
	m.u.error.mem[0] = GDR_MEM_PEERMEM;
	m.u.error.mem[1] = GDR_MEM_HOST;
	bad |= seed(dir, "ack-paths", &m);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_ERROR;
	m.u.error.code = -22;
	strcpy(m.u.error.text, "plan mismatch: -q/--qp: server has 2, client asks 4");
	bad |= seed(dir, "error", &m);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_BUF;
	m.u.buf.kind = GDR_MEM_HOST;
	m.u.buf.ok = 1;
	m.u.buf.nqps = 2;
	for (int i = 0; i < 2; i++)
		m.u.buf.qp[i] = (struct gdr_remote_buf){ 0x7f0000000000ull + i * 0x200000ull,
							 0x1000 + i, 0x200000 };
	strcpy(m.u.buf.side.gpu, "0");
	strcpy(m.u.buf.side.gpu_bus_id, "0000:10:00.0");
	strcpy(m.u.buf.side.gpu_name, "Fake GPU 0");
	strcpy(m.u.buf.side.nic, "rxe0");
	strcpy(m.u.buf.side.distance, "unknown");
	bad |= seed(dir, "buf", &m);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_BUF;
	m.u.buf.kind = GDR_MEM_DMABUF;
	strcpy(m.u.buf.text, "rxe0: ibv_reg_dmabuf_mr: Operation not supported");
	bad |= seed(dir, "buf-skip", &m);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_START;
	m.u.start.path = 1;
	m.u.start.repeat = 2;
	m.u.start.size = 65536;
	bad |= seed(dir, "start", &m);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_DONE;
	m.u.meas = (struct gdr_msg_meas){ .iters = 5000,
					  .bytes = 5000ull * 65536,
					  .elapsed_ns = 123456789,
					  .peak_bps = 2.5e9,
					  .cpu_pct = 99.5,
					  .valid = 1 };
	bad |= seed(dir, "done", &m);
	m.type = GDR_MSG_RESULT;
	m.u.meas.valid = -1;
	m.u.meas.bad_qp = 3;
	m.u.meas.bad_offset = 4096;
	strcpy(m.u.meas.text, "validation: QP 3 byte 4096: 0x5a, expected 0xa5");
	bad |= seed(dir, "result", &m);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_ROUND;
	m.u.round.size = 1;
	m.u.round.rounds = 7;
	m.u.round.stop = GDR_ROUND_DECIDED;
	bad |= seed(dir, "round", &m);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_BYE;
	bad |= seed(dir, "bye", &m);
	/* rdma_cm hands the server the hello padded to the private data size. */
	gdr_hello_encode(&h, hb, sizeof(hb));
	bad |= write_seed(dir, "hello", hb, sizeof(hb));
	return bad;
}
