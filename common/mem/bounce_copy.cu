// The bounce path's SM copy (--bounce-copy=sm, docs/bounce.md): what NCCL's
// kernels do without GPUDirect RDMA, a grid-stride copy with 16-byte loads and
// stores between GPU memory and mapped pinned host memory. gdrperf ships the
// PTX (bounce_copy.ptx), never this file's object code: the driver JIT-compiles
// it (cuModuleLoadData), so no CUDA toolkit is needed at run time.
//
// Regenerate bounce_copy.ptx after an edit (tests/unit/t_bounce_ptx.sh checks
// that it matches when nvcc is there):
//   make regen-bounce-ptx
//
// Parameters (the fake driver checks this layout): dst, src, n (bytes), all 64-bit.
extern "C" __global__ void gdr_bounce_copy(unsigned char *dst, const unsigned char *src,
                                           unsigned long long n)
{
	unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
	unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
	unsigned long long done = 0;

	if ((((unsigned long long)dst | (unsigned long long)src) & 15) == 0) {
		unsigned long long words = n / 16;
		uint4 *d = (uint4 *)dst;
		const uint4 *s = (const uint4 *)src;

		for (unsigned long long w = i; w < words; w += stride)
			d[w] = s[w];
		done = words * 16;
	}
	// A misaligned pair, or the tail past the last 16 bytes: bytes.
	for (unsigned long long b = done + i; b < n; b += stride)
		dst[b] = src[b];
}
