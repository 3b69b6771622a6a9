#!/bin/bash
# A real one-node Slurm for the tests: munged, slurmctld and slurmd on
# localhost, with cgroup limits enforced (Debian's slurm-wlm 22.05).
#   tests/slurm/cluster.sh start   install the packages if missing (root), start, wait for idle
#   tests/slurm/cluster.sh stop    stop the daemons this script started
# Exits 77 (skip) with the reason when this machine cannot run them: not
# root, not Debian, packages not installable, or no working daemons.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
skip() { echo "slurm cluster: skipped: $*" >&2; exit 77; }
fail() { echo "slurm cluster: $*" >&2; exit 1; }
state=/run/xpose-slurm

stop() {  # pidfile program
  [ -s "$1" ] || return 0
  local pid; pid=$(cat "$1")
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || return 0
  kill -TERM "$pid"
  for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.25; done
  kill -KILL "$pid" 2>/dev/null
}

if [ "${1:-}" = stop ]; then
  stop /run/slurm/slurmd.pid slurmd
  stop /run/slurm/slurmctld.pid slurmctld
  [ -e "$state/started-munged" ] && stop /run/munge/munged.pid munged
  rm -rf "$state"
  exit 0
fi
[ "${1:-}" = start ] || fail "usage: $0 start|stop"

[ "$(id -u)" -eq 0 ] || skip "starting Slurm's daemons needs root"
command -v dpkg-query >/dev/null || skip "not a Debian-like system"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      slurm-wlm slurmctld slurmd slurm-client munge >/dev/null; } ||
    skip "cannot install slurm-wlm and munge from the package registry"
fi
mkdir -p "$state"

# munge: the package made a key; the daemon needs its run directory.
[ -s /etc/munge/munge.key ] || { mungekey --create --force && chown munge:munge /etc/munge/munge.key; }
install -d -o munge -g munge -m 0755 /run/munge
install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
if ! munge -n </dev/null >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged || skip "munged does not start"
  touch "$state/started-munged"
  sleep 1
fi
munge -n | unmunge >/dev/null || skip "munge credentials do not round-trip"

# The node line from this machine; cgroup v1 controllers where mounted
# (memory limits enforced), else no cgroups and no limits.
node="$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]*/NodeName=localhost/')"
[ -n "$node" ] || skip "slurmd -C cannot describe this machine"
if [ -d /sys/fs/cgroup/memory ] && [ -d /sys/fs/cgroup/cpuset ] && [ -d /sys/fs/cgroup/freezer ]; then
  cgroups="ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity"
  cat > /etc/slurm/cgroup.conf <<CONF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=yes
ConstrainRAMSpace=yes
ConstrainSwapSpace=no
ConstrainDevices=no
CONF
  echo cgroup > "$state/limits"
else
  cgroups="ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity"
  echo none > "$state/limits"
fi
mkdir -p /etc/slurm
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=xposetest
SlurmctldHost=localhost
AuthType=auth/munge
CredType=cred/munge
SlurmUser=slurm
SlurmdUser=root
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
$cgroups
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
MpiDefault=pmix
KillWait=30
MinJobAge=600
DefMemPerCPU=1024
$node State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
chmod 0644 /etc/slurm/slurm.conf
install -d -o slurm -g slurm -m 0755 /run/slurm /var/log/slurm /var/lib/slurm /var/lib/slurm/slurmctld
install -d -o root -g root -m 0755 /var/lib/slurm/slurmd
slurmctld -c || skip "slurmctld does not start (see /var/log/slurm/slurmctld.log)"
slurmd || skip "slurmd does not start (see /var/log/slurm/slurmd.log)"
for _ in $(seq 60); do
  sinfo -h -o %T 2>/dev/null | grep -qx idle && exit 0
  sleep 1
done
skip "the node never became idle: $(sinfo -h -o '%T %E' 2>&1 | head -1)"
