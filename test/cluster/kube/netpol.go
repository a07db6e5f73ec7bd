package main

// kube netpol: a NetworkPolicy enforcer for the test cluster, whose bridge CNI enforces none.
// It is sigs.k8s.io/kube-network-policies' controller, wired as that module's cmd/main.go wires
// it, with these differences: it reads a kubeconfig (it runs on the host like the kubelet, not
// in a Pod); it also stops on SIGTERM (the cluster scripts stop components with SIGTERM; the
// upstream command only handles SIGINT and would leave its nftables table behind); it waits for
// the controller to remove that table before it exits; and on kernels without the nftables queue
// expression it installs its own table that queues through the xtables NFQUEUE target
// (netpol_dataplane.go; this is what runs on the test machines).
//
//	kube netpol --kubeconfig FILE --hostname-override NODE --pod-cidr CIDR [--nfqueue-id 100] [--metrics-bind-address ADDR] [-v N]
//	kube netpol cleanup   delete the enforcer's nftables tables (after a crash or SIGKILL)
//	kube netpol tables    list the host's nftables tables ("family name" per line), for host snapshots
//
// How it enforces: an nftables table whose postrouting chain sends the first packet of each new
// connection from or to a Pod of this node (upstream: only of Pods some NetworkPolicy selects) to
// NFQUEUE; the controller evaluates the policies in user space and accepts or drops the packet
// (drops: the client sees no reply, never a reset, so a denied connect ends in its own timeout).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/nftables"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sys/unix"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

// netpolTable is the controller's default table (networkpolicy.Config.NFTableName).
const netpolTable = "kube-network-policies"

func runNetpol(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "cleanup":
			if err := deleteNetpolTables(); err != nil {
				fmt.Fprintf(os.Stderr, "netpol cleanup: %v\n", err)
				return 1
			}
			return 0
		case "tables":
			return listNFTables()
		}
	}
	fs := flag.NewFlagSet("netpol", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (required)")
	nodeName := fs.String("hostname-override", "", "name of this Node (required)")
	podCIDR := fs.String("pod-cidr", "", "IPv4 CIDR of this node's Pods (required: the fallback dataplane queues their connections)")
	queueID := fs.Int("nfqueue-id", 100, "number of the nfqueue used")
	metricsAddr := fs.String("metrics-bind-address", "127.0.0.1:9080", "address of the /metrics endpoint")
	failOpen := fs.Bool("fail-open", false, "if set, packets pass while the controller is not running")
	c := logsapi.NewLoggingConfiguration()
	logsapi.AddGoFlags(c, fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *kubeconfig == "" || *nodeName == "" || *podCIDR == "" {
		fmt.Fprintln(os.Stderr, "netpol: --kubeconfig, --hostname-override and --pod-cidr are required")
		return 2
	}
	_, cidr, err := net.ParseCIDR(*podCIDR)
	if err != nil || cidr.IP.To4() == nil {
		fmt.Fprintf(os.Stderr, "netpol: --pod-cidr %q: not an IPv4 CIDR\n", *podCIDR)
		return 2
	}
	logs.InitLogs()
	if err := logsapi.ValidateAndApply(c, nil); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 1
	}
	if _, _, err := net.SplitHostPort(*metricsAddr); err != nil {
		fmt.Fprintf(os.Stderr, "netpol: --metrics-bind-address %q: %v\n", *metricsAddr, err)
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	cfg := networkpolicy.Config{
		FailOpen:            *failOpen,
		QueueID:             *queueID,
		NodeName:            *nodeName,
		NetfilterBug1766Fix: true, // the upstream default; this kernel predates 6.12
		NFTableName:         netpolTable,
	}
	return serveNetpol(ctx, *kubeconfig, *metricsAddr, cidr, cfg)
}

func serveNetpol(ctx context.Context, kubeconfig, metricsAddr string, podCIDR *net.IPNet, cfg networkpolicy.Config) int {
	logger := klog.FromContext(ctx)
	supported, err := nftQueueSupported()
	if err != nil {
		logger.Error(err, "probing nftables")
		return 1
	}
	if supported {
		logger.Info("the kernel has the nftables queue expression: using the upstream ruleset", "table", "inet "+netpolTable)
	} else {
		logger.Info("no nftables queue expression in this kernel (CONFIG_NFT_QUEUE): queueing through the xtables NFQUEUE target",
			"table", "ip "+fallbackTable, "podCIDR", podCIDR.String())
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		logger.Error(err, "loading the kubeconfig", "path", kubeconfig)
		return 1
	}
	// protobuf, as the upstream command does (no CRDs here: the AdminNetworkPolicy APIs are off)
	config.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	config.ContentType = "application/vnd.kubernetes.protobuf"
	config.UserAgent = "kube-network-policies"
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		logger.Error(err, "creating the client")
		return 1
	}
	factory := informers.NewSharedInformerFactory(clientset, 0)

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.Handler())
	go func() { utilruntime.HandleError(http.ListenAndServe(metricsAddr, mux)) }() //nolint:gosec // local metrics only

	// The NRI plugin (pod IPs from the runtime before the API server has them) finds no NRI
	// socket with containerd 1.6 and logs that once; the controller then uses the API server's
	// pod IPs only. It must stay enabled: with NRI disabled the controller dereferences a nil plugin.
	controller, err := networkpolicy.NewController(clientset,
		factory.Networking().V1().NetworkPolicies(), factory.Core().V1().Namespaces(), factory.Core().V1().Pods(),
		nil, nil, nil, nil, cfg)
	if err != nil {
		logger.Error(err, "creating the network policy controller")
		return 1
	}
	ctx, cancel := context.WithCancel(ctx) // also ends the informers when the controller fails
	defer cancel()
	done := make(chan error, 2) // the controller's end, or the fallback table's failure
	go func() { done <- controller.Run(ctx) }()
	factory.Start(ctx.Done())
	if !supported {
		// Installed once the controller listens on the queue, so that no packet is queued (and
		// dropped) before; the table is gone again when this process ends (see below).
		go func() {
			if !waitQueueBound(ctx, cfg.QueueID) {
				return
			}
			if err := installFallbackTable(podCIDR, uint16(cfg.QueueID), cfg.FailOpen); err != nil {
				done <- fmt.Errorf("installing the fallback nftables table: %w", err)
				return
			}
			logger.Info("enforcing NetworkPolicies", "table", "ip "+fallbackTable, "queue", cfg.QueueID)
		}()
	}

	rc := 0
	select {
	case err := <-done: // failed to start (e.g. the nfqueue could not be bound)
		logger.Error(err, "the network policy controller stopped")
		rc = 1
	case <-ctx.Done():
		logger.Info("stopping: removing the nftables tables")
		select {
		case <-done: // Run's deferred cleanup deleted the table
		case <-time.After(10 * time.Second):
			logger.Info("the controller did not stop within 10s")
		}
	}
	if err := deleteNetpolTables(); err != nil {
		logger.Error(err, "deleting the nftables tables")
		rc = 1
	}
	cancel()
	factory.Shutdown()
	return rc
}

// deleteNetpolTables deletes the controller's and the fallback table, those that exist.
func deleteNetpolTables() error {
	return errors.Join(deleteTable(nftables.TableFamilyINet, netpolTable), deleteTable(nftables.TableFamilyIPv4, fallbackTable))
}

func listNFTables() int {
	nft, err := nftables.New()
	if err == nil {
		var tables []*nftables.Table
		if tables, err = nft.ListTables(); err == nil {
			for _, t := range tables {
				fmt.Printf("%s %s\n", familyName(t.Family), t.Name)
			}
			return 0
		}
	}
	if errors.Is(err, unix.EPERM) {
		fmt.Fprintln(os.Stderr, "netpol tables: needs root (CAP_NET_ADMIN)")
	} else {
		fmt.Fprintf(os.Stderr, "netpol tables: %v\n", err)
	}
	return 1
}

func familyName(f nftables.TableFamily) string {
	switch f {
	case nftables.TableFamilyINet:
		return "inet"
	case nftables.TableFamilyIPv4:
		return "ip"
	case nftables.TableFamilyIPv6:
		return "ip6"
	case nftables.TableFamilyARP:
		return "arp"
	case nftables.TableFamilyNetdev:
		return "netdev"
	case nftables.TableFamilyBridge:
		return "bridge"
	}
	return fmt.Sprintf("family-%d", f)
}
