package main

import (
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// k8sFlags describe the Indexed Job --emit-k8s-job prints.
type k8sFlags struct {
	emit  bool
	image string
	claim string
	name  string
}

func (k *k8sFlags) bind(f *pflag.FlagSet) {
	f.BoolVar(&k.emit, "emit-k8s-job", false, "print a Kubernetes Indexed Job (batch/v1) that runs the --shard-count shards into --out, and exit")
	f.StringVar(&k.image, "k8s-image", "itlsim:latest", "with --emit-k8s-job: the container image holding the itlsim binary (and the scenario file, if any)")
	f.StringVar(&k.claim, "k8s-claim", "itlsim-results", "with --emit-k8s-job: the PersistentVolumeClaim mounted at --out (ReadWriteMany, shared by the pods)")
	f.StringVar(&k.name, "k8s-name", "", "with --emit-k8s-job: the Job's name (default itlsim-COMMAND)")
}

// The Job's shape, as Kubernetes' batch/v1 API spells it: only the fields
// itlsim sets. (The test decodes the output strictly with the API's own
// types, k8s.io/api/batch/v1.)
type k8sJob struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   k8sMeta    `yaml:"metadata"`
	Spec       k8sJobSpec `yaml:"spec"`
}

type k8sMeta struct {
	Name   string            `yaml:"name,omitempty"`
	Labels map[string]string `yaml:"labels,omitempty"`
}

type k8sJobSpec struct {
	CompletionMode string         `yaml:"completionMode"`
	Completions    int            `yaml:"completions"`
	Parallelism    int            `yaml:"parallelism"`
	BackoffLimit   int            `yaml:"backoffLimit"`
	Template       k8sPodTemplate `yaml:"template"`
}

type k8sPodTemplate struct {
	Metadata k8sMeta    `yaml:"metadata"`
	Spec     k8sPodSpec `yaml:"spec"`
}

type k8sPodSpec struct {
	RestartPolicy string         `yaml:"restartPolicy"`
	Containers    []k8sContainer `yaml:"containers"`
	Volumes       []k8sVolume    `yaml:"volumes"`
}

type k8sContainer struct {
	Name         string           `yaml:"name"`
	Image        string           `yaml:"image"`
	Command      []string         `yaml:"command"`
	Args         []string         `yaml:"args"`
	VolumeMounts []k8sVolumeMount `yaml:"volumeMounts"`
}

type k8sVolumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
}

type k8sVolume struct {
	Name                  string      `yaml:"name"`
	PersistentVolumeClaim k8sClaimRef `yaml:"persistentVolumeClaim"`
}

type k8sClaimRef struct {
	ClaimName string `yaml:"claimName"`
}

// write prints the Indexed Job running command with args in count pods,
// each with its JOB_COMPLETION_INDEX as shard index, writing into dir on
// the claimed volume.
func (k *k8sFlags) write(w io.Writer, command string, args []string, count int, dir string) error {
	switch {
	case count < 1:
		return errors.New("--emit-k8s-job: give --shard-count N, the number of pods")
	case dir == "":
		return errors.New("--emit-k8s-job: give --out DIR, where the pods write their points (the volume is mounted there)")
	case !path.IsAbs(dir):
		return fmt.Errorf("--emit-k8s-job: --out %s: give an absolute path inside the pod (the volume's mount point), such as /results", dir)
	}
	name := k.name
	if name == "" {
		name = "itlsim-" + command
	}
	labels := map[string]string{"app.kubernetes.io/name": "itlsim", "app.kubernetes.io/component": command}
	job := k8sJob{
		APIVersion: "batch/v1",
		Kind:       "Job",
		Metadata:   k8sMeta{Name: name, Labels: labels},
		Spec: k8sJobSpec{
			CompletionMode: "Indexed",
			Completions:    count,
			Parallelism:    count,
			BackoffLimit:   3 * count, // a failed pod is retried and resumes: its points already written are skipped
			Template: k8sPodTemplate{
				Metadata: k8sMeta{Labels: labels},
				Spec: k8sPodSpec{
					RestartPolicy: "Never",
					Containers: []k8sContainer{{
						Name:    "itlsim",
						Image:   k.image,
						Command: []string{"itlsim"},
						// The index comes from JOB_COMPLETION_INDEX, which
						// the Job controller sets in every pod.
						Args:         append(append([]string{command}, args...), fmt.Sprintf("--shard-count=%d", count), "--out="+dir),
						VolumeMounts: []k8sVolumeMount{{Name: "results", MountPath: dir}},
					}},
					Volumes: []k8sVolume{{Name: "results", PersistentVolumeClaim: k8sClaimRef{ClaimName: k.claim}}},
				},
			},
		},
	}
	fmt.Fprintf(w, "# itlsim %s in %d shards: kubectl apply -f this file; when the Job completes, run\n# itlsim merge %s (on a machine or pod that mounts claim %s)\n", command, count, dir, k.claim)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(job); err != nil {
		return err
	}
	return enc.Close()
}
