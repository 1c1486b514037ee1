#!/usr/bin/env python3
"""Write the PCIe-health fixture roots tests/doctor/roots/pcie-*/.

Each root is a sysfs tree as the kernel lays it out: devices below
sys/devices/pci0000:00/<root port>/<switch up>/<switch down>/<endpoint>, each
with a 4096-byte `config` file (PCI configuration space, little endian, as
/sys/bus/pci/devices/BDF/config reads), `vendor`, `device`, `class`, and
`resource` for GPUs; sys/bus/pci/devices/BDF are symlinks into that tree;
sys/class/infiniband/NAME/device links to the NIC's function. Every case
starts from one healthy layout and changes one thing, so the generated files
are reviewable as a diff of this script.

Run from anywhere: python3 tests/doctor/gen-pcie-roots.py (rewrites the
pcie-* roots; commit the result).
"""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOTS = os.path.join(HERE, "roots")

# PCIe capability port types (Flags bits 7:4).
ENDPOINT, ROOT_PORT, UPSTREAM, DOWNSTREAM = 0x0, 0x4, 0x5, 0x6
MPS_CODE = {128: 0, 256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}


def config_space(dev):
    """Bytes of a 4 KiB configuration space for a device description."""
    cfg = bytearray(4096)
    bridge = dev["type"] in (ROOT_PORT, UPSTREAM, DOWNSTREAM)
    struct.pack_into("<HH", cfg, 0x00, dev["vendor"], dev["device"])
    struct.pack_into("<H", cfg, 0x06, 0x0010)  # Status: capability list
    cfg[0x09:0x0C] = dev["class"].to_bytes(3, "little")
    cfg[0x0E] = 0x01 if bridge else 0x00  # header type
    cfg[0x34] = 0x40  # capabilities pointer
    if bridge:  # bus numbers: how a copy of the tree without its links is walked
        cfg[0x18:0x1B] = bytes([dev["bus"], dev["secondary"], dev["subordinate"]])
    # PCI Express capability at 0x40 (version 2).
    cap = 0x40
    struct.pack_into("<BBH", cfg, cap, 0x10, 0x00, 0x0002 | (dev["type"] << 4))
    struct.pack_into("<I", cfg, cap + 0x04, MPS_CODE[dev["mps_cap"]])  # DevCap
    devctl = (MPS_CODE[dev["mps"]] << 5) | (MPS_CODE[dev["mrrs"]] << 12)
    if dev["ro"]:
        devctl |= 0x0010
    struct.pack_into("<H", cfg, cap + 0x08, devctl)
    struct.pack_into("<I", cfg, cap + 0x0C, dev["cap_gen"] | (dev["cap_width"] << 4))
    struct.pack_into("<H", cfg, cap + 0x12, dev["sta_gen"] | (dev["sta_width"] << 4))
    # Extended capabilities from 0x100: ACS, then ATS.
    ext = []
    if dev.get("acs") is not None:
        ext.append((0x0D, struct.pack("<HH", 0x001F, dev["acs"])))
    if dev.get("ats") is not None:
        ext.append((0x0F, struct.pack("<HH", 0x0000, 0x8000 if dev["ats"] else 0x0000)))
    off = 0x100
    for i, (cid, body) in enumerate(ext):
        nxt = off + 0x10 if i + 1 < len(ext) else 0
        struct.pack_into("<I", cfg, off, cid | (1 << 16) | (nxt << 20))
        cfg[off + 4 : off + 4 + len(body)] = body
        off += 0x10
    return bytes(cfg)


def dev(bdf, kind, type_, **kw):
    d = {
        "bdf": bdf,
        "kind": kind,
        "type": type_,
        "vendor": 0x10DE if kind == "gpu" else 0x15B3 if kind == "nic" else 0x1000,
        "device": 0x2330 if kind == "gpu" else 0x101D if kind == "nic" else 0xC030,
        "class": 0x030200 if kind == "gpu" else 0x020700 if kind == "nic" else 0x060400,
        "mps_cap": 512,
        "mps": 256,
        "mrrs": 4096 if kind == "nic" else 512,
        "ro": True,
        "cap_gen": 4,
        "cap_width": 16,
        "sta_gen": 4,
        "sta_width": 16,
        "acs": 0x0000 if kind == "bridge" else None,
        "ats": False if kind != "bridge" else None,
        "group": None,
    }
    d.update(kw)
    return d


def healthy():
    """Root port -> switch -> GPU and NIC below two downstream ports (PIX)."""
    return {
        "tree": [
            ("0000:00:01.0", None, dev("0000:00:01.0", "bridge", ROOT_PORT)),
            ("0000:01:00.0", "0000:00:01.0", dev("0000:01:00.0", "bridge", UPSTREAM, acs=None)),
            ("0000:02:00.0", "0000:01:00.0", dev("0000:02:00.0", "bridge", DOWNSTREAM)),
            ("0000:02:01.0", "0000:01:00.0", dev("0000:02:01.0", "bridge", DOWNSTREAM)),
            ("0000:03:00.0", "0000:02:00.0", dev("0000:03:00.0", "gpu", ENDPOINT)),
            ("0000:04:00.0", "0000:02:01.0", dev("0000:04:00.0", "nic", ENDPOINT)),
        ],
        "nics": {"mlx5_0": {"bdf": "0000:04:00.0", "fw": "28.39.1002", "hca": "MT4129",
                            "rate": "200 Gb/sec (4X HDR)", "ll": "InfiniBand"}},
        "bar1": 64 << 30,
        "iommu_units": 0,
        "cmdline": "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=/dev/nvme0n1p2 ro",
        "group_type": None,
    }


def find(case, bdf):
    return next(d for b, _, d in case["tree"] if b == bdf)


def case_acs():
    c = healthy()
    find(c, "0000:02:00.0")["acs"] = 0x001D  # SrcValid, ReqRedir, CmpltRedir, UpstreamFwd
    return c


def case_acs_rootport():
    """GPU and NIC on two root ports (PHB); the NIC's root port redirects."""
    c = healthy()
    c["tree"] = [
        ("0000:00:01.0", None, dev("0000:00:01.0", "bridge", ROOT_PORT)),
        ("0000:00:03.0", None, dev("0000:00:03.0", "bridge", ROOT_PORT, acs=0x000C)),
        ("0000:03:00.0", "0000:00:01.0", dev("0000:03:00.0", "gpu", ENDPOINT)),
        ("0000:04:00.0", "0000:00:03.0", dev("0000:04:00.0", "nic", ENDPOINT)),
    ]
    return c


def case_iommu_translated():
    c = healthy()
    c["iommu_units"] = 2
    c["cmdline"] += " intel_iommu=on"
    c["group_type"] = "DMA-FQ"
    find(c, "0000:04:00.0")["ats"] = True
    for i, (b, _, d) in enumerate(c["tree"]):
        d["group"] = str(10 + i)
    return c


def case_iommu_pt():
    c = case_iommu_translated()
    c["cmdline"] = c["cmdline"].replace("intel_iommu=on", "intel_iommu=on iommu=pt")
    c["group_type"] = "identity"
    return c


def case_link_narrow():
    c = healthy()
    find(c, "0000:04:00.0")["sta_width"] = 8
    find(c, "0000:02:01.0")["sta_width"] = 8
    return c


def case_link_gpu_idle():
    c = healthy()
    find(c, "0000:03:00.0")["sta_gen"] = 1
    find(c, "0000:02:00.0")["sta_gen"] = 1
    return c


def case_link_gen5_gpu_gen4_slot():
    """A gen5 GPU in a gen4 switch trains gen4: at the capability of the link, a pass."""
    c = healthy()
    find(c, "0000:03:00.0")["cap_gen"] = 5
    return c


def case_mps_mismatch():
    c = healthy()
    find(c, "0000:01:00.0")["mps"] = 128
    return c


def case_mrrs_small():
    c = healthy()
    find(c, "0000:04:00.0")["mrrs"] = 128
    return c


def case_ro_off():
    c = healthy()
    find(c, "0000:04:00.0")["ro"] = False
    return c


def case_bar1_small():
    c = healthy()
    c["bar1"] = 256 << 20
    return c


def case_fw_mismatch():
    """Two NICs of one model, one left on older firmware."""
    c = healthy()
    c["tree"].append(("0000:02:02.0", "0000:01:00.0", dev("0000:02:02.0", "bridge", DOWNSTREAM)))
    c["tree"].append(("0000:05:00.0", "0000:02:02.0", dev("0000:05:00.0", "nic", ENDPOINT)))
    c["nics"]["mlx5_1"] = dict(c["nics"]["mlx5_0"], bdf="0000:05:00.0", fw="28.36.1010")
    return c


def case_no_config():
    """The devices are listed but their config files are not readable (a container)."""
    c = healthy()
    c["no_config"] = True
    return c


def case_soft_roce():
    """rxe0 on a virtio NIC: no PCI device link, only the port rate rxe reports."""
    c = healthy()
    c["nics"] = {"rxe0": {"bdf": None, "fw": None, "hca": None,
                          "rate": "10 Gb/sec (1X QDR)", "ll": "Ethernet"}}
    return c


CASES = {
    "pcie-healthy": healthy,
    "pcie-acs": case_acs,
    "pcie-acs-rootport": case_acs_rootport,
    "pcie-iommu-translated": case_iommu_translated,
    "pcie-iommu-pt": case_iommu_pt,
    "pcie-link-narrow": case_link_narrow,
    "pcie-link-gpu-idle": case_link_gpu_idle,
    "pcie-link-gen5-in-gen4": case_link_gen5_gpu_gen4_slot,
    "pcie-mps-mismatch": case_mps_mismatch,
    "pcie-mrrs-small": case_mrrs_small,
    "pcie-ro-off": case_ro_off,
    "pcie-bar1-small": case_bar1_small,
    "pcie-fw-mismatch": case_fw_mismatch,
    "pcie-no-config": case_no_config,
    "pcie-soft-roce": case_soft_roce,
}


def write(path, data, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(data)


def symlink(target_abs, link):
    os.makedirs(os.path.dirname(link), exist_ok=True)
    os.symlink(os.path.relpath(target_abs, os.path.dirname(link)), link)


def bus_numbers(case):
    """Primary, secondary and subordinate bus of each bridge, from the tree."""
    bus = lambda bdf: int(bdf[5:7], 16)
    for bdf, _, d in case["tree"]:
        d["bus"] = bus(bdf)
        below = [bus(b) for b, parent, _ in case["tree"] if parent == bdf]
        d["secondary"] = min(below) if below else 0
    for bdf, _, d in reversed(case["tree"]):
        kids = [k for b, parent, k in case["tree"] if parent == bdf]
        d["subordinate"] = max([d["secondary"]] + [k.get("subordinate", 0) for k in kids])


def build(root, case):
    sysdev = os.path.join(root, "sys/devices/pci0000:00")
    where = {}
    bus_numbers(case)
    for bdf, parent, d in case["tree"]:
        where[bdf] = os.path.join(where[parent] if parent else sysdev, bdf)
        p = where[bdf]
        os.makedirs(p)
        write(os.path.join(p, "vendor"), "0x%04x\n" % d["vendor"])
        write(os.path.join(p, "device"), "0x%04x\n" % d["device"])
        write(os.path.join(p, "class"), "0x%06x\n" % d["class"])
        write(os.path.join(p, "uevent"), "PCI_SLOT_NAME=%s\n" % bdf)
        if not case.get("no_config"):
            write(os.path.join(p, "config"), config_space(d), "wb")
        if d["kind"] == "gpu":
            bar0 = "0x00000000d8000000 0x00000000d8ffffff 0x0000000000040200\n"
            bar1 = "0x0000380000000000 0x%016x 0x000000000014220c\n" % (
                0x380000000000 + case["bar1"] - 1)
            write(os.path.join(p, "resource"), bar0 + bar1 + "0x0 0x0 0x0\n" * 4)
        symlink(p, os.path.join(root, "sys/bus/pci/devices", bdf))
        if d["group"] is not None:
            g = os.path.join(root, "sys/kernel/iommu_groups", d["group"])
            write(os.path.join(g, "type"), case["group_type"] + "\n")
            symlink(g, os.path.join(p, "iommu_group"))
    for name, n in case["nics"].items():
        ib = os.path.join(root, "sys/class/infiniband", name)
        if n["bdf"]:
            symlink(where[n["bdf"]], os.path.join(ib, "device"))
        if n["fw"]:
            write(os.path.join(ib, "fw_ver"), n["fw"] + "\n")
        if n["hca"]:
            write(os.path.join(ib, "hca_type"), n["hca"] + "\n")
        write(os.path.join(ib, "ports/1/state"), "4: ACTIVE\n")
        write(os.path.join(ib, "ports/1/link_layer"), n["ll"] + "\n")
        write(os.path.join(ib, "ports/1/rate"), n["rate"] + "\n")
    for i in range(case["iommu_units"]):
        os.makedirs(os.path.join(root, "sys/class/iommu/dmar%d" % i))
        write(os.path.join(root, "sys/class/iommu/dmar%d/.keep" % i), "")
    write(os.path.join(root, "proc/cmdline"), case["cmdline"] + "\n")
    write(os.path.join(root, "proc/sys/kernel/osrelease"), "6.8.0-45-generic\n")
    write(os.path.join(root, "proc/self/limits"),
          "Limit                     Soft Limit           Hard Limit           Units\n"
          "Max locked memory         unlimited            unlimited            bytes\n")


def main():
    for name, make in CASES.items():
        root = os.path.join(ROOTS, name)
        shutil.rmtree(root, ignore_errors=True)
        build(root, make())
        print("wrote", os.path.relpath(root, os.getcwd()))


if __name__ == "__main__":
    main()
