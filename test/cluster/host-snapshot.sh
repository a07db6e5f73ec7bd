#!/usr/bin/env bash
# Prints what the test cluster may change on the host, normalised so two snapshots can be diffed:
# network links and bridges, iptables chains and rules (counters dropped), nftables tables, mounts, the sysctls
# `up` sets, cgroups named after the cluster, and processes running from the cluster's cache.
# scripts/test.sh takes one before `cluster:up` and one after `cluster:down` and fails on a difference.
set -uo pipefail
CACHE=${BERTH_CLUSTER_CACHE:-${HOME:-/root}/.cache/berth/cluster}

section() { printf '## %s\n' "$1"; }

section links
ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | sort
section addresses
ip -o addr show 2>/dev/null | awk '{print $2, $3, $4}' | sort
section routes
ip route show 2>/dev/null | sort
for table in filter nat mangle; do
  section "iptables $table"
  iptables-save -t "$table" 2>/dev/null | grep -E '^(:|-A)' | sed -E 's/ \[[0-9]+:[0-9]+\]$//' | sort
done
# nftables tables other than iptables-nft's own (those are the iptables sections above), e.g. the
# NetworkPolicy enforcer's inet kube-network-policies. No nft(8) here: the cluster binary lists them
# (`kube netpol tables`); before its first build there is none, and nothing of ours either.
section "nftables tables"
kube_bin=$(ls -t "$CACHE"/bin/kube-* 2>/dev/null | grep -v '\.partial$' | head -n 1)
if command -v nft >/dev/null 2>&1; then
  nft list tables 2>/dev/null | sed 's/^table //'
elif [[ -n $kube_bin ]] && "$kube_bin" netpol tables >/dev/null 2>&1; then
  "$kube_bin" netpol tables 2>/dev/null
fi | grep -vE '^(ip|ip6) (filter|nat|mangle|raw|security)$' | sort
section mounts
findmnt -rn -o TARGET 2>/dev/null | sort
section sysctls
for key in net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables; do
  printf '%s=%s\n' "$key" "$(sysctl -n "$key" 2>/dev/null || echo absent)"
done
section cgroups
find /sys/fs/cgroup -maxdepth 3 -type d -name 'berth-test*' 2>/dev/null | sort
section "processes from $CACHE"
for pid in $(pgrep -f -- "$CACHE" 2>/dev/null); do
  [[ $pid == "$$" ]] && continue
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-200
  echo
done | grep -v -e '^$' -e 'host-snapshot.sh' | sort
section "host paths"
for p in /tmp/hostpath_pv /var/log/containers /var/lib/kubelet /run/containerd /var/lib/cni; do
  [[ -e $p ]] && echo "$p"
done
exit 0
