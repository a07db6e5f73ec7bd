// Command kube runs one Kubernetes control-plane or node component per
// invocation, chosen by the first argument:
//
//	kube apiserver ...           (kube-apiserver)
//	kube controller-manager ...  (kube-controller-manager)
//	kube scheduler ...           (kube-scheduler)
//	kube kubelet ...             (kubelet)
//	kube etcd ...                (etcd, the version Kubernetes 1.34 is tested with)
//	kube kubectl ...             (kubectl, the client of the same version)
//	kube helm ...                (helm, Helm v4's own command, on the same client-go)
//	kube netpol ...              (NetworkPolicy enforcer: sigs.k8s.io/kube-network-policies, see netpol.go)
//	kube version
//
// The components are the real ones: their cobra commands come straight from
// the k8s.io/kubernetes module, so the test cluster runs exactly the code a
// real cluster of this version runs. kubectl comes from the k8s.io/kubectl
// module at the matching release (as k8s.io/kubernetes/cmd/kubectl builds it),
// so tests and benchmarks can drive the cluster by hand whatever kubectl the
// machine has, if any. helm is Helm v4's root command (helm.sh/helm/v4/pkg/cmd,
// as helm.sh/helm/v4/cmd/helm builds it) at the release whose k8s.io modules
// are this version's (v4.0.x: v0.34), so it shares them. One binary keeps the build (and the cache entry) to a
// single link.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fsnotify/fsnotify"
	"github.com/spf13/cobra"
	"go.etcd.io/etcd/server/v3/etcdmain"

	_ "time/tzdata" // CronJob time zones, as kube-apiserver / kube-controller-manager do

	_ "k8s.io/client-go/plugin/pkg/client/auth" // kubectl's client auth plugins
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	"k8s.io/component-base/version"

	helmcmd "helm.sh/helm/v4/pkg/cmd"
	helmkube "helm.sh/helm/v4/pkg/kube"
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

func usage() {
	fmt.Fprintf(os.Stderr, "usage: %s apiserver|controller-manager|scheduler|kubelet|etcd|kubectl|helm|netpol|version [flags]\n", os.Args[0])
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var command *cobra.Command
	switch os.Args[1] {
	case "apiserver", "kube-apiserver":
		command = apiserver.NewAPIServerCommand()
	case "controller-manager", "kube-controller-manager":
		if mode := os.Getenv("BERTH_HOSTPATH_PV_MODE"); mode != "" {
			if err := openHostPathPVs(hostPathPVDir, mode); err != nil {
				fmt.Fprintf(os.Stderr, "hostpath PV permissions: %v\n", err)
				os.Exit(1)
			}
		}
		command = controllermanager.NewControllerManagerCommand()
	case "scheduler", "kube-scheduler":
		command = scheduler.NewSchedulerCommand()
	case "kubelet":
		command = kubelet.NewKubeletCommand(context.Background())
	case "etcd":
		// Debian's etcd 3.4.23 predates watch progress requests, which the 1.34
		// watch cache relies on: watches without a resourceVersion then fail with
		// "Too large resource version". The etcd module k8s.io/kubernetes itself
		// depends on (3.6) has them.
		etcdmain.Main(append([]string{"etcd"}, os.Args[2:]...))
		return
	case "kubectl":
		// kubectl reads os.Args itself (plugins, .kuberc aliases, -v), so it
		// sees its own command line, as if it were the kubectl binary.
		os.Args = append([]string{"kubectl"}, os.Args[2:]...)
		logs.GlogSetter(kubectl.GetLogVerbosity(os.Args)) //nolint:errcheck // as cmd/kubectl does
		if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err) // prints the error and exits non-zero
		}
		return
	case "helm":
		os.Exit(runHelm(os.Args[2:]))
	case "netpol":
		os.Exit(runNetpol(os.Args[2:]))
	case "version", "--version":
		fmt.Println(version.Get().GitVersion)
		return
	default:
		usage()
		os.Exit(2)
	}
	// cobra reads os.Args[1:] by default; hand it the component's own flags.
	command.SetArgs(os.Args[2:])
	os.Exit(cli.Run(command))
}

// runHelm runs Helm's root command as helm.sh/helm/v4/cmd/helm does and
// returns the exit status. Helm reads os.Args itself (plugins), so it sees its
// own command line, as if it were the helm binary.
func runHelm(args []string) int {
	os.Args = append([]string{"helm"}, args...)
	// The field manager in managedFields: "helm", whatever the binary is called.
	helmkube.ManagedFieldsManager = "helm"
	command, err := helmcmd.NewRootCmd(os.Stdout, args, helmcmd.SetupLogging)
	if err != nil {
		slog.Warn("command failed", slog.Any("error", err))
		return 1
	}
	command.SetArgs(args)
	if err := command.Execute(); err != nil {
		if cerr, ok := err.(helmcmd.CommandError); ok {
			return cerr.ExitCode
		}
		return 1
	}
	return 0
}

// hostPathPVDir is where the in-tree hostPath provisioner (controller-manager
// --enable-hostpath-provisioner) creates each volume, always with mode 0750 and
// owned by root. Pods that pass Pod Security "restricted" run as non-root and
// could not write to them, so the test cluster widens each new volume directory
// to BERTH_HOSTPATH_PV_MODE (as local-path provisioners do). The directory is
// created before the PV object exists, so the change lands long before any pod
// can mount the volume.
const hostPathPVDir = "/tmp/hostpath_pv"

func openHostPathPVs(dir, modeText string) error {
	mode, err := strconv.ParseUint(modeText, 8, 32)
	if err != nil {
		return fmt.Errorf("BERTH_HOSTPATH_PV_MODE=%q: %w", modeText, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if err := watcher.Add(dir); err != nil {
		return err
	}
	widen := func(path string) {
		if info, err := os.Lstat(path); err == nil && info.IsDir() {
			if err := os.Chmod(path, os.FileMode(mode)); err != nil {
				fmt.Fprintf(os.Stderr, "hostpath PV permissions: %v\n", err)
			}
		}
	}
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			widen(filepath.Join(dir, e.Name()))
		}
	}
	go func() {
		for {
			select {
			case ev, ok := <-watcher.Events:
				if !ok {
					return
				}
				if ev.Op&fsnotify.Create != 0 {
					widen(ev.Name)
				}
			case err, ok := <-watcher.Errors:
				if !ok {
					return
				}
				fmt.Fprintf(os.Stderr, "hostpath PV watcher: %v\n", err)
			}
		}
	}()
	return nil
}
