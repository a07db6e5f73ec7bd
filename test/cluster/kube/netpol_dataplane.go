package main

// The fallback dataplane of `kube netpol`, for kernels without the nftables "queue" expression
// (CONFIG_NFT_QUEUE unset, as on the test machines; the controller's own ruleset then fails with
// "netlink receive: no such file or directory" and nothing reaches its queue). The kernel does
// have nft_compat and the xtables NFQUEUE target, which iptables-nft uses: this table sends the
// same packets to the controller's queue through that target.
//
//	table ip berth-netpol {
//	  chain postrouting { type filter hook postrouting priority srcnat - 5;
//	    oifname "lo" accept                  # the node talking to itself (its bridge address is in POD_CIDR)
//	    meta skuid 0 accept                  # the node's own root traffic (kubelet probes), as upstream
//	    ct state established,related accept  # only the first packet of a connection is judged
//	    ip saddr POD_CIDR xt target NFQUEUE --queue-num Q
//	    ip daddr POD_CIDR xt target NFQUEUE --queue-num Q }
//	  chain input { type filter hook input priority filter;
//	    iifname "lo" accept
//	    ct state established,related accept
//	    ip saddr POD_CIDR xt target NFQUEUE --queue-num Q } }
//
// Unlike the upstream ruleset it queues every new connection from or to a Pod, not only those of
// Pods some policy selects: the controller accepts connections of unselected Pods (as it does
// when AdminNetworkPolicies are on, where it also queues everything). Bridged traffic between
// Pods passes the IPv4 postrouting hook through br_netfilter. The input chain is not upstream's:
// connections from a Pod to the node's own addresses (the API server, the git daemon on the
// bridge address) are delivered locally and never pass postrouting, so upstream never judges
// them; here egress policies apply to them too, as they would to an API server on another node.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/xt"
	"golang.org/x/sys/unix"
)

const fallbackTable = "berth-netpol"

// nftQueueSupported tells whether the kernel accepts a rule with the nftables queue expression
// (in a throw-away table with a chain on no hook, so no packet ever sees it).
func nftQueueSupported() (bool, error) {
	nft, err := nftables.New()
	if err != nil {
		return false, err
	}
	table := nft.AddTable(&nftables.Table{Name: fallbackTable + "-probe", Family: nftables.TableFamilyIPv4})
	chain := nft.AddChain(&nftables.Chain{Name: "probe", Table: table})
	nft.AddRule(&nftables.Rule{Table: table, Chain: chain, Exprs: []expr.Any{&expr.Queue{Num: 100}}})
	nft.DelTable(table)
	err = nft.Flush()
	if err == nil {
		return true, nil
	}
	if isNotFound(err) {
		return false, nil
	}
	return false, err
}

func isNotFound(err error) bool {
	// mdlayher/netlink wraps the errno in an *OpError whose message ends in the errno text.
	return err != nil && (errors.Is(err, unix.ENOENT) || strings.Contains(err.Error(), "no such file or directory"))
}

// installFallbackTable (re)creates the fallback table for the IPv4 pod CIDR and queue.
func installFallbackTable(podCIDR *net.IPNet, queue uint16, bypass bool) error {
	ip4 := podCIDR.IP.To4()
	if ip4 == nil {
		return fmt.Errorf("pod CIDR %s: only IPv4 is supported", podCIDR)
	}
	nft, err := nftables.New()
	if err != nil {
		return err
	}
	table := &nftables.Table{Name: fallbackTable, Family: nftables.TableFamilyIPv4}
	nft.AddTable(table)
	nft.DelTable(table) // AddTable+DelTable: deleted whether it existed or not
	nft.AddTable(table)
	postrouting := nft.AddChain(&nftables.Chain{
		Name: "postrouting", Table: table, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityRef(*nftables.ChainPriorityNATSource - 5),
	})
	input := nft.AddChain(&nftables.Chain{
		Name: "input", Table: table, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter,
	})
	chain := postrouting
	add := func(exprs ...expr.Any) { nft.AddRule(&nftables.Rule{Table: table, Chain: chain, Exprs: exprs}) }
	loopback := func(key expr.MetaKey) { // iifname/oifname "lo" accept
		add(
			&expr.Meta{Key: key, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifname("lo")},
			&expr.Verdict{Kind: expr.VerdictAccept},
		)
	}
	loopback(expr.MetaKeyOIFNAME)
	add( // meta skuid 0 accept
		&expr.Meta{Key: expr.MetaKeySKUID, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{0, 0, 0, 0}},
		&expr.Verdict{Kind: expr.VerdictAccept},
	)
	established := func() { // ct state established,related accept
		add(
			&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
				Mask: binaryutil.NativeEndian.PutUint32(expr.CtStateBitESTABLISHED | expr.CtStateBitRELATED), Xor: []byte{0, 0, 0, 0}},
			&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: []byte{0, 0, 0, 0}},
			&expr.Verdict{Kind: expr.VerdictAccept},
		)
	}
	established()
	// struct xt_NFQ_info_v3 { __u16 queuenum, queues_total, flags; } padded to 8 bytes (XT_ALIGN).
	info := make(xt.Unknown, 8)
	binary.NativeEndian.PutUint16(info[0:], queue)
	binary.NativeEndian.PutUint16(info[2:], 1)
	if bypass {
		binary.NativeEndian.PutUint16(info[4:], 1) // NFQ_FLAG_BYPASS: accept while no one listens
	}
	queueIfPod := func(offset uint32) { // offset 12: IPv4 source address, 16: destination
		add(
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: 4},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: podCIDR.Mask, Xor: []byte{0, 0, 0, 0}},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ip4.Mask(podCIDR.Mask)},
			&expr.Target{Name: "NFQUEUE", Rev: 3, Info: &info},
		)
	}
	queueIfPod(12)
	queueIfPod(16)
	chain = input
	loopback(expr.MetaKeyIIFNAME)
	established()
	queueIfPod(12)
	return nft.Flush()
}

// deleteTable deletes the table FAMILY NAME if it exists (idempotent).
func deleteTable(family nftables.TableFamily, name string) error {
	nft, err := nftables.New()
	if err != nil {
		return err
	}
	tables, err := nft.ListTablesOfFamily(family)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if t.Name == name {
			nft.DelTable(t)
			return nft.Flush()
		}
	}
	return nil
}

func ifname(name string) []byte {
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, name)
	return b
}

// waitQueueBound waits until someone (the controller: the queue was free, or it fails to bind
// it) listens on queue: a line of /proc/net/netfilter/nfnetlink_queue starting with its number.
func waitQueueBound(ctx context.Context, queue int) bool {
	want := strconv.Itoa(queue)
	for {
		if data, err := os.ReadFile("/proc/net/netfilter/nfnetlink_queue"); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if f := strings.Fields(line); len(f) > 0 && f[0] == want {
					return true
				}
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}
