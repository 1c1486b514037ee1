#!/usr/bin/env python3
"""Write the gdr_doctor --live fixtures: tests/doctor/roots/live-*/ and
tests/doctor/live-mr/*.json.

Every file is in the exact format the kernel (or iproute2) writes it; where
this script has a real capture to copy, it copies its layout:
  - sys/kernel/debug/dma_buf/bufinfo: dma_buf_debug_show (drivers/dma-buf/
    dma-buf.c): "%08zu\\t%08x\\t%08x\\t%08ld\\t%s\\t%08lu\\t%s", the name
    "<none>" when unset, "\\tAttached Devices:", "\\t<dev_name>", "Total %d
    devices attached", "Total %d objects, %zu bytes"; flags 00000002 and mode
    00080007 as Debian's 6.1.0-57 kernel printed them for an O_RDWR dma-buf
    (tests/integration/t_47_live.sh runs the real one);
  - sys/kernel/mm/memory_peers/<client>/: MLNX_OFED's peer_mem.c, "%s\\n" for
    version and "%llu\\n" per counter;
  - sys/module/nvidia_peermem/refcnt: "%i\\n";
  - proc/PID/status: the layout of Debian 6.1's (captured in the Soft-RoCE VM;
    VmPin "%8lu kB"); cmdline and environ NUL-separated; maps as
    show_map_vma pads it (path at column 73); fd/N (plain files, as in a
    copied tree: see process()) and fdinfo/N (a dma-buf's: dma_buf_show_fdinfo
    after the common pos/flags/mnt_id/ino lines);
  - proc/PID/root/<libnccl path>: the library as the process sees it; only
    its "NCCL version X.Y.Z+cudaA.B" string (NCCL's VERSION_STRING, a NUL-
    terminated string in .rodata) matters, between filler bytes;
  - live-mr/*.json: `rdma -j res show mr` of iproute2 6.1 (one array, keys in
    its order: ifindex, ifname, mrn, rkey, lkey, mrlen, pdn, pid, comm; rkey
    and lkey hex strings; no pid for a kernel user's MR, whose comm is its
    name, and neither pid nor comm for a thread of another PID namespace).
Each case starts from the same node (gpu-a: mlx5_0 at 0000:3b:00.0, mlx5_1
at 0000:86:00.0) and changes what it is about.

Run from anywhere: python3 tests/doctor/gen-live-roots.py (rewrites the
live-* roots; commit the result).
"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOTS = os.path.join(HERE, "roots")
MRS = os.path.join(HERE, "live-mr")
MIB = 1 << 20

# /proc/PID/status of Debian's 6.1.0-57 kernel, as captured in the VM; {..} filled in.
STATUS = """Name:\t{name}
Umask:\t0022
State:\tS (sleeping)
Tgid:\t{tgid}
Ngid:\t0
Pid:\t{pid}
PPid:\t{ppid}
TracerPid:\t0
Uid:\t1000\t1000\t1000\t1000
Gid:\t1000\t1000\t1000\t1000
FDSize:\t256
Groups:\t1000 
NStgid:\t{tgid}
NSpid:\t{pid}
NSpgid:\t{ppid}
NSsid:\t{ppid}
VmPeak:\t{vmsize:8d} kB
VmSize:\t{vmsize:8d} kB
VmLck:\t       0 kB
VmPin:\t{vmpin:8d} kB
VmHWM:\t  811376 kB
VmRSS:\t  811376 kB
RssAnon:\t  603840 kB
RssFile:\t  207536 kB
RssShmem:\t       0 kB
VmData:\t 4914688 kB
VmStk:\t     132 kB
VmExe:\t    2812 kB
VmLib:\t  609680 kB
VmPTE:\t    4092 kB
VmSwap:\t       0 kB
HugetlbPages:\t       0 kB
CoreDumping:\t0
THP_enabled:\t1
Threads:\t{threads}
SigQ:\t0/1031318
SigPnd:\t0000000000000000
ShdPnd:\t0000000000000000
SigBlk:\t0000000000000000
SigIgn:\t0000000001001000
SigCgt:\t0000000180004002
CapInh:\t0000000000000000
CapPrm:\t0000000000000000
CapEff:\t0000000000000000
CapBnd:\t000001ffffffffff
CapAmb:\t0000000000000000
NoNewPrivs:\t0
Seccomp:\t0
Seccomp_filters:\t0
Speculation_Store_Bypass:\tthread vulnerable
SpeculationIndirectBranch:\tconditional enabled
Cpus_allowed:\tffffffff,ffffffff
Cpus_allowed_list:\t0-63
Mems_allowed:\t00000000,00000003
Mems_allowed_list:\t0-1
voluntary_ctxt_switches:\t1523
nonvoluntary_ctxt_switches:\t87
"""

# pid 2 of the node's PID namespace (kernel threads exist only there); captured.
KTHREADD = """Name:\tkthreadd
Umask:\t0022
State:\tS (sleeping)
Tgid:\t2
Ngid:\t0
Pid:\t2
PPid:\t0
TracerPid:\t0
Uid:\t0\t0\t0\t0
Gid:\t0\t0\t0\t0
FDSize:\t64
Groups:\t 
NStgid:\t2
NSpid:\t2
NSpgid:\t0
NSsid:\t0
Threads:\t1
SigQ:\t0/1031318
SigPnd:\t0000000000000000
ShdPnd:\t0000000000000000
SigBlk:\t0000000000000000
SigIgn:\tffffffffffffffff
SigCgt:\t0000000000000000
CapInh:\t0000000000000000
CapPrm:\t000001ffffffffff
CapEff:\t000001ffffffffff
CapBnd:\t000001ffffffffff
CapAmb:\t0000000000000000
NoNewPrivs:\t0
Seccomp:\t0
Seccomp_filters:\t0
Speculation_Store_Bypass:\tnot vulnerable
SpeculationIndirectBranch:\talways enabled
Cpus_allowed:\tffffffff,ffffffff
Cpus_allowed_list:\t0-63
Mems_allowed:\t00000000,00000003
Mems_allowed_list:\t0-1
voluntary_ctxt_switches:\t95
nonvoluntary_ctxt_switches:\t0
"""

UEVENT = """DRIVER=mlx5_core
PCI_CLASS=20000
PCI_ID=15B3:101D
PCI_SUBSYS_ID=15B3:0016
PCI_SLOT_NAME={bdf}
MODALIAS=pci:v000015B3d0000101Dsv000015B3sd00000016bc02sc00i00
"""

NICS = [("mlx5_0", "pci0000:3a", "0000:3a:00.0", "0000:3b:00.0"),
        ("mlx5_1", "pci0000:85", "0000:85:00.0", "0000:86:00.0")]

LIBCUDA = "/usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06"


def write(root, rel, data, mode="w"):
    path = os.path.join(root, rel.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(data)


def link(root, rel, target):
    path = os.path.join(root, rel.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


def maps_line(start, end, perms, off, ino, path):
    head = "%012x-%012x %s %08x fd:01 %d " % (start, end, perms, off, ino)
    return head.ljust(73) + path + "\n"


def node(name, host="gpu-a", kthreadd=True):
    """The common node: host name, the RDMA devices, pid 2."""
    root = os.path.join(ROOTS, name)
    shutil.rmtree(root, ignore_errors=True)
    write(root, "etc/hostname", host + "\n")
    # As tests/doctor/gen-pcie-roots.py lays it out: the class directory's device
    # link to the PCI function (no link back into the class: `make dist` follows links).
    for ib, dom, port, bdf in NICS:
        dev = "sys/devices/%s/%s/%s" % (dom, port, bdf)
        write(root, dev + "/uevent", UEVENT.format(bdf=bdf))
        write(root, dev + "/vendor", "0x15b3\n")
        link(root, "sys/class/infiniband/%s/device" % ib, "../../../" + dev[len("sys/"):])
    if kthreadd:
        write(root, "proc/2/status", KTHREADD)
    os.makedirs(os.path.join(root, "sys/kernel/debug"), exist_ok=True)
    return root


def bufinfo(root, bufs):
    """bufs: (size, exp_name, ino, count, name or None, [devices])."""
    out = "\nDma-buf Objects:\n"
    out += "%-8s\t%-8s\t%-8s\t%-8s\texp_name\t%-8s\tname\n" % ("size", "flags", "mode",
                                                                 "count", "ino")
    total = 0
    for size, exp, ino, count, bname, devs in bufs:
        out += "%08d\t%08x\t%08x\t%08d\t%s\t%08d\t%s\n" % (size, 2, 0x80007, count, exp, ino,
                                                           bname or "<none>")
        out += "\tAttached Devices:\n"
        for d in devs:
            out += "\t%s\n" % d
        out += "Total %d devices attached\n\n" % len(devs)
        total += size
    out += "\nTotal %d objects, %d bytes\n" % (len(bufs), total)
    write(root, "sys/kernel/debug/dma_buf/bufinfo", out)


def peers(root, clients):
    """clients: name -> (version, alloc, dealloc, reg_pages, dereg_pages, reg_bytes,
    dereg_bytes, free_callbacks)."""
    keys = ["num_alloc_mrs", "num_dealloc_mrs", "num_reg_pages", "num_dereg_pages",
            "num_reg_bytes", "num_dereg_bytes", "num_free_callbacks"]
    for name, vals in clients.items():
        write(root, "sys/kernel/mm/memory_peers/%s/version" % name, vals[0] + "\n")
        for k, v in zip(keys, vals[1:]):
            write(root, "sys/kernel/mm/memory_peers/%s/%s" % (name, k), "%d\n" % v)


def peermem_module(root, refcnt):
    write(root, "sys/module/nvidia_peermem/version", "580.65.06\n")
    if refcnt is not None:
        write(root, "sys/module/nvidia_peermem/refcnt", "%d\n" % refcnt)


def process(root, p):
    """p: a dict: pid, name, ppid, vmpin_kb, threads {tid: name}, cmdline [...], env
    [...] or None, libs [paths], nccl (path, version) or None, dmabuf_fds {fd: (size,
    ino, exp)}."""
    pid = p["pid"]
    nthreads = 1 + len(p.get("threads", {}))
    fields = dict(name=p["name"], tgid=pid, pid=pid, ppid=p["ppid"], vmpin=p["vmpin_kb"],
                  vmsize=12345678, threads=nthreads)
    write(root, "proc/%d/status" % pid, STATUS.format(**fields))
    for tid, tname in p.get("threads", {}).items():
        f = dict(fields, name=tname, pid=tid)
        write(root, "proc/%d/status" % tid, STATUS.format(**f))
        write(root, "proc/%d/task/%d/status" % (pid, tid), STATUS.format(**f))
    write(root, "proc/%d/cmdline" % pid, "\0".join(p["cmdline"]) + "\0")
    if p.get("env") is not None:
        write(root, "proc/%d/environ" % pid, "\0".join(p["env"]) + "\0")
    maps = ""
    addr = 0x7f3a00000000
    ino = 1835000
    exe = p["cmdline"][0] if p["cmdline"][0].startswith("/") else "/usr/bin/" + p["name"]
    for path in [exe] + p.get("libs", []) + ["/usr/lib/x86_64-linux-gnu/libc.so.6"]:
        for perms, off, size in (("r--p", 0, 0x26000), ("r-xp", 0x26000, 0x156000),
                                 ("rw-p", 0x17c000, 0x2000)):
            maps += maps_line(addr, addr + size, perms, off, ino, path)
            addr += size
        ino += 17
    maps += maps_line(0x7ffd2a1e3000, 0x7ffd2a204000, "rw-p", 0, 0, "[stack]").replace(
        "fd:01", "00:00")
    write(root, "proc/%d/maps" % pid, maps)
    if p.get("nccl"):
        path, ver = p["nccl"]
        body = b"\x7fELF" + b"\0" * 4092 + ("NCCL version %s\0" % ver).encode() + b"\0" * 64
        write(root, "proc/%d/root%s" % (pid, path), body, "wb")
    # fd/N: plain files, as a copy of /proc holds them (its links point nowhere, and
    # `make dist` archives with tar -h, which follows links); the reader then tells a
    # dma-buf by its fdinfo, the only kind with "exp_name:".
    for fd in (0, 1, 2):
        write(root, "proc/%d/fd/%d" % (pid, fd), "")
        write(root, "proc/%d/fdinfo/%d" % (pid, fd),
              "pos:\t0\nflags:\t0%o\nmnt_id:\t25\nino:\t%d\n" % (0o2 if fd else 0o100000,
                                                                   4 + fd))
    for fd, (size, bino, exp) in p.get("dmabuf_fds", {}).items():
        write(root, "proc/%d/fd/%d" % (pid, fd), "")
        write(root, "proc/%d/fdinfo/%d" % (pid, fd),
              "pos:\t0\nflags:\t02000002\nmnt_id:\t11\nino:\t%d\nsize:\t%d\ncount:\t1\n"
              "exp_name:\t%s\n" % (bino, size, exp))


def mr_json(name, mrs):
    """mrs: (dev, mrn, mrlen, pdn, pid or None, comm or None)."""
    out = []
    for dev, mrn, mrlen, pdn, pid, comm in mrs:
        o = {"ifindex": 0 if dev == "mlx5_0" else 1, "ifname": dev, "mrn": mrn,
             "rkey": "%x" % (0x1a2b00 + mrn), "lkey": "%x" % (0x1a2b00 + mrn),
             "mrlen": mrlen}
        if pid is not None or comm is None:  # a user's MR: the kernel gives its PD
            o["pdn"] = pdn
        if pid is not None:
            o["pid"] = pid
        if comm is not None:
            o["comm"] = comm
        out.append(o)
    os.makedirs(MRS, exist_ok=True)
    with open(os.path.join(MRS, name + ".json"), "w") as f:
        f.write(json.dumps(out, separators=(",", ":")) + "\n")


# The two jobs of the node.
TRAIN = dict(pid=4242, name="python3", ppid=4200, vmpin_kb=4096,
             threads={4250: "NCCL Service  0", 4251: "NCCL Progress 0"},
             cmdline=["python3", "train.py", "--nnodes", "2"],
             env=["PATH=/usr/local/bin:/usr/bin", "HOME=/home/ml",
                  "NCCL_IB_HCA=mlx5_0,mlx5_1", "NCCL_DMABUF_ENABLE=1", "LANG=C.UTF-8"],
             libs=[LIBCUDA, "/usr/local/lib/python3.10/dist-packages/nvidia/nccl/lib/libnccl.so.2"],
             nccl=("/usr/local/lib/python3.10/dist-packages/nvidia/nccl/lib/libnccl.so.2",
                   "2.27.3+cuda12.9"))
LEGACY = dict(pid=5151, name="legacy_job", ppid=5100, vmpin_kb=2048 + 64 * 1024,
              cmdline=["/opt/app/bin/legacy_job", "--config", "/etc/app.yaml"],
              env=["PATH=/usr/bin", "NCCL_NET_GDR_LEVEL=PHB", "NCCL_IB_HCA=mlx5_0"],
              libs=[LIBCUDA, "/opt/nccl/lib/libnccl.so.2.18.5"],
              nccl=("/opt/nccl/lib/libnccl.so.2.18.5", "2.18.5+cuda12.2"))

# MRs: NCCL's proxy thread registers (pid = the thread), the legacy job its main thread.
TRAIN_MRS = [("mlx5_0", 3, 32 * MIB, 5, 4250, "NCCL Service  0"),
             ("mlx5_0", 4, 32 * MIB, 5, 4250, "NCCL Service  0"),
             ("mlx5_0", 5, 4 * MIB, 5, 4250, "NCCL Service  0"),
             ("mlx5_1", 1, 32 * MIB, 2, 4250, "NCCL Service  0"),
             ("mlx5_1", 2, 32 * MIB, 2, 4250, "NCCL Service  0")]
LEGACY_MRS = [("mlx5_0", 7, 32 * MIB, 8, 5151, "legacy_job"),
              ("mlx5_0", 8, 32 * MIB, 8, 5151, "legacy_job"),
              ("mlx5_0", 9, 2 * MIB, 8, 5151, "legacy_job")]
KERNEL_MRS = [("mlx5_0", 0, 4096, 0, None, "nvme_rdma")]

TRAIN_BUFS = [(32 * MIB, "nv_dmabuf", 17, 1, None, ["0000:3b:00.0"]),
              (32 * MIB, "nv_dmabuf", 18, 1, None, ["0000:3b:00.0"]),
              (32 * MIB, "nv_dmabuf", 19, 1, None, ["0000:86:00.0"]),
              (32 * MIB, "nv_dmabuf", 20, 1, None, ["0000:86:00.0"])]
NV_MEM = {"nv_mem": ("580.65.06", 10, 8, 5120, 4096, 10 * 32 * MIB, 8 * 32 * MIB, 0),
          "nv_mem_nc": ("580.65.06", 0, 0, 0, 0, 0, 0, 0),
          # GPUDirect Storage's client shares the directory (numbers of NVIDIA's GDS guide).
          "nvidia-fs": ("1.0", 1288, 1288, 329728, 329728, 1350565888, 1350565888, 0)}


def main():
    # Both at once: the training job on DMA-BUF, the legacy job on nvidia-peermem.
    r = node("live-both")
    bufinfo(r, TRAIN_BUFS)
    peers(r, NV_MEM)
    peermem_module(r, 2)
    process(r, TRAIN)
    process(r, LEGACY)
    mr_json("live-both", KERNEL_MRS + TRAIN_MRS + LEGACY_MRS)

    # DMA-BUF only, an older driver (exporter "nvidia"), one buffer attached to mlx5's
    # data-direct function rather than to the NIC's own; nvidia_peermem not loaded.
    r = node("live-dmabuf")
    bufinfo(r, [(32 * MIB, "nvidia", 17, 1, None, ["0000:3b:00.0"]),
                (32 * MIB, "nvidia", 18, 1, None, ["0000:3b:00.0"]),
                (32 * MIB, "nvidia", 19, 1, None, ["0000:3c:00.1"])])
    write(r, "sys/devices/pci0000:3a/0000:3a:00.0/0000:3c:00.1/vendor", "0x15b3\n")
    train = dict(TRAIN, libs=[LIBCUDA.replace("580.65.06", "575.64.05"), TRAIN["libs"][1]])
    process(r, train)
    mr_json("live-dmabuf", [m for m in TRAIN_MRS if m[0] == "mlx5_0"] +
            [("mlx5_1", 1, 32 * MIB, 2, 4250, "NCCL Service  0")])

    # Peer memory only; a probe holds an exported, unattached dma-buf fd (not in use).
    r = node("live-peermem")
    bufinfo(r, [(2 * MIB, "nv_dmabuf", 31, 2, None, [])])
    peers(r, NV_MEM)
    peermem_module(r, 2)
    process(r, dict(LEGACY, env=None))
    process(r, dict(pid=6060, name="gpu_probe", ppid=6000, vmpin_kb=0,
                    cmdline=["./gpu_probe", "--gpu", "0"], env=["PATH=/usr/bin"],
                    libs=[LIBCUDA], dmabuf_fds={7: (2 * MIB, 31, "nv_dmabuf")}))
    mr_json("live-peermem", LEGACY_MRS)

    # Neither: a GPU process registers host memory only (bounce); no dma-buf, no module.
    r = node("live-neither")
    bufinfo(r, [])
    process(r, dict(pid=7070, name="gdr_write_bw", ppid=7000, vmpin_kb=32852,
                    cmdline=["/usr/bin/gdr_write_bw", "--mem", "bounce", "10.0.0.2"],
                    env=["PATH=/usr/bin"], libs=[LIBCUDA]))
    mr_json("live-neither", [("mlx5_0", 0, 83968, 2, 7070, "gdr_write_bw"),
                             ("mlx5_0", 1, 33554432, 2, 7070, "gdr_write_bw")])

    # Each source missing.
    r = node("live-no-debugfs")  # debugfs not mounted: /sys/kernel/debug is empty
    peers(r, NV_MEM)
    peermem_module(r, 2)
    process(r, TRAIN)
    process(r, LEGACY)
    r = node("live-no-memory-peers")  # nvidia_peermem's counters only in its refcnt
    bufinfo(r, [])
    peermem_module(r, 2)
    process(r, LEGACY)
    r = node("live-no-refcnt")  # neither memory_peers nor refcnt: peer memory not known
    bufinfo(r, [])
    peermem_module(r, None)
    process(r, LEGACY)
    # A pod without hostPID: only its own PID namespace (no kthreadd at pid 2); the MRs
    # of the node's processes come without pid or comm.
    r = node("live-no-hostpid", kthreadd=False)
    bufinfo(r, TRAIN_BUFS)
    process(r, dict(pid=1, name="gdr_doctor", ppid=0, vmpin_kb=0,
                    cmdline=["gdr_doctor", "--live"], env=["PATH=/usr/bin"], libs=[]))
    mr_json("live-no-hostpid", [m[:4] + (None, None) for m in TRAIN_MRS])


if __name__ == "__main__":
    main()
