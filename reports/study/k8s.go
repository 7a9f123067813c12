package study

import (
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	sigsyaml "sigs.k8s.io/yaml"
)

// K8sDefaultStorage is the claim's default size: a point file is a few
// kilobytes, a capacity search's some hundreds, so 1 GiB holds any study
// of --shard-count's range with room to spare.
const K8sDefaultStorage = "1Gi"

// k8sDefaultResources is what each pod requests when nothing better is
// known: one CPU (a shard runs its points on -j workers; the pod's command
// leaves -j at every core it is given) and 1 GiB of memory, which holds a
// point of the default scenario many times over. A memory estimate of the
// study, when one is made, replaces the memory request (see jobResources).
var k8sDefaultResources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1"),
		corev1.ResourceMemory: resource.MustParse("1Gi"),
	},
}

// jobResources is the place a study's own estimate of CPU and memory per
// pod goes; until one is made, every pod requests k8sDefaultResources.
func jobResources() corev1.ResourceRequirements { return *k8sDefaultResources.DeepCopy() }

// imageRef is an image reference as the container runtimes read it
// (distribution's grammar, without IPv6 hosts): [host[:port]/]path[:tag][@digest].
var imageRef = regexp.MustCompile(`^` +
	`(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?/)?` +
	`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*` +
	`(?::[\w][\w.-]{0,127})?` +
	`(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,})?$`)

// checkLabel refuses a name Kubernetes would not take as a DNS-1123 label.
func checkLabel(flag, v string) error {
	if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
		return fmt.Errorf("%s %q: expected a DNS-1123 label: %s", flag, v, strings.Join(errs, "; "))
	}
	return nil
}

// checkPodPath refuses a path inside the pod that is not absolute, clean
// UTF-8 without control characters.
func checkPodPath(dir string) error {
	if !utf8.ValidString(dir) || strings.ContainsFunc(dir, unicode.IsControl) {
		return fmt.Errorf("--emit-k8s-job: --out %q: expected a path without control characters (newlines, tabs)", dir)
	}
	if !path.IsAbs(dir) {
		return fmt.Errorf("--emit-k8s-job: --out %s: give an absolute path inside the pod (the volume's mount point), such as /results", dir)
	}
	if len(dir) > 4096 {
		return fmt.Errorf("--emit-k8s-job: --out: a path of %d bytes; expected at most 4096", len(dir))
	}
	return nil
}

// K8sJob is the PersistentVolumeClaim and Indexed Job that run a study's
// shards on Kubernetes (itlsim sweep or capacity --emit-k8s-job); the
// errors its checks give name the flags that set each field.
type K8sJob struct {
	Image   string // --k8s-image: the container image holding the itlsim binary
	Claim   string // --k8s-claim: the claim mounted at the output directory
	Name    string // --k8s-name: the Job's name (default itlsim-COMMAND)
	Storage string // --k8s-storage: the storage the claim requests
}

// check refuses any flag value that is not what Kubernetes takes.
func (k *K8sJob) check(command string, count int, dir string) (name string, storage resource.Quantity, err error) {
	switch {
	case count < 1:
		return "", storage, errors.New("--emit-k8s-job: give --shard-count N, the number of pods")
	case dir == "":
		return "", storage, errors.New("--emit-k8s-job: give --out DIR, where the pods write their points (the volume is mounted there)")
	}
	if err := checkPodPath(dir); err != nil {
		return "", storage, err
	}
	name = k.Name
	if name == "" {
		name = "itlsim-" + command
	}
	if err := checkLabel("--k8s-name", name); err != nil {
		return "", storage, err
	}
	if err := checkLabel("--k8s-claim", k.Claim); err != nil {
		return "", storage, err
	}
	if len(k.Image) > 255 || !imageRef.MatchString(k.Image) {
		return "", storage, fmt.Errorf("--k8s-image %q: expected an image reference such as registry.example.com/itlsim:1.2 (lower-case path, optional :tag and @sha256:digest)", k.Image)
	}
	storage, err = resource.ParseQuantity(k.Storage)
	if err != nil || storage.Sign() <= 0 {
		return "", storage, fmt.Errorf("--k8s-storage %q: expected a positive Kubernetes quantity such as 1Gi or 500Mi", k.Storage)
	}
	return name, storage, nil
}

// Write prints the PersistentVolumeClaim and the Indexed Job running
// command with args in count pods, each with its JOB_COMPLETION_INDEX as
// shard index, writing into dir on the claimed volume. Every part of the
// output, the comments included, is built by the YAML encoder from checked
// values: no flag can add a line of its own.
func (k *K8sJob) Write(w io.Writer, command string, args []string, count int, dir string) error {
	name, storage, err := k.check(command, count, dir)
	if err != nil {
		return err
	}
	labels := map[string]string{"app.kubernetes.io/name": "itlsim", "app.kubernetes.io/component": command}
	claim := corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: k.Claim, Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			// Every pod writes its points into the one volume.
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: storage}},
		},
	}
	indexed := batchv1.IndexedCompletion
	completions, parallelism := int32(count), int32(count)
	backoff := int32(3 * count) // a failed pod is retried and resumes: its points already written are skipped
	job := batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode: &indexed,
			Completions:    &completions,
			Parallelism:    &parallelism,
			BackoffLimit:   &backoff,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:    "itlsim",
						Image:   k.Image,
						Command: []string{"itlsim"},
						// The index comes from JOB_COMPLETION_INDEX, which
						// the Job controller sets in every pod.
						Args:         append(append([]string{command}, args...), fmt.Sprintf("--shard-count=%d", count), "--out="+dir),
						Resources:    jobResources(),
						VolumeMounts: []corev1.VolumeMount{{Name: "results", MountPath: dir}},
					}},
					Volumes: []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: k.Claim}}}},
				},
			},
		},
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	comments := []string{
		fmt.Sprintf("itlsim %s in %d shards: kubectl apply -f this file (the claim, then the Job).", command, count),
		fmt.Sprintf("When the Job completes, run itlsim merge %s on a machine or pod that mounts claim %s;", dir, k.Claim),
		"it names the shard indexes whose points are missing, if any failed.",
	}
	for i, obj := range []any{&claim, &job} {
		node, err := k8sNode(obj)
		if err != nil {
			return err
		}
		if i == 0 {
			node.HeadComment = strings.Join(comments, "\n")
		}
		if err := enc.Encode(node); err != nil {
			return err
		}
	}
	return enc.Close()
}

// k8sNode encodes a Kubernetes object as its API spells it (the JSON
// names of k8s.io/api's types) into a YAML document, without the empty
// fields the API's types always carry (status: {}, creationTimestamp: null).
func k8sNode(obj any) (*yaml.Node, error) {
	b, err := sigsyaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	prune(&doc)
	return &doc, nil
}

// prune drops the mapping entries whose value is null or an empty mapping.
func prune(n *yaml.Node) {
	for _, c := range n.Content {
		prune(c)
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	kept := n.Content[:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		v := n.Content[i+1]
		if v.Tag == "!!null" || v.Kind == yaml.MappingNode && len(v.Content) == 0 {
			continue
		}
		kept = append(kept, n.Content[i], v)
	}
	n.Content = kept
}
