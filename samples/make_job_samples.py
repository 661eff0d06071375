#!/usr/bin/env python3
"""Deterministic generator of multi-node training-job log samples.

(Re)writes, relative to the repository's samples/ folder:

  job64-xid95/             8 nodes x 8 H100, 64-rank Megatron-LM job under torchrun --tee 3.
                           gpu-node-104 GPU 0000:ab:00.0 (rank 29) logs Xid 95 (uncontained),
                           rank 29 dies through the NCCL watchdog with the CUDA ECC error, the
                           other nodes' ranks time out 600 s later. Without the kern.log files
                           the same folder is the "no kernel logs" scenario.
  job16-remap-loss-spike/  2 nodes x 8 A100, 16 ranks. gpu-node-202 GPU 0000:4e:00.0 (rank 11)
                           logs Xid 48 + Xid 63 (row marked for remapping); ~85 s later the
                           loss spikes for a few iterations and recovers; no crash.
  job16-straggler-hang/    2 nodes x 8 H100, 16 ranks, no hardware fault. Rank 6 stops making
                           progress (data-loader hang); 600 s later the other 15 ranks time out
                           on SeqNum 5121 and rank 6's monitor shows it is one work behind.

Python 3 standard library only; no dependence on the clock, the environment or hash order:
every value comes from fixed seeds and fixed times. Run it from anywhere:

    python3 samples/make_job_samples.py

Line shapes are copied from the sources listed in samples/README.md ("Where each shape comes
from"); only values (hosts, pids, addresses, times, serials, UUIDs) are made up.
"""

import datetime as dt
import gzip
import math
import os
import random
import shutil

SAMPLES = os.path.dirname(os.path.abspath(__file__))

# --------------------------------------------------------------------------------------------
# small helpers


def td(seconds):
    return dt.timedelta(seconds=seconds)


def hexid(rng, n):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def gpu_uuid(rng):
    return "GPU-%s-%s-%s-%s-%s" % (hexid(rng, 8), hexid(rng, 4), hexid(rng, 4), hexid(rng, 4), hexid(rng, 12))


class Log:
    """Lines with times; written sorted by time, ties in insertion order."""

    def __init__(self):
        self.items = []

    def add(self, t, text):
        self.items.append((t, len(self.items), text))

    def lines(self):
        return [x[2] for x in sorted(self.items)]


def write_text(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")


def write_gzip(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    # gzip -9n semantics: no name, mtime 0
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as g:
            g.write(data)


def reset_dir(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)


# --------------------------------------------------------------------------------------------
# platforms

H100 = {
    "bus": ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"],
    "devid": "2330",
    "switch_devid": "0x22a3",
    "switches": ["05", "06", "07", "08"],
    "driver": "550.90.07",
    "driver_date": "Fri May 31 09:35:42 UTC 2024",
    "kernel": "5.15.0-113-generic",
    "kernel_banner": "Linux version 5.15.0-113-generic (buildd@lcy02-amd64-057) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #123-Ubuntu SMP Mon Jun 10 08:16:17 UTC 2024 (Ubuntu 5.15.0-113.123-generic 5.15.152)",
    "cmdline": "BOOT_IMAGE=/boot/vmlinuz-5.15.0-113-generic root=UUID=%s ro console=tty0 console=ttyS0,115200n8 intel_iommu=on iommu=pt pci=realloc=off",
    "dmi": "DMI: Supermicro SYS-821GE-TNHR/X13DEG-OAD, BIOS 2.1 04/20/2023",
    "tsc": "tsc: Detected 2000.000 MHz processor",
    "cpu": "smpboot: CPU0: Intel(R) Xeon(R) Platinum 8480+ (family: 0x6, model: 0x8f, stepping: 0x8)",
    "cpus": 224,
    "memory": "Memory: 2062682496K/2113276288K available (16393K kernel code, 4387K rwdata, 10840K rodata, 3256K init, 6212K bss, 50593792K reserved, 0K cma-reserved)",
    "nics": [("19", "ibp25s0"), ("29", "ibp41s0"), ("3b", "ibp59s0"), ("4c", "ibp76s0"),
             ("9b", "ibp155s0"), ("aa", "ibp170s0"), ("bb", "ibp187s0"), ("da", "ibp218s0")],
    "nic_fw": "28.39.1002",
    "nic_bw": "504.112 Gb/s available PCIe bandwidth (32.0 GT/s PCIe x16 link)",
    "eth": ("c5", "enp197s0f0np0", "22.39.1002"),
    "nvme": ["c2", "c3"],
    "nvlink_major": 509,
    "uvm_major": 507,
    "cuda_driver": 12040,
}

A100 = {
    "bus": ["07", "0f", "47", "4e", "87", "90", "b7", "bd"],
    "devid": "20b2",
    "switch_devid": "0x1af1",
    "switches": ["c1", "c2", "c3", "c4", "c5", "c6"],
    "driver": "535.129.03",
    "driver_date": "Thu Oct 19 18:56:32 UTC 2023",
    "modeset_date": "Thu Oct 19 18:42:12 UTC 2023",
    "kernel": "5.15.0-91-generic",
    "kernel_banner": "Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023 (Ubuntu 5.15.0-91.101-generic 5.15.131)",
    "cmdline": "BOOT_IMAGE=/boot/vmlinuz-5.15.0-91-generic root=UUID=%s ro console=tty0 console=ttyS0,115200n8 iommu=pt pci=realloc=off mitigations=off",
    "dmi": "DMI: Supermicro AS -4124GO-NART/H12DSG-O-CPU, BIOS 2.4 10/26/2022",
    "tsc": "tsc: Detected 2445.426 MHz processor",
    "cpu": "smpboot: CPU0: AMD EPYC 7763 64-Core Processor (family: 0x19, model: 0x1, stepping: 0x1)",
    "cpus": 256,
    "memory": "Memory: 1056221120K/1073513916K available (16393K kernel code, 4387K rwdata, 10840K rodata, 3256K init, 6212K bss, 17292796K reserved, 0K cma-reserved)",
    "nics": [("0c", "ibp12s0"), ("12", "ibp18s0"), ("4b", "ibp75s0"), ("54", "ibp84s0"),
             ("8d", "ibp141s0"), ("94", "ibp148s0"), ("ba", "ibp186s0"), ("cc", "ibp204s0")],
    "nic_fw": "20.35.1012",
    "nic_bw": "252.048 Gb/s available PCIe bandwidth (16.0 GT/s PCIe x16 link)",
    "eth": ("61", "enp97s0f0np0", "22.36.1010"),
    "nvme": ["e1", "e2"],
    "nvlink_major": 236,
    "uvm_major": 234,
    "cuda_driver": 12020,
}


# --------------------------------------------------------------------------------------------
# kernel logs (rsyslog traditional: "Mmm %e HH:MM:SS host kernel: [%5lu.%06lu] ")


class KernLog:
    RSYSLOG_START = 10.2  # seconds after boot at which rsyslog starts receiving /dev/kmsg

    def __init__(self, host, boot):
        self.host = host
        self.boot = boot  # wall time of kernel time 0
        self.log = Log()

    def at_secs(self, secs, text):
        wall = self.boot + td(max(secs, self.RSYSLOG_START))
        stamp = "%s %2d %s" % (wall.strftime("%b"), wall.day, wall.strftime("%H:%M:%S"))
        us = int(round(secs * 1e6))
        self.log.add(self.boot + td(secs), "%s %s kernel: [%5d.%06d] %s" % (stamp, self.host, us // 1000000, us % 1000000, text))

    def at_wall(self, wall, text):
        self.at_secs((wall - self.boot).total_seconds(), text)

    def lines(self):
        return self.log.lines()


def kern_boot(k, plat, rng):
    """Boot block (~75 lines): kernel banner, PCI, NICs, systemd, NVIDIA driver load."""
    root_uuid = "%s-%s-%s-%s-%s" % (hexid(rng, 8), hexid(rng, 4), hexid(rng, 4), hexid(rng, 4), hexid(rng, 12))
    cmd = plat["cmdline"] % root_uuid
    t0 = [
        plat["kernel_banner"],
        "Command line: " + cmd,
        "BIOS-provided physical RAM map:",
        "NX (Execute Disable) protection: active",
        "SMBIOS 3.5.0 present." if plat is H100 else "SMBIOS 3.3.0 present.",
        plat["dmi"],
        plat["tsc"],
        "Using GB pages for direct mapping",
        "ACPI: Early table checksum verification disabled",
        "NUMA: Initialized distance table, cnt=2",
        "smpboot: Allowing %d CPUs, 0 hotplug CPUs" % plat["cpus"],
        "Booting paravirtualized kernel on bare hardware",
        "clocksource: refined-jiffies: mask: 0xffffffff max_cycles: 0xffffffff, max_idle_ns: 7645519600211568 ns",
        "Kernel command line: " + cmd,
        plat["memory"],
        "rcu: Hierarchical RCU implementation.",
        "printk: console [tty0] enabled",
        "printk: console [ttyS0] enabled",
        "ACPI: Core revision 20210730",
    ]
    for line in t0:
        k.at_secs(0.0, line)
    s = 0.001247
    seq = [
        "APIC: Switch to symmetric I/O mode setup",
        "pid_max: default: 262144 minimum: 2048",
        "LSM: Security Framework initializing",
        "AppArmor: AppArmor initialized",
        plat["cpu"],
        "smp: Bringing up secondary CPUs ...",
        "smp: Brought up 2 nodes, %d CPUs" % plat["cpus"],
        "devtmpfs: initialized",
        "NET: Registered PF_NETLINK/PF_ROUTE protocol family",
        "PCI: Using configuration type 1 for base access",
        "ACPI: Interpreter enabled",
        "ACPI: Using IOAPIC for interrupt routing",
    ]
    for line in seq:
        k.at_secs(s, line)
        s += rng.uniform(0.0005, 0.04)
    for b in plat["bus"]:
        k.at_secs(s, "pci 0000:%s:00.0: [10de:%s] type 00 class 0x030200" % (b, plat["devid"]))
        s += rng.uniform(0.0006, 0.0011)
    for b in plat["switches"]:
        k.at_secs(s, "pci 0000:%s:00.0: [10de:%s] type 00 class 0x068000" % (b, plat["switch_devid"][2:]))
        s += rng.uniform(0.0003, 0.0005)
    for line in ["iommu: Default domain type: Passthrough (set via kernel command line)",
                 "SCSI subsystem initialized", "PCI: Using ACPI for IRQ routing",
                 "clocksource: Switched to clocksource tsc-early", "NET: Registered PF_INET protocol family",
                 "Trying to unpack rootfs image as initramfs...", "Run /init as init process"]:
        k.at_secs(s, line)
        s += rng.uniform(0.005, 0.12)
    s = 1.65 + rng.uniform(0, 0.05)
    for i, b in enumerate(plat["nvme"]):
        k.at_secs(s, "nvme nvme%d: pci function 0000:%s:00.0" % (i, b))
        k.at_secs(s + 0.0095, "nvme nvme%d: 63/0/0 default/read/poll queues" % i)
        s += 0.036
    for b, _ in plat["nics"]:
        k.at_secs(s, "mlx5_core 0000:%s:00.0: firmware version: %s" % (b, plat["nic_fw"]))
        k.at_secs(s + 0.00026, "mlx5_core 0000:%s:00.0: %s" % (b, plat["nic_bw"]))
        s += rng.uniform(0.018, 0.023)
    eb, ename, efw = plat["eth"]
    k.at_secs(s, "mlx5_core 0000:%s:00.0: firmware version: %s" % (eb, efw))
    s = 2.16 + rng.uniform(0, 0.02)
    k.at_secs(s, "md/raid1:md0: active with 2 out of 2 mirrors")
    k.at_secs(3.17 + rng.uniform(0, 0.02), "EXT4-fs (md0p2): mounted filesystem with ordered data mode. Opts: (null). Quota mode: none.")
    s = 3.49 + rng.uniform(0, 0.02)
    for line in ["systemd[1]: Inserted module 'autofs4'",
                 "systemd[1]: Detected architecture x86-64.",
                 "systemd[1]: Hostname set to <%s>." % k.host,
                 "systemd[1]: Started Journal Service.",
                 "EXT4-fs (md0p2): re-mounted. Opts: errors=remount-ro. Quota mode: none.",
                 "ipmi_si IPI0001:00: IPMI kcs interface initialized",
                 "RPC: Registered tcp NFSv4.1 backchannel transport module."]:
        k.at_secs(s, line)
        s += rng.uniform(0.01, 0.2)
    s = 4.25 + rng.uniform(0, 0.02)
    for i, (b, name) in enumerate(plat["nics"]):
        k.at_secs(s, "mlx5_core 0000:%s:00.0 %s: renamed from ib%d" % (b, name, i))
        s += rng.uniform(0.024, 0.034)
    k.at_secs(s, "mlx5_core 0000:%s:00.0 %s: renamed from eth0" % (eb, ename))
    # NVIDIA driver load block
    s = 5.57 + rng.uniform(0, 0.02)
    k.at_secs(s, "nvidia: loading out-of-tree module taints kernel.")
    k.at_secs(s + 0.000011, "nvidia: module license 'NVIDIA' taints kernel.")
    k.at_secs(s + 0.000028, "Disabling lock debugging due to kernel taint")
    k.at_secs(s + 0.062762, "nvidia: module verification failed: signature and/or required key missing - tainting kernel")
    s += 0.0803
    k.at_secs(s, "nvidia-nvlink: Nvlink Core is being initialized, major device number %d" % plat["nvlink_major"])
    for i, b in enumerate(plat["switches"]):
        s += 0.0019
        k.at_secs(s, "nvidia-nvswitch: Probing device 0000:%s:00.0, Vendor Id = 0x10de, Device Id = %s, Class = 0x68000" % (b, plat["switch_devid"]))
        s += rng.uniform(0.68, 0.75)
        k.at_secs(s, "nvidia-nvswitch%d: using MSI" % i)
    s += 0.044
    k.at_secs(s, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  %s  %s" % (plat["driver"], plat["driver_date"]))
    if "modeset_date" in plat:
        k.at_secs(s + 0.0064, "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  %s  %s" % (plat["driver"], plat["modeset_date"]))
    audit_ts = (k.boot + td(s + 0.23)).replace(tzinfo=dt.timezone.utc).timestamp()  # value only
    apid = rng.randint(1400, 1900)
    k.at_secs(s + 0.231, 'audit: type=1400 audit(%.3f:4): apparmor="STATUS" operation="profile_load" profile="unconfined" name="nvidia_modprobe" pid=%d comm="apparmor_parser"' % (audit_ts, apid))
    k.at_secs(s + 0.231012, 'audit: type=1400 audit(%.3f:5): apparmor="STATUS" operation="profile_load" profile="unconfined" name="nvidia_modprobe//kmod" pid=%d comm="apparmor_parser"' % (audit_ts, apid))
    s = 16.9 + rng.uniform(0, 0.3)
    k.at_secs(s, "mlx5_core 0000:%s:00.0 %s: Link up" % (eb, ename))
    k.at_secs(s + 0.0012, "IPv6: ADDRCONF(NETDEV_CHANGE): %s: link becomes ready" % ename)
    s = 17.25 + rng.uniform(0, 0.3)
    k.at_secs(s, "nvidia_uvm: module uses symbols from proprietary module nvidia, inheriting taint.")
    k.at_secs(s + 0.0052, "nvidia-uvm: Loaded the UVM driver, major device number %d." % plat["uvm_major"])
    s = 19.88 + rng.uniform(0, 0.2)
    for i in reversed(range(len(plat["switches"]))):
        k.at_secs(s, "nvidia-nvswitch%d: open (major=510)" % i)
        s += 0.000003
    s = 21.33 + rng.uniform(0, 0.2)
    k.at_secs(s, "bridge: filtering via arp/ip/ip6tables is no longer available by default. Update your scripts to load br_netfilter if you need this.")
    k.at_secs(s + 0.0018, "Bridge firewalling registered")
    k.at_secs(s + 0.79, "Initializing XFRM netlink socket")
    k.at_secs(s + 2.68, "NFS: Registering the id_resolver key type")
    k.at_secs(s + 2.6801, "Key type id_resolver registered")


def kern_runtime_noise(k, rng, start, end, job_start, job_end=None):
    """Ordinary noise between boot and the end of the log: perf throttling, container churn, NFS."""
    span = (end - start).total_seconds()
    # (the kernel's own arithmetic; values as in real logs, code index / a100-remap-pending)
    steps = [(2509, 2500, 79500), (3141, 3136, 63500), (3930, 3926, 50750)]
    for frac, (new, old, rate) in zip(sorted(rng.uniform(0.05, 0.9) for _ in range(3)), steps):
        k.at_wall(start + td(span * frac), "perf: interrupt took too long (%d > %d), lowering kernel.perf_event_max_sample_rate to %d" % (new, old, rate))

    def veth_up(t, port):
        v1 = "veth" + hexid(rng, 7)
        v2 = "veth" + hexid(rng, 7)
        k.at_wall(t, "docker0: port %d(%s) entered blocking state" % (port, v1))
        k.at_wall(t + td(0.000004), "docker0: port %d(%s) entered disabled state" % (port, v1))
        k.at_wall(t + td(0.000021), "device %s entered promiscuous mode" % v1)
        k.at_wall(t + td(0.412), "eth0: renamed from %s" % v2)
        k.at_wall(t + td(0.441), "IPv6: ADDRCONF(NETDEV_CHANGE): %s: link becomes ready" % v1)
        k.at_wall(t + td(0.4411), "docker0: port %d(%s) entered blocking state" % (port, v1))
        k.at_wall(t + td(0.44111), "docker0: port %d(%s) entered forwarding state" % (port, v1))
        return v1

    def veth_down(t, port, v):
        k.at_wall(t, "docker0: port %d(%s) entered disabled state" % (port, v))
        k.at_wall(t + td(0.0012), "device %s left promiscuous mode" % v)
        k.at_wall(t + td(0.00121), "docker0: port %d(%s) entered disabled state" % (port, v))

    # an earlier job's container
    t_prev = start + td(span * rng.uniform(0.15, 0.3))
    v = veth_up(t_prev, 1)
    veth_down(t_prev + td(rng.uniform(3600, 9000)), 1, v)
    t_nfs = start + td(span * rng.uniform(0.45, 0.6))
    k.at_wall(t_nfs, "nfs: server 10.20.0.11 not responding, still trying")
    k.at_wall(t_nfs + td(rng.uniform(12, 25)), "nfs: server 10.20.0.11 OK")
    # this job's container, started just before torchrun
    v = veth_up(job_start - td(rng.uniform(9, 14)), 2)
    if job_end is not None:
        veth_down(job_end, 2, v)


# --------------------------------------------------------------------------------------------
# torch / NCCL line shapes (PyTorch 2.5.1 wheel, NCCL 2.21.5+cuda12.4)

VENV = "/opt/venv"
SITE = VENV + "/lib/python3.10/site-packages"
NCCL_VERSION = "2.21.5+cuda12.4"


def glog(level, t, pid, path_line):
    """torch >= 2.4 elastic logger envelope: 'W1202 14:07:33.412000 48211 site-packages/...py:908] '."""
    return "%s%02d%02d %s.%06d %d %s] " % (level, t.month, t.day, t.strftime("%H:%M:%S"), (t.microsecond // 1000) * 1000, pid, path_line)


def c10(level, t, rank, ns, src):
    """c10 logger envelope: '[rank29]:[E1202 14:07:32.884213907 ProcessGroupNCCL.cpp:1595] '."""
    return "[rank%d]:[%s%d %s.%09d %s] " % (rank, level, t.month * 100 + t.day, t.strftime("%H:%M:%S"), ns, src)


class Proc:
    """One rank's process: pid, library load addresses for stack frames."""

    def __init__(self, rng, pid):
        self.pid = pid
        page = lambda: 0x7f0000000000 + rng.randrange(0x1000, 0xff000) * 0x100000
        self.libc10 = page()
        self.libc10_cuda = page()
        self.libtorch_cuda = page()
        self.libtorch = page()
        self.libc = page()

    def frame(self, n, sym, off, lib, base, rel):
        paths = {
            "libc10": SITE + "/torch/lib/libc10.so",
            "libc10_cuda": SITE + "/torch/lib/libc10_cuda.so",
            "libtorch_cuda": SITE + "/torch/lib/libtorch_cuda.so",
            "libtorch": SITE + "/torch/lib/libtorch.so",
            "libc": "/lib/x86_64-linux-gnu/libc.so.6",
        }
        return "frame #%d: %s + %s (0x%x in %s)" % (n, sym, off, base + rel, paths[lib])

    def timeout_frames(self):
        return [
            "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 (most recent call first):",
            self.frame(0, "c10::Error::Error(c10::SourceLocation, std::string)", "0x96", "libc10", self.libc10, 0x96446),
            self.frame(1, "c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >)", "0x282", "libtorch_cuda", self.libtorch_cuda, 0x1037772),
            self.frame(2, "c10d::ProcessGroupNCCL::watchdogHandler()", "0x233", "libtorch_cuda", self.libtorch_cuda, 0x103ebb3),
            self.frame(3, "c10d::ProcessGroupNCCL::ncclCommWatchdog()", "0x14d", "libtorch_cuda", self.libtorch_cuda, 0x104061d),
            self.frame(4, "<unknown function>", "0x145c0", "libtorch", self.libtorch, 0x145c0),
            self.frame(5, "<unknown function>", "0x94ac3", "libc", self.libc, 0x94ac3),
            self.frame(6, "clone", "0x44", "libc", self.libc, 0x126a04),
            "",
        ]

    def cuda_frames(self):
        return [
            "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):",
            self.frame(0, "c10::Error::Error(c10::SourceLocation, std::string)", "0x96", "libc10", self.libc10, 0x96446),
            self.frame(1, "c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&)", "0x64", "libc10", self.libc10, 0x406e4),
            self.frame(2, "c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)", "0x118", "libc10_cuda", self.libc10_cuda, 0x169f8),
            self.frame(3, "c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const", "0x56", "libtorch_cuda", self.libtorch_cuda, 0x1014726),
            self.frame(4, "c10d::ProcessGroupNCCL::WorkNCCL::isCompleted()", "0xa0", "libtorch_cuda", self.libtorch_cuda, 0x10193f0),
            self.frame(5, "c10d::ProcessGroupNCCL::watchdogHandler()", "0x1da", "libtorch_cuda", self.libtorch_cuda, 0x1020b5a),
            self.frame(6, "c10d::ProcessGroupNCCL::ncclCommWatchdog()", "0x14d", "libtorch_cuda", self.libtorch_cuda, 0x104061d),
            self.frame(7, "<unknown function>", "0x145c0", "libtorch", self.libtorch, 0x145c0),
            self.frame(8, "<unknown function>", "0x94ac3", "libc", self.libc, 0x94ac3),
            self.frame(9, "clone", "0x44", "libc", self.libc, 0x126a04),
            "",
        ]

    def watchdog_frames(self):
        return [
            "Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1601 (most recent call first):",
            self.frame(0, "c10::Error::Error(c10::SourceLocation, std::string)", "0x96", "libc10", self.libc10, 0x96446),
            self.frame(1, "<unknown function>", "0xe4271b", "libtorch_cuda", self.libtorch_cuda, 0xe4271b),
            self.frame(2, "<unknown function>", "0x145c0", "libtorch", self.libtorch, 0x145c0),
            self.frame(3, "<unknown function>", "0x94ac3", "libc", self.libc, 0x94ac3),
            self.frame(4, "clone", "0x44", "libc", self.libc, 0x126a04),
            "",
        ]


PG0 = "[PG ID 0 PG GUID 0(default_pg) Rank %d] "
CUDA_FOLLOW = [
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    "",
]


def add_block(log, t, prefix, lines, step=0.000012):
    for i, line in enumerate(lines):
        log.add(t + td(i * step), prefix + line)


def emit_timeout(log, rng, prefix, rank, proc, t_detect, seq, op, numel, enq, comp, ran_ms):
    """The ProcessGroupNCCL watchdog-timeout sequence of one rank (PyTorch 2.5.1 line numbers)."""
    work = "WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000)" % (seq, op, numel, numel)
    caught = "[Rank %d] Watchdog caught collective operation timeout: %s ran for %d milliseconds before timing out." % (rank, work, ran_ms)
    ns = rng.randrange(0, 10 ** 9)
    t = t_detect
    seqs = [
        ("ProcessGroupNCCL.cpp:616", caught),
        ("ProcessGroupNCCL.cpp:1785", PG0 % rank + "Exception (either an error or timeout) detected by watchdog at work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d." % (seq, enq, comp)),
        ("ProcessGroupNCCL.cpp:1834", PG0 % rank + "Timeout at NCCL work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d." % (seq, enq, comp)),
        ("ProcessGroupNCCL.cpp:630", "[Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data." % rank),
        ("ProcessGroupNCCL.cpp:636", "[Rank %d] To avoid data inconsistency, we are taking the entire process down." % rank),
    ]
    for src, msg in seqs:
        sec_ns = (t.microsecond * 1000 + ns % 1000)
        log.add(t, prefix + c10("E", t, rank, sec_ns, src) + msg)
        t += td(rng.uniform(0.000004, 0.00003))
    t += td(rng.uniform(0.0004, 0.002))
    term = PG0 % rank + "Process group watchdog thread terminated with exception: " + caught
    log.add(t, prefix + c10("E", t, rank, t.microsecond * 1000 + rng.randrange(1000), "ProcessGroupNCCL.cpp:1595") + term)
    add_block(log, t + td(0.00001), prefix, proc.timeout_frames())
    t += td(0.0006)
    add_block(log, t, prefix, ["terminate called after throwing an instance of 'c10::DistBackendError'",
                               "  what():  " + term] + proc.timeout_frames() + proc.watchdog_frames())
    return t + td(rng.uniform(0.05, 0.25))  # time the process is gone (SIGABRT)


def emit_cuda_watchdog(log, rng, prefix, rank, proc, t, what):
    """A CUDA error surfacing in the ProcessGroupNCCL watchdog (PyTorch 2.5.1)."""
    term = PG0 % rank + "Process group watchdog thread terminated with exception: CUDA error: " + what
    log.add(t, prefix + c10("E", t, rank, t.microsecond * 1000 + rng.randrange(1000), "ProcessGroupNCCL.cpp:1595") + term)
    add_block(log, t + td(0.00001), prefix, CUDA_FOLLOW + proc.cuda_frames())
    t += td(0.0007)
    add_block(log, t, prefix, ["terminate called after throwing an instance of 'c10::DistBackendError'",
                               "  what():  " + term] + CUDA_FOLLOW + proc.cuda_frames() + proc.watchdog_frames())
    return t + td(rng.uniform(0.08, 0.2))


def emit_torchrun_banner(log, t, agent_pid):
    src = "site-packages/torch/distributed/run.py:793"
    for msg in ["", "*****************************************",
                "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
                "*****************************************"]:
        log.add(t, glog("W", t, agent_pid, src) + msg)


def emit_torchrun_failure(log, rng, agent_pid, host, script, t_poll, failed, sigterm):
    """failed: list of (t_exit, rank, local_rank, pid) with exit -6; sigterm: list of pids still running."""
    t = t_poll
    for pid in sigterm:
        log.add(t, glog("W", t, agent_pid, "site-packages/torch/distributed/elastic/multiprocessing/api.py:908") + "Sending process %d closing signal SIGTERM" % pid)
        t += td(rng.uniform(0.0005, 0.002))
    failed = sorted(failed)
    root = failed[0]
    t += td(rng.uniform(0.4, 2.5)) if sigterm else td(rng.uniform(0.01, 0.05))
    log.add(t, glog("E", t, agent_pid, "site-packages/torch/distributed/elastic/multiprocessing/api.py:882") + "failed (exitcode: -6) local_rank: %d (pid: %d) of binary: %s/bin/python3" % (root[2], root[3], VENV))
    tb = [
        "Traceback (most recent call last):",
        '  File "%s/bin/torchrun", line 8, in <module>' % VENV,
        "    sys.exit(main())",
        '  File "%s/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper' % SITE,
        "    return f(*args, **kwargs)",
        '  File "%s/torch/distributed/run.py", line 919, in main' % SITE,
        "    run(args)",
        '  File "%s/torch/distributed/run.py", line 910, in run' % SITE,
        "    elastic_launch(",
        '  File "%s/torch/distributed/launcher/api.py", line 138, in __call__' % SITE,
        "    return launch_agent(self._config, self._entrypoint, list(args))",
        '  File "%s/torch/distributed/launcher/api.py", line 269, in launch_agent' % SITE,
        "    raise ChildFailedError(",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "=" * 60,
        "%s FAILED" % script,
        "-" * 60,
        "Failures:",
    ]

    def block(idx, f):
        te, rank, lr, pid = f
        return ["[%d]:" % idx,
                "  time      : %s" % te.strftime("%Y-%m-%d_%H:%M:%S"),
                "  host      : %s" % host,
                "  rank      : %d (local_rank: %d)" % (rank, lr),
                "  exitcode  : -6 (pid: %d)" % pid,
                "  error_file: <N/A>",
                "  traceback : Signal 6 (SIGABRT) received by PID %d" % pid]

    others = failed[1:]
    if not others:
        tb.append("  <NO_OTHER_FAILURES>")
    for i, f in enumerate(sorted(others, key=lambda f: f[2])):
        tb += block(i + 1, f)
    tb += ["-" * 60, "Root Cause (first observed failure):"] + block(0, root) + ["=" * 60]
    add_block(log, t + td(0.002), "", tb, step=0.00001)


def nccl_prefix(host, pid, tid, dev):
    return "%s:%d:%d [%d] NCCL INFO " % (host, pid, tid, dev)


def emit_nccl_init(log, rng, t, tee, host, proc_pid, local, rank, nranks, bus, comm_id, ip, plat, banner):
    tid_main = proc_pid
    tid_init = proc_pid + rng.randint(60, 140)
    p = nccl_prefix(host, proc_pid, tid_main, local)
    log.add(t, tee + p + "Bootstrap : Using %s:%s<0>" % (plat["eth"][1], ip))
    log.add(t + td(0.0002), tee + p + "NET/Plugin : No plugin found (libnccl-net.so), using internal implementation")
    log.add(t + td(0.0003), tee + p + "cudaDriverVersion %d" % plat["cuda_driver"])
    if banner:
        log.add(t + td(0.0004), tee + "NCCL version " + NCCL_VERSION)
    p2 = nccl_prefix(host, proc_pid, tid_init, local)
    ibs = " ".join("[%d]mlx5_%d:1/IB" % (i, i) for i in range(8))
    t2 = t + td(rng.uniform(0.08, 0.2))
    log.add(t2, tee + p2 + "NET/IB : Using %s [RO]; OOB %s:%s<0>" % (ibs, plat["eth"][1], ip))
    log.add(t2 + td(0.00004), tee + p2 + "Using network IB")
    comm = "0x%x" % (0x550000000000 + rng.randrange(0x10000000, 0xfffffff0) * 0x10)
    t3 = t2 + td(rng.uniform(1.2, 1.9))
    log.add(t3, tee + p2 + "ncclCommInitRank comm %s rank %d nranks %d cudaDev %d nvmlDev %d busId %s000 commId 0x%s - Init COMPLETE" % (comm, rank, nranks, local, local, bus, comm_id))


def megatron_iter_line(t, it, total, consumed, ms, tflops, lr, gbs, loss, gnorm):
    return (" [%s] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f | "
            "throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: %.6E | global batch size: %5d | "
            "lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations: %3d | "
            "number of nan iterations: %3d |" % (t.strftime("%Y-%m-%d %H:%M:%S"), it, total, consumed, ms, tflops, lr, gbs, loss, gnorm, 0, 0))


def megatron_preamble(log, t, tee, world, ckpt, it0):
    lines = [
        "using world size: %d, data-parallel size: %d, context-parallel size: 1, tensor-model-parallel size: 1, pipeline-model-parallel size: 1" % (world, world),
        "> initialized tensor model parallel with size 1",
        "> initialized pipeline model parallel with size 1",
    ]
    add_block(log, t, tee, lines, step=0.01)
    if ckpt is None:  # a fresh run loads no checkpoint
        return
    log.add(t + td(24.1), tee + " loading checkpoint from %s at iteration %d" % (ckpt, it0))
    log.add(t + td(47.7), tee + "  successfully loaded checkpoint from %s [ t 0, p 0 ] at iteration %d" % (ckpt, it0))


# --------------------------------------------------------------------------------------------
# a generic multi-node job


class Job:
    def __init__(self, rng, hosts, plat, start, ip_base):
        self.rng = rng
        self.hosts = hosts
        self.plat = plat
        self.n = len(hosts) * 8
        self.train = {h: Log() for h in hosts}
        self.agent_pid = {}
        self.procs = {}  # rank -> Proc
        self.local_start = {}
        for ni, h in enumerate(hosts):
            apid = rng.randint(30000, 90000)
            self.agent_pid[h] = apid
            t0 = start + td(rng.uniform(0, 0.9))
            self.local_start[h] = t0
            emit_torchrun_banner(self.train[h], t0, apid)
            first = apid + rng.randint(60, 90)
            for lr in range(8):
                r = ni * 8 + lr
                self.procs[r] = Proc(rng, first + lr)
        self.ip = {h: "%s.%d" % (ip_base, int(h.split("-")[-1]) % 256) for h in hosts}

    def host_of(self, r):
        return self.hosts[r // 8]

    def tee(self, r):
        return "[default%d]:" % (r % 8)

    def nccl_init(self, t):
        comm_id = hexid(self.rng, 16)
        for r in range(self.n):
            h = self.host_of(r)
            tt = t + td(self.rng.uniform(0, 1.5))
            emit_nccl_init(self.train[h], self.rng, tt, self.tee(r), h, self.procs[r].pid, r % 8, r, self.n,
                           self.plat["bus"][r % 8], comm_id, self.ip[h], self.plat, banner=(r == 0))


def loss_series(rng, n, start, slope, sigma):
    out = []
    for i in range(n):
        out.append(start - slope * i + rng.gauss(0, sigma))
    return out


# --------------------------------------------------------------------------------------------
# scenario 1: job64-xid95


def make_job64():
    rng = random.Random(64095)
    out = os.path.join(SAMPLES, "job64-xid95")
    reset_dir(out)
    hosts = ["gpu-node-%d" % (101 + i) for i in range(8)]
    day = dt.datetime(2026, 12, 2)
    job_start = day.replace(hour=13, minute=44, second=2)
    job = Job(rng, hosts, H100, job_start, "10.20.4")
    script = "pretrain_gpt.py"

    # Megatron setup on rank 0 (node101), NCCL init on all ranks
    t_setup = job_start + td(8.3)
    megatron_preamble(job.train[hosts[0]], t_setup, "[default0]:", 64, "/lustre/ckpt/gpt-1p3b-run12", 24000)
    job.nccl_init(job_start + td(13.0))
    t_built = day.replace(hour=13, minute=45, second=41)
    job.train[hosts[0]].add(t_built, "[default0]:[after model, optimizer, and learning rate scheduler are built] datetime: %s " % t_built.strftime("%Y-%m-%d %H:%M:%S"))
    job.train[hosts[0]].add(t_built + td(0.4), "[default0]:training ...")

    # iteration lines from rank 63 (node108, local rank 7), every 10 iterations, ~1.02 s/it
    t_xid = day.replace(hour=14, minute=7, second=31, microsecond=611874)
    it0, gbs = 24000, 512
    t = t_built + td(14.0)
    it = it0
    losses = loss_series(rng, 200, 2.214, 0.00061, 0.009)
    li = 0
    while True:
        dur = 0.0
        for _ in range(10):
            dur += rng.gauss(1.021, 0.006)
        if t + td(dur) >= t_xid:
            break
        t += td(dur)
        it += 10
        lr = 2.0e-4 * (0.5 * (1 + math.cos(math.pi * it / 200000.0))) + 2.0e-5
        job.train[hosts[7]].add(t, "[default7]:" + megatron_iter_line(t, it, 200000, it * gbs, dur * 100.0, 128.4 * 1.021 / (dur / 10) + rng.gauss(0, 0.2), lr, gbs, losses[li], abs(rng.gauss(0.241, 0.018))))
        li += 1
    last_it = it

    # Xid 95 on gpu-node-104, GPU 0000:ab:00 (rank 29 = node 104 local rank 5)
    r_bad = 29
    h_bad = job.host_of(r_bad)
    p_bad = job.procs[r_bad]
    t_err = t_xid + td(1.272339)
    t_dead = emit_cuda_watchdog(job.train[h_bad], rng, job.tee(r_bad), r_bad, p_bad, t_err, "uncorrectable ECC error encountered")
    # node104's agent notices and SIGTERMs its other 7 workers
    t_poll = t_dead + td(0.1)
    emit_torchrun_failure(job.train[h_bad], rng, job.agent_pid[h_bad], h_bad, script, t_poll,
                          [(t_dead.replace(microsecond=0), r_bad, 5, p_bad.pid)],
                          [job.procs[r].pid for r in range(24, 32) if r != r_bad])

    # everybody else hangs in the next ALLREDUCE and times out 600 s later
    seq, numel = 98765, 52428800
    for ni, h in enumerate(hosts):
        if h == h_bad:
            continue
        node_off = rng.uniform(0.25, 1.6)
        exits = []
        for lr in range(8):
            r = ni * 8 + lr
            start = t_xid + td(node_off + rng.uniform(0, 0.06))
            ran = 600000 + rng.randint(13, 98)
            t_det = start + td(ran / 1000.0)
            t_exit = emit_timeout(job.train[h], rng, job.tee(r) + "", r, job.procs[r], t_det, seq, "ALLREDUCE", numel, seq + 1, seq - 1, ran)
            exits.append((t_exit, r, lr, job.procs[r].pid))
        exits.sort()
        t_poll = exits[0][0] + td(0.1)
        failed = [(te.replace(microsecond=0), r, lr, pid) for te, r, lr, pid in exits if te <= t_poll]
        running = [pid for te, r, lr, pid in sorted(exits, key=lambda e: e[2]) if te > t_poll]
        emit_torchrun_failure(job.train[h], rng, job.agent_pid[h], h, script, t_poll, failed, running)

    # kernel logs
    boot_base = dt.datetime(2026, 11, 29, 8, 11, 40)
    serial = "1652%09d" % rng.randrange(10 ** 9)
    uuid = gpu_uuid(rng)
    for ni, h in enumerate(hosts):
        krng = random.Random(1000 + ni)
        boot = boot_base + td(ni * 97.3 + krng.uniform(0, 30))
        k = KernLog(h, boot)
        kern_boot(k, H100, krng)
        job_end = None
        if h == h_bad:
            k.at_wall(t_xid, "NVRM: GPU at PCI:0000:ab:00: " + uuid)
            k.at_wall(t_xid + td(0.000011), "NVRM: GPU Board Serial Number: " + serial)
            k.at_wall(t_xid + td(0.000019), "NVRM: Xid (PCI:0000:ab:00): 95, pid=%d, name=python, Uncontained: FBHUB. RST: Yes, D-RST: No" % p_bad.pid)
            tt = t_dead + td(0.61)
            for ch in ("00000008", "00000009", "0000000a"):
                k.at_wall(tt, "NVRM: Xid (PCI:0000:ab:00): 45, pid=%d, name=python, Ch %s" % (p_bad.pid, ch))
                tt += td(0.000131)
            job_end = t_dead + td(42.7)
        else:
            job_end = t_xid + td(600 + 38 + krng.uniform(0, 5))
        kern_runtime_noise(k, krng, boot + td(40), job_start, job_start, job_end)
        if ni == 6:
            write_gzip(os.path.join(out, "node%d" % (101 + ni), "kern.log.gz"), k.lines())
        else:
            write_text(os.path.join(out, "node%d" % (101 + ni), "kern.log"), k.lines())
        write_text(os.path.join(out, "node%d" % (101 + ni), "train.log"), job.train[h].lines())
    return {"xid": t_xid, "err": t_err, "last_it": last_it, "serial": serial, "uuid": uuid, "pid": p_bad.pid}


# --------------------------------------------------------------------------------------------
# scenario 2: job16-remap-loss-spike


def make_remap_spike():
    rng = random.Random(16063)
    out = os.path.join(SAMPLES, "job16-remap-loss-spike")
    reset_dir(out)
    hosts = ["gpu-node-201", "gpu-node-202"]
    day = dt.datetime(2026, 11, 18)
    job_start = day.replace(hour=10, minute=31, second=5)
    job = Job(rng, hosts, A100, job_start, "10.20.6")
    megatron_preamble(job.train[hosts[0]], job_start + td(7.6), "[default0]:", 16, "/lustre/ckpt/gpt-760m-run04", 61200)
    job.nccl_init(job_start + td(12.4))
    t_built = day.replace(hour=10, minute=32, second=21)
    job.train[hosts[0]].add(t_built, "[default0]:[after model, optimizer, and learning rate scheduler are built] datetime: %s " % t_built.strftime("%Y-%m-%d %H:%M:%S"))
    job.train[hosts[0]].add(t_built + td(0.3), "[default0]:training ...")

    t_xid = day.replace(hour=10, minute=42, second=17, microsecond=284517)
    t_end = day.replace(hour=10, minute=53, second=40)
    spike_loss = [6.914233, 7.862907, 7.402118, 5.977364, 4.408151, 3.321785, 2.804436, 2.571092, 2.463518, 2.428870]
    spike_gn = [36.417, 44.872, 31.953, 18.604, 8.931, 4.712, 2.633, 1.742, 1.309, 1.118]
    it0, gbs = 61200, 256
    t = t_built + td(11.0)
    it = it0
    spike_at = None
    k_sp = 0
    info = {}
    while True:
        dur = rng.gauss(1.452, 0.009)
        if t + td(dur) > t_end:
            break
        t += td(dur)
        it += 1
        n = it - it0
        loss = 2.398 - 0.000058 * n + rng.gauss(0, 0.0105)
        gn = abs(rng.gauss(0.93, 0.045))
        if spike_at is None and t >= t_xid + td(84.0):
            spike_at = it
            info["spike_it"] = it
            info["spike_t"] = t
        if spike_at is not None and k_sp < len(spike_loss):
            loss, gn = spike_loss[k_sp], spike_gn[k_sp]
            if k_sp == 1:
                info["peak_it"], info["peak_t"] = it, t
            k_sp += 1
        lr = 1.5e-4 * (0.5 * (1 + math.cos(math.pi * it / 250000.0))) + 1.5e-5
        job.train[hosts[1]].add(t, "[default7]:" + megatron_iter_line(t, it, 250000, it * gbs, dur * 1000.0, 131.7 * 1.452 / dur + rng.gauss(0, 0.15), lr, gbs, loss, gn))
    info["last_it"] = it

    r_bad = 11  # gpu-node-202 local rank 3, bus 4e
    pid = job.procs[r_bad].pid
    serial = "1321%09d" % rng.randrange(10 ** 9)
    uuid = gpu_uuid(rng)
    boot_base = dt.datetime(2026, 11, 14, 19, 2, 55)
    for ni, h in enumerate(hosts):
        krng = random.Random(2000 + ni)
        boot = boot_base + td(ni * 143.9 + krng.uniform(0, 20))
        k = KernLog(h, boot)
        kern_boot(k, A100, krng)
        if h == "gpu-node-202":
            phys = 0x2000000000 // 8 + krng.randrange(0x1000000) * 0x20
            k.at_wall(t_xid, "NVRM: GPU at PCI:0000:4e:00: " + uuid)
            k.at_wall(t_xid + td(0.000011), "NVRM: GPU Board Serial Number: " + serial)
            k.at_wall(t_xid + td(0.000016), "NVRM: Xid (PCI:0000:4e:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x%x partition 5, subpartition 0." % phys)
            k.at_wall(t_xid + td(0.023322), "NVRM: Xid (PCI:0000:4e:00): 63, pid=%d, name=python, Row Remapper: New row (0x%016x) marked for remapping, reset gpu to activate." % (pid, phys))
            info["phys"] = phys
        kern_runtime_noise(k, krng, boot + td(40), job_start, job_start, None)
        write_text(os.path.join(out, "node%d" % (201 + ni), "kern.log"), k.lines())
        write_text(os.path.join(out, "node%d" % (201 + ni), "train.log"), job.train[h].lines())
    info.update({"xid": t_xid, "serial": serial, "uuid": uuid, "pid": pid})
    return info


# --------------------------------------------------------------------------------------------
# scenario 3: job16-straggler-hang


def make_straggler():
    rng = random.Random(16006)
    out = os.path.join(SAMPLES, "job16-straggler-hang")
    reset_dir(out)
    hosts = ["gpu-node-301", "gpu-node-302"]
    day = dt.datetime(2026, 12, 9)
    job_start = day.replace(hour=9, minute=12, second=4)
    job = Job(rng, hosts, H100, job_start, "10.20.8")
    script = "pretrain_gpt.py"
    megatron_preamble(job.train[hosts[0]], job_start + td(7.9), "[default0]:", 16, "/lustre/ckpt/gpt-1p3b-run31", 0)
    job.nccl_init(job_start + td(12.9))
    t_built = day.replace(hour=9, minute=13, second=22)
    job.train[hosts[0]].add(t_built, "[default0]:[after model, optimizer, and learning rate scheduler are built] datetime: %s " % t_built.strftime("%Y-%m-%d %H:%M:%S"))
    job.train[hosts[0]].add(t_built + td(0.3), "[default0]:training ...")

    t_hang = day.replace(hour=9, minute=31, second=10, microsecond=402281)
    gbs = 256
    t = t_built + td(12.5)
    it = 0
    losses = loss_series(rng, 200, 3.412, 0.0046, 0.015)
    li = 0
    while True:
        dur = sum(rng.gauss(1.104, 0.005) for _ in range(10))
        if t + td(dur) > t_hang:
            break
        t += td(dur)
        it += 10
        lr = 3.0e-4 * min(1.0, it / 2000.0)
        job.train[hosts[1]].add(t, "[default7]:" + megatron_iter_line(t, it, 100000, it * gbs, dur * 100.0, 118.9 * 1.104 / (dur / 10) + rng.gauss(0, 0.2), lr, gbs, losses[li] - 0.9 * (1 - math.exp(-it / 900.0)), abs(rng.gauss(1.05 * math.exp(-it / 2500.0) + 0.3, 0.03))))
        li += 1
    last_it = it

    seq, numel = 5121, 26214400
    r_hang = 6
    exits_by_host = {h: [] for h in hosts}
    first_det = None
    timed = []
    for r in range(16):
        if r == r_hang:
            continue
        start = t_hang + td(rng.uniform(0.02, 0.09))
        ran = 600000 + rng.randint(14, 97)
        timed.append((start + td(ran / 1000.0), r, ran))
    timed.sort()
    first_det, first_rank = timed[0][0], timed[0][1]
    for t_det, r, ran in timed:
        h = job.host_of(r)
        t_exit = emit_timeout(job.train[h], rng, job.tee(r), r, job.procs[r], t_det, seq, "ALLREDUCE", numel, seq + 1, seq - 1, ran)
        exits_by_host[h].append((t_exit, r, r % 8, job.procs[r].pid))
    # rank 6: nothing outstanding, so its watchdog never times out; the heartbeat monitor sees
    # the dump signal another rank wrote to the TCPStore and reports its own (stale) progress
    h6 = job.host_of(r_hang)
    t6 = first_det + td(rng.uniform(0.03, 0.06))
    pre = job.tee(r_hang)
    job.train[h6].add(t6, pre + c10("E", t6, r_hang, t6.microsecond * 1000 + 417, "ProcessGroupNCCL.cpp:1685") + PG0 % r_hang + "Observed flight recorder dump signal from another rank via TCPStore.")
    t6b = t6 + td(0.000262)
    job.train[h6].add(t6b, pre + c10("E", t6b, r_hang, t6b.microsecond * 1000 + 93, "ProcessGroupNCCL.cpp:1723") + PG0 % r_hang +
                      "Received a dump signal due to a collective timeout from  rank %d and we will try our best to dump the debug info. Last enqueued NCCL work: %d, last completed NCCL work: %d.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. " % (first_rank, seq - 1, seq - 1))
    for h in hosts:
        exits = sorted(exits_by_host[h])
        t_poll = exits[0][0] + td(0.1)
        failed = [(te.replace(microsecond=0), r, lr, pid) for te, r, lr, pid in exits if te <= t_poll]
        running = [(lr, pid) for te, r, lr, pid in exits if te > t_poll]
        if h == h6:
            assert t6 < t_poll, "rank 6 must report before its agent SIGTERMs it"
            running.append((r_hang, job.procs[r_hang].pid))
        emit_torchrun_failure(job.train[h], rng, job.agent_pid[h], h, script, t_poll, failed, [pid for lr, pid in sorted(running)])

    boot_base = dt.datetime(2026, 12, 5, 22, 40, 13)
    for ni, h in enumerate(hosts):
        krng = random.Random(3000 + ni)
        boot = boot_base + td(ni * 88.1 + krng.uniform(0, 20))
        k = KernLog(h, boot)
        kern_boot(k, H100, krng)
        kern_runtime_noise(k, krng, boot + td(40), job_start, job_start, first_det + td(31 + krng.uniform(0, 4)))
        write_text(os.path.join(out, "node%d" % (301 + ni), "kern.log"), k.lines())
        write_text(os.path.join(out, "node%d" % (301 + ni), "train.log"), job.train[h].lines())
    return {"hang": t_hang, "first_timeout": first_det, "first_rank": first_rank, "last_it": last_it, "rank6_report": t6}


# --------------------------------------------------------------------------------------------
# scenario 4: job8-early-loss-spike


def make_early_spike():
    """Issue 17's case: early in a fresh run the loss still falls fast (3.5 -> 2.3 over the 100
    iterations before the spike, noise +-0.02) when it jumps 2.6x for three iterations, 20 s after
    an Xid 63 on the same node."""
    rng = random.Random(8063)
    out = os.path.join(SAMPLES, "job8-early-loss-spike")
    reset_dir(out)
    hosts = ["gpu-node-401"]
    day = dt.datetime(2026, 11, 24)
    job_start = day.replace(hour=16, minute=2, second=11)
    job = Job(rng, hosts, A100, job_start, "10.20.8")
    megatron_preamble(job.train[hosts[0]], job_start + td(6.9), "[default0]:", 8, None, 0)
    job.nccl_init(job_start + td(11.8))
    t_built = day.replace(hour=16, minute=2, second=58)
    job.train[hosts[0]].add(t_built, "[default0]:[after model, optimizer, and learning rate scheduler are built] datetime: %s " % t_built.strftime("%Y-%m-%d %H:%M:%S"))
    job.train[hosts[0]].add(t_built + td(0.3), "[default0]:training ...")

    spike_it, spike_len, last_it = 295, 3, 420
    gbs = 256
    t = t_built + td(9.0)
    info = {}
    for it in range(1, last_it + 1):
        dur = rng.gauss(1.118, 0.007)
        t += td(dur)
        # 3.5 at iteration 195, 2.3 at 295: L = 1.2 + 9.6 exp(-(it - 1) / 135.6), from ln(50k) at 1
        loss = 1.2 + 9.6 * math.exp(-(it - 1) / 135.6) + rng.uniform(-0.02, 0.02)
        gn = abs(rng.gauss(1.6 * math.exp(-it / 150.0) + 0.45, 0.04))
        if spike_it <= it < spike_it + spike_len:
            loss *= 2.6
            gn *= 9.0
        if it == spike_it:
            info["spike_t"] = t
        lr = 3.0e-4 * min(1.0, it / 100.0)
        job.train[hosts[0]].add(t, "[default7]:" + megatron_iter_line(t, it, 100000, it * gbs, dur * 1000.0, 142.3 * 1.118 / dur + rng.gauss(0, 0.15), lr, gbs, loss, gn))
    t_xid = info["spike_t"] - td(20.4)

    r_bad = 3  # local rank 3, bus 4e
    pid = job.procs[r_bad].pid
    serial = "1321%09d" % rng.randrange(10 ** 9)
    uuid = gpu_uuid(rng)
    krng = random.Random(4000)
    boot = dt.datetime(2026, 11, 20, 7, 41, 3)
    k = KernLog(hosts[0], boot)
    kern_boot(k, A100, krng)
    phys = 0x2000000000 // 8 + krng.randrange(0x1000000) * 0x20
    k.at_wall(t_xid, "NVRM: GPU at PCI:0000:4e:00: " + uuid)
    k.at_wall(t_xid + td(0.000011), "NVRM: GPU Board Serial Number: " + serial)
    k.at_wall(t_xid + td(0.000016), "NVRM: Xid (PCI:0000:4e:00): 63, pid=%d, name=python, Row Remapper: New row (0x%016x) marked for remapping, reset gpu to activate." % (pid, phys))
    kern_runtime_noise(k, krng, boot + td(40), job_start, job_start, None)
    write_text(os.path.join(out, "kern.log"), k.lines())
    write_text(os.path.join(out, "train.log"), job.train[hosts[0]].lines())
    info.update({"xid": t_xid, "serial": serial, "uuid": uuid, "pid": pid, "last_it": last_it})
    return info


def main():
    a = make_job64()
    b = make_remap_spike()
    c = make_straggler()
    d = make_early_spike()
    print("job64-xid95: Xid 95 at %s, rank 29 error at %s, last iteration %d, serial %s, %s, pid %d" % (a["xid"], a["err"], a["last_it"], a["serial"], a["uuid"], a["pid"]))
    print("job16-remap-loss-spike: Xid 48/63 at %s, spike starts it %d at %s, peak it %d, last it %d, serial %s, %s, pid %d, phys 0x%x" % (b["xid"], b["spike_it"], b["spike_t"], b["peak_it"], b["last_it"], b["serial"], b["uuid"], b["pid"], b["phys"]))
    print("job16-straggler-hang: rank 6 stalls after %s, first timeout %s (rank %d), rank 6 report %s, last iteration %d" % (c["hang"], c["first_timeout"], c["first_rank"], c["rank6_report"], c["last_it"]))


    print("job8-early-loss-spike: Xid 63 at %s, spike starts %s, last iteration %d, serial %s, %s, pid %d" % (d["xid"], d["spike_t"], d["last_it"], d["serial"], d["uuid"], d["pid"]))


if __name__ == "__main__":
    main()
