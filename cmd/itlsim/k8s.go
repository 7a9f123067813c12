package main

import (
	"github.com/spf13/pflag"

	"github.com/itlsim/itlsim/reports/study"
)

// k8sFlags describe the Indexed Job --emit-k8s-job prints.
type k8sFlags struct {
	emit bool
	job  study.K8sJob
}

func (k *k8sFlags) bind(f *pflag.FlagSet) {
	f.BoolVar(&k.emit, "emit-k8s-job", false, "print a Kubernetes PersistentVolumeClaim and an Indexed Job (batch/v1) that runs the --shard-count shards into --out, and exit")
	f.StringVar(&k.job.Image, "k8s-image", "itlsim:latest", "with --emit-k8s-job: the container image holding the itlsim binary (and the scenario file, if any)")
	f.StringVar(&k.job.Claim, "k8s-claim", "itlsim-results", "with --emit-k8s-job: the PersistentVolumeClaim mounted at --out (ReadWriteMany, shared by the pods; a DNS-1123 label)")
	f.StringVar(&k.job.Name, "k8s-name", "", "with --emit-k8s-job: the Job's name, a DNS-1123 label (default itlsim-COMMAND)")
	f.StringVar(&k.job.Storage, "k8s-storage", study.K8sDefaultStorage, "with --emit-k8s-job: the storage the claim requests (a Kubernetes quantity)")
}
