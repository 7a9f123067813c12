package study

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func TestK8sJobWrite(t *testing.T) {
	k := K8sJob{Image: "registry.example.com/itlsim:1.2", Claim: "results", Storage: "5Gi"}
	var b strings.Builder
	if err := k.Write(&b, "capacity", []string{"--seeds=3"}, 2, "/r"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "# itlsim capacity in 2 shards: kubectl apply -f this file") {
		t.Errorf("no leading comment:\n%s", b.String())
	}
	docs := strings.Split(b.String(), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("%d YAML documents, want a claim and a Job:\n%s", len(docs), b.String())
	}
	var claim corev1.PersistentVolumeClaim
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &claim); err != nil {
		t.Fatal(err)
	}
	if claim.Name != "results" || claim.Spec.Resources.Requests.Storage().String() != "5Gi" {
		t.Errorf("claim %q of %v, want results of 5Gi", claim.Name, claim.Spec.Resources.Requests.Storage())
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if job.Name != "itlsim-capacity" || *job.Spec.Completions != 2 || *job.Spec.BackoffLimit != 6 ||
		strings.Join(c.Args, " ") != "capacity --seeds=3 --shard-count=2 --out=/r" || c.Image != k.Image {
		t.Errorf("job %q of %d completions (backoff %d), args %q, image %q", job.Name, *job.Spec.Completions, *job.Spec.BackoffLimit, c.Args, c.Image)
	}
	if strings.Contains(docs[1], "status:") || strings.Contains(docs[1], "creationTimestamp") {
		t.Errorf("the Job keeps empty fields:\n%s", docs[1])
	}
}

func TestK8sJobRefuses(t *testing.T) {
	good := K8sJob{Image: "itlsim:latest", Claim: "itlsim-results", Storage: K8sDefaultStorage}
	for _, c := range []struct {
		edit  func(k *K8sJob)
		count int
		dir   string
		want  string
	}{
		{func(*K8sJob) {}, 0, "/r", "give --shard-count N"},
		{func(*K8sJob) {}, 2, "", "give --out DIR"},
		{func(*K8sJob) {}, 2, "rel", "give an absolute path inside the pod"},
		{func(*K8sJob) {}, 2, "/r\nx", "without control characters"},
		{func(k *K8sJob) { k.Name = "Bad_Name" }, 2, "/r", `--k8s-name "Bad_Name": expected a DNS-1123 label`},
		{func(k *K8sJob) { k.Claim = "-x" }, 2, "/r", `--k8s-claim "-x"`},
		{func(k *K8sJob) { k.Image = "Itlsim:1" }, 2, "/r", `--k8s-image "Itlsim:1"`},
		{func(k *K8sJob) { k.Storage = "-1Gi" }, 2, "/r", `--k8s-storage "-1Gi"`},
	} {
		k := good
		c.edit(&k)
		var b strings.Builder
		err := k.Write(&b, "sweep", nil, c.count, c.dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v, %d shards into %q: %v, want an error containing %q", k, c.count, c.dir, err, c.want)
		}
		if b.Len() != 0 {
			t.Errorf("%+v: wrote %d bytes before refusing", k, b.Len())
		}
	}
}
