#!/bin/sh
# The Kubernetes MPIJob and its image recipe, checked without a cluster: the
# manifest is parsed as YAML and every field the A/B relies on is looked up.
src=${top_srcdir:-.}
manifest=$src/scripts/k8s/gdrperf-mpijob.yaml
dockerfile=$src/scripts/k8s/Dockerfile
gate=$src/scripts/k8s/gdrperf-gate-init.yaml
nfd=$src/scripts/k8s/gdrperf-nfd-daemonset.yaml
doctor=${top_builddir:-.}/bench/gdr_doctor
ab=$src/scripts/gdr-ab
fx=$src/tests/scripts/fixtures
. "$(dirname "$0")/../tap.sh"

if ! python3 -c 'import yaml' 2>/dev/null; then
	skip_all "python3-yaml not installed (scripts/install-deps)"
fi

# The checks are Python (YAML); each prints one line, "pass NAME" or "fail NAME"
# (then "# DIAG" lines), that tap.sh turns into TAP below.
python3 - "$manifest" "$dockerfile" "$gate" "$ab" "$fx" "$src" "$nfd" "$doctor" "$tmp" \
	>"$tmp/checks" 2>&1 <<'PY'
import os
import re
import shlex
import subprocess
import sys

import yaml

manifest, dockerfile, gate_manifest, ab, fx, src = sys.argv[1:7]


def check(name, cond, diag=""):
    print(f"{'pass' if cond else 'fail'} {name}")
    if not cond and diag:
        for line in str(diag).splitlines():
            print(f"#   {line}")


try:
    docs = [d for d in yaml.safe_load_all(open(manifest)) if d]
except (OSError, yaml.YAMLError) as e:
    check(f"{manifest} parses as YAML", False, e)
    sys.exit(1)
check("one document, an MPIJob of kubeflow.org/v2beta1",
      len(docs) == 1 and docs[0].get("apiVersion") == "kubeflow.org/v2beta1"
      and docs[0].get("kind") == "MPIJob",
      f"{[(d.get('apiVersion'), d.get('kind')) for d in docs]}")
job = docs[0]
spec = job.get("spec") or {}
replicas = spec.get("mpiReplicaSpecs") or {}
launcher = replicas.get("Launcher") or {}
worker = replicas.get("Worker") or {}
check("one launcher and two workers, one slot each",
      launcher.get("replicas") == 1 and worker.get("replicas") == 2
      and spec.get("slotsPerWorker") == 1,
      f"launcher {launcher.get('replicas')}, worker {worker.get('replicas')}, "
      f"slots {spec.get('slotsPerWorker')}")


def pod(rs):
    return (rs.get("template") or {}).get("spec") or {}


def containers(rs, key="containers"):
    return pod(rs).get(key) or []


lc = containers(launcher)
cmd = " ".join(str(x) for c in lc for x in (c.get("command") or []) + (c.get("args") or []))
check("launcher runs mpirun -np 2, one rank per node, gdr_write_bw --mem all",
      re.search(r"\bmpirun\b", cmd) and re.search(r"-np 2\b", cmd)
      and "ppr:1:node" in cmd and re.search(r"gdr_write_bw .*--mem all", cmd), cmd)
check("results: CSV written to /results and printed into the launcher's log",
      "--csv /results/" in cmd and re.search(r"cat /results/\S+\.csv", cmd), cmd)

wc = containers(worker)
check("worker has one container with an image", len(wc) == 1 and wc[0].get("image"))
w = wc[0] if wc else {}
limits = (w.get("resources") or {}).get("limits") or {}
check("worker asks for nvidia.com/gpu", str(limits.get("nvidia.com/gpu", "")) == "1", f"{limits}")
rdma = [k for k in limits if k.startswith("rdma/") or "rdma" in k.split("/")[-1]]
check("worker asks for an RDMA device resource", len(rdma) == 1, f"{limits}")
caps = (((w.get("securityContext") or {}).get("capabilities") or {}).get("add")) or []
check("worker capabilities: IPC_LOCK (memlock for registration)", "IPC_LOCK" in caps, f"{caps}")
check("worker capabilities: the RDMA ones (SYS_RESOURCE, NET_RAW)",
      "SYS_RESOURCE" in caps and "NET_RAW" in caps, f"{caps}")
mounts = {m.get("mountPath"): m.get("name") for m in w.get("volumeMounts") or []}
vols = {v.get("name"): v for v in pod(worker).get("volumes") or []}
shm = vols.get(mounts.get("/dev/shm")) or {}
check("/dev/shm is an emptyDir in memory",
      (shm.get("emptyDir") or {}).get("medium") == "Memory", f"{mounts} {shm}")
check("/results is a volume", mounts.get("/results") in vols, f"{mounts}")
init = containers(worker, "initContainers")
icmd = [" ".join(str(x) for x in (c.get("command") or []) + (c.get("args") or [])) for c in init]
check("worker initContainer runs gdr_doctor --expect (fails fast without GPUDirect)",
      any(re.search(r"\bgdr_doctor\b.*--expect (any|dmabuf|peermem)\b", c) for c in icmd),
      f"{icmd}")
ilimits = [((c.get("resources") or {}).get("limits") or {}) for c in init]
check("the doctor sees the same GPU and RDMA device",
      any("nvidia.com/gpu" in l and any(k in l for k in rdma) for l in ilimits), f"{ilimits}")
anti = ((pod(worker).get("affinity") or {}).get("podAntiAffinity") or {})
check("workers on two different nodes (pod anti-affinity on the hostname)",
      any(t.get("topologyKey") == "kubernetes.io/hostname"
          for t in anti.get("requiredDuringSchedulingIgnoredDuringExecution") or []), f"{anti}")


def gate_args(words):
    """The gdr-ab argument list in WORDS (a shell command split), up to its ';'."""
    if "gdr-ab" not in words:
        return None
    words = words[words.index("gdr-ab") + 1:]
    out = []
    for w in words:
        if w.endswith(";"):
            out.append(w[:-1])
            break
        out.append(w)
    return out


def run_gate(args, csv):
    """gdr-ab with ARGS, its CSV argument replaced by CSV: (status, stdout)."""
    args = [a for a in args if not a.endswith(".csv")] + [csv]
    p = subprocess.run(["/usr/bin/python3", ab] + args, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def check_gate(where, args):
    """The rules in a manifest parse, pass on a good run and fail on a bad one."""
    check(f"{where}: gdr-ab --no-plot with --expect rules on a CSV under /results",
          args is not None and "--no-plot" in args and "--expect" in args
          and any(a.startswith("/results/") and a.endswith(".csv") for a in args), f"{args}")
    if not args:
        return
    rc, out = run_gate(args, f"{fx}/ab-ceiling.csv")
    check(f"{where}: the rules pass on a good run (exit 0)", rc == 0, out[-600:])
    rc, out = run_gate(args, f"{fx}/ab-basic.csv")
    check(f"{where}: a run without the ceiling fails the gate (exit 1, a FAIL line)",
          rc == 1 and "expect: FAIL" in out, out[-600:])


words = shlex.split(cmd)
check("launcher: after the run, the gate on rank 0's CSV (one rank on worker 0)",
      re.search(r"mpirun [^;]*-np 1 [^;]*ppr:1:node[^;]*gdr-ab ", cmd), cmd)
check("launcher: the job exits with the run's status, else the gate's",
      re.search(r"gate=\$\?;.*exit \$rc;.*exit \$gate", cmd), cmd)
check_gate("launcher", gate_args(words))

try:
    gdocs = [d for d in yaml.safe_load_all(open(gate_manifest)) if d]
except (OSError, yaml.YAMLError) as e:
    gdocs = []
    print(f"# {gate_manifest}: {e}")
check("gate manifest: one batch/v1 Job", len(gdocs) == 1 and gdocs[0].get("kind") == "Job"
      and gdocs[0].get("apiVersion") == "batch/v1")
gspec = ((gdocs[0].get("spec") or {}).get("template") or {}).get("spec") or {} if gdocs else {}
ginit = gspec.get("initContainers") or []
gcmd = [str(x) for c in ginit for x in (c.get("command") or []) + (c.get("args") or [])]
check("gate manifest: an initContainer runs gdr-ab (the workload waits for it)",
      len(ginit) == 1 and gcmd[:1] == ["gdr-ab"] and (gspec.get("containers") or []), f"{gcmd}")
gmounts = {m.get("mountPath"): m.get("name") for c in ginit for m in c.get("volumeMounts") or []}
gvols = {v.get("name"): v for v in gspec.get("volumes") or []}
check("gate manifest: /results comes from a volume (a claim) the run wrote to",
      "persistentVolumeClaim" in (gvols.get(gmounts.get("/results")) or {}), f"{gmounts} {gvols}")
check("gate manifest: restartPolicy Never, so a failed gate stays failed",
      gspec.get("restartPolicy") == "Never")
check_gate("gate manifest", gate_args(gcmd))

try:
    df = open(dockerfile).read()
except OSError as e:
    df = ""
    print(f"# {e}")
froms = re.findall(r"^FROM\s+(\S+)", df, re.M)
args = dict(re.findall(r"^ARG\s+(\w+)=(\S+)", df, re.M))
first = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), froms[0]) if froms else ""
check("Dockerfile builds on nvidia/cuda:12.x-devel-ubuntu22.04",
      re.fullmatch(r"nvidia/cuda:12(\.\d+)*-devel-ubuntu22\.04", first), first)
for pkg in ("libibverbs-dev", "librdmacm-dev", "libhwloc-dev", "libopenmpi-dev"):
    check(f"Dockerfile installs {pkg}", re.search(rf"\b{re.escape(pkg)}\b", df))
try:
    control = open(os.path.join(src, "debian", "control")).read()
    rules = open(os.path.join(src, "debian", "rules")).read()
except OSError as e:
    control = rules = ""
    print(f"# {e}")
bd = re.search(r"^Build-Depends:(.*?)^\S", control, re.M | re.S)
bdeps = [d.split("|")[0].split("(")[0].strip() for d in bd.group(1).split(",")] if bd else []
bdeps = [d for d in bdeps if d and not d.startswith("debhelper-compat")]
check("debian/control lists Build-Depends", len(bdeps) >= 5, bdeps)
for pkg in bdeps:
    check(f"Dockerfile installs the build dependency {pkg}", re.search(rf"\b{re.escape(pkg)}\b", df))
check("debian/rules configures --with-mpi", re.search(r"dh_auto_configure\b[^\n]*--with-mpi", rules))
check("Dockerfile builds the Debian package", re.search(r"dpkg-buildpackage\b", df))
check("the image installs the .deb (programs in /usr/bin, gdr_doctor for the init step)",
      re.search(r"apt-get install[^\n]*gdrperf_\*\.deb", df) and "/opt/gdrperf" not in df)

# The NFD DaemonSet (docs/cluster-outputs.md): gdr_doctor --nfd into NFD's
# features.d and --prom into node_exporter's textfile directory, both mounted
# from the host, run here with the manifest's own arguments on a fixture root.
nfd_manifest, doctor, tmp = sys.argv[7:10]
FEATURES_D = "/etc/kubernetes/node-feature-discovery/features.d"
try:
    ndocs = [d for d in yaml.safe_load_all(open(nfd_manifest)) if d]
except (OSError, yaml.YAMLError) as e:
    ndocs = []
    print(f"# {nfd_manifest}: {e}")
check("nfd manifest: one apps/v1 DaemonSet", len(ndocs) == 1
      and ndocs[0].get("apiVersion") == "apps/v1" and ndocs[0].get("kind") == "DaemonSet")
nspec = ((ndocs[0].get("spec") or {}).get("template") or {}).get("spec") or {} if ndocs else {}
nc = nspec.get("containers") or []
ncmd = " ".join(str(x) for c in nc for x in (c.get("command") or []) + (c.get("args") or []))
m = re.search(r"(\S*gdr_doctor)\s([^;]*);", ncmd)
check("nfd manifest: runs the installed /usr/bin/gdr_doctor, again and again",
      m is not None and m.group(1) == "/usr/bin/gdr_doctor" and "while" in ncmd
      and re.search(r"sleep \d+", ncmd), ncmd)
dargs = shlex.split(m.group(2)) if m else []


def opt(name):
    return dargs[dargs.index(name) + 1] if name in dargs[:-1] else ""


nfd_file, prom_file = opt("--nfd"), opt("--prom")
nmounts = {mt.get("mountPath"): mt.get("name") for c in nc for mt in c.get("volumeMounts") or []}
nvols = {v.get("name"): v for v in nspec.get("volumes") or []}


def host_dir(path):
    """The host directory the container's directory of path is mounted from."""
    vol = nvols.get(nmounts.get(os.path.dirname(path))) or {}
    return (vol.get("hostPath") or {}).get("path", "")


check("nfd manifest: --nfd writes into NFD's features.d, mounted from the host's",
      os.path.dirname(nfd_file) == FEATURES_D and host_dir(nfd_file) == FEATURES_D
      and not os.path.basename(nfd_file).startswith("."), f"{nfd_file} {nmounts} {nvols}")
check("nfd manifest: --prom writes a *.prom into a directory mounted from the host",
      prom_file.endswith(".prom") and host_dir(prom_file).startswith("/"), f"{prom_file}")
if os.access(doctor, os.X_OK) and nfd_file and prom_file:
    run = [doctor] + [os.path.join(tmp, "nfd-out") if a == nfd_file
                      else os.path.join(tmp, "out.prom") if a == prom_file else a for a in dargs]
    run += ["--root", os.path.join(src, "tests", "doctor", "roots", "dmabuf-node")]
    p = subprocess.run(run, capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "GDRPERF_LIBCUDA": "/nonexistent"})
    try:
        lines = open(os.path.join(tmp, "nfd-out")).read().splitlines()
    except OSError:
        lines = []
    good = [ln for ln in lines
            if re.fullmatch(r"gdrperf\.[a-z0-9][a-z0-9.-]{0,54}[a-z0-9]=[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?", ln)]
    check("nfd manifest: its gdr_doctor arguments run (exit 0) and write both files",
          p.returncode == 0 and lines and os.path.getsize(os.path.join(tmp, "out.prom")) > 0,
          f"{run} exit {p.returncode} {p.stderr[-400:]}")
    check("nfd manifest: every line a valid NFD feature (gdrperf.NAME=VALUE, <= 63 chars)",
          lines and good == lines, f"{lines}")
else:
    print(f"# {doctor} not built: the manifest's arguments not run")

PY
rc=$?
while IFS= read -r line; do
	case $line in
	"pass "*) ok "${line#pass }" ;;
	"fail "*) not_ok "${line#fail }" ;;
	"#"*) echo "$line" ;;
	*) diag "$line" ;;
	esac
done <"$tmp/checks"
# A Python error part way must not pass as fewer checks.
[ $rc = 0 ] || [ "$TAP_FAILED" != 0 ] || not_ok "the checks ran to the end (python3 exit $rc)"
done_testing
