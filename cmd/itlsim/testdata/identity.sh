#!/usr/bin/env bash
# identity.sh BINARY OUTDIR: run ~60 itlsim invocations covering every
# subcommand with BINARY, keeping each one's stdout, stderr, exit code and
# the files it wrote under OUTDIR. Run it with two builds and compare:
#
#   go build -o /tmp/itlsim-a ./cmd/itlsim   # before a change
#   go build -o /tmp/itlsim-b ./cmd/itlsim   # after
#   cmd/itlsim/testdata/identity.sh /tmp/itlsim-a /tmp/id-a
#   cmd/itlsim/testdata/identity.sh /tmp/itlsim-b /tmp/id-b
#   diff -r /tmp/id-a /tmp/id-b && echo identical
#
# Every command runs in OUTDIR/w with testdata linked as td, so paths in
# the outputs are the same for both builds. Set DATA to the shared data
# folder (default ../shared/data from the repository root) for cost check
# and validate against measured runs; without it those are left out.
set -u
bin=$(realpath "$1")
out=$2
here=$(cd "$(dirname "$0")" && pwd)
data=${DATA:-$here/../../../../shared/data}
rm -rf "$out"
mkdir -p "$out/w"
ln -s "$here" "$out/w/td"
cd "$out/w" || exit 1

n=0
# c NAME ARGS...: run one invocation.
c() {
	name=$1
	shift
	n=$((n + 1))
	"$bin" "$@" >"../$name.out" 2>"../$name.err" </dev/null
	echo $? >"../$name.rc"
}

cat >scen.yaml <<'EOF'
seed: 3
workload:
  rate: 6
  requests: 120
compare:
  - scheduler.policy=chunked,prefill-first
EOF
cat >slo.yaml <<'EOF'
workload:
  requests: 80
slo:
  - ttft:p99<=2s
  - stream-p99-itl:p99<=300ms
EOF

# run: every stdout form and every output file
c run-table run --requests 150
c run-md run --requests 150 --format markdown --policy chunked,prefill-first
c run-json run --requests 100 --format json
c run-files run --requests 120 --json r.json --streams r.csv --summary-csv s.csv --timelines t.jsonl --html r.html
c run-vary run --requests 80 --vary scheduler.max_num_batched_tokens=512,2048 --vary "workload.input_len=fixed:512;fixed:1024" --format markdown
c run-scen run scen.yaml --format markdown
c run-slo run slo.yaml --slo 'tpot:p50<=100ms'
c run-goodput run --requests 80 --goodput ttft:1000 --goodput tpot:80
c run-cluster run --requests 120 --replicas 3 --router round-robin,least-kv --router-staleness 100ms --format markdown
c run-delivery run --requests 60 --network mobile-4g --smoothing 33ms --frame-ms 16.7
c run-spec run --requests 60 --spec-decode ngram --spec-k 3 --spec-acceptance iid:0.7 --format markdown
c run-aliases run --num-prompts 50 --request-rate 4 --random-input-len 256 --random-output-len 64
c run-trace run --workload td/replay/small.jsonl --format markdown
c run-workload-classes run --workload td/workload/classes.csv --format markdown
c run-story run td/stories/kv-pressure.yaml --format markdown
c run-print-config run --print-config --policy chunked,orca
c run-bad-flag run --rate abc
c run-bad-set run --seed 5 --set seed=6
c run-bad-empty run --network ''
c run-bad-trace-flags run --workload td/replay/small.jsonl --rate 3
c run-bad-output run --json /nonexistent/dir/x.json
c run-overwrite run scen.yaml --json scen.yaml
c run-bad-format run --format xml
# the HTML pages, summary CSVs and stream rows of clusters, delivery and
# speculation (the replicas table, the server view, ITL per token)
c run-cluster-files run --requests 80 --replicas 3 --html cl.html --summary-csv cl.csv
c run-delivery-files run --requests 60 --network mobile-4g --smoothing 33ms --html del.html --summary-csv del.csv --streams del-streams.csv
c run-spec-files run --requests 60 --spec-decode ngram --spec-k 3 --spec-acceptance iid:0.7 --json spec.json --html spec.html
# step noise, hiccups and a scaled step time (the replica's jitter)
c run-jitter run --requests 150 --set cost.noise_cv=0.2 --set cost.hiccup_rate_per_s=0.5 --set cost.step_time_scale=1.1 --json jit.json
c run-story-delivery run td/stories/delivery.yaml --format markdown --json del-story.json
c run-story-disagg run td/stories/disagg-split.yaml --format markdown --json disagg-story.json
# html output through report
c report report r.json -o rep.html
c report-bad report nope.json

# sweep, capacity, merge, emit-k8s-job
c sweep sweep --rate 4,8 --requests 60 --format markdown
c sweep-json sweep --rate 4:8:4 --requests 50 --json sw.json --csv sw.csv
c sweep-html sweep --rate 4,8 --requests 50 --html sw.html
mkdir -p shards
c sweep-shard0 sweep --rate 4,8,12 --requests 40 --out shards --shard-count 2 --shard-index 0
c sweep-shard1 sweep --rate 4,8,12 --requests 40 --out shards --shard-count 2 --shard-index 1
c merge merge shards --json merged.json
c merge-table merge shards
c k8s sweep --rate 4,8 --out /results --shard-count 2 --emit-k8s-job
c sweep-bad sweep --rate 8:4:1
c capacity capacity --requests 60 --slo 'stream-p99-itl:p99<=200ms' --slo 'ttft:p99<=2s' --json cap.json --csv cap.csv
c capacity-html capacity --requests 50 --slo 'ttft:p99<=2s' --html cap.html
c capacity-bad capacity --slo 'nope<=3'
mkdir -p capshards
c cap-shard0 capacity --requests 40 --gpu h100-sxm-80gb,a100-80gb --slo 'ttft:p99<=2s' --out capshards --shard-count 2 --shard-index 0
c cap-shard1 capacity --requests 40 --gpu h100-sxm-80gb,a100-80gb --slo 'ttft:p99<=2s' --out capshards --shard-count 2 --shard-index 1
c cap-merge merge capshards
c cap-target capacity --requests 40 --target-rate 20 --target-field cluster.replicas --target-max 4 --slo 'ttft:p99<=2s'
c cap-target-bad capacity --target-rate 20 --target-field seed --slo 'ttft:p99<=2s'

# gate
c gate-self gate --baseline r.json --candidate r.json --format markdown
c gate-slo gate --candidate r.json --slo 'ttft:p99<=500ms' --slo 'itl-goodput>=99%@400ms'
c gate-json gate --baseline td/analyze/vllm_small.json --candidate td/replay/small.jsonl --format json
c gate-metric gate --baseline r.json --candidate r.json --metric stream_p99_itl_p99,itl_goodput,ttft_p99
c gate-bad gate --baseline r.json
c gate-bad2 gate --baseline r.json --candidate r.json --metric p99

# analyze, replay, validate, calibrate
c analyze analyze td/analyze/vllm_small.json td/analyze/aiperf_small.jsonl td/analyze/guidellm_v03.json
c analyze-md analyze td/analyze/vllm_small.json --format markdown --json an.json
c analyze-timelines analyze t.jsonl
c replay replay td/replay/small.jsonl --pauses 1 --pause-ms 300 --pause-at middle --smoothing none,33ms/500ms
c replay-json replay td/analyze/vllm_small.json --network none,mobile-4g --output json
c replay-bad replay td/replay/small.jsonl --pause-at nowhere
c validate validate td/analyze/vllm_small.json --json v.json --html v.html
c validate-bad validate td/analyze/vllm_small.json --tp 1,2
c calibrate-steps calibrate --steps td/calibrate/steps.csv -o prof.yaml
c calibrate-roofline calibrate --steps td/calibrate/steps.csv --fit-model roofline -o prof2.yaml
c calibrate-splitwise calibrate --steps td/calibrate/splitwise.csv --model llama-2-70b --gpu a100-80gb --tp 4 -o prof3.yaml
c run-profile run --requests 80 --profile prof.yaml
c calibrate-runs calibrate td/analyze/vllm_small.json --evals 20 -o prof4.yaml
c calibrate-bad calibrate

# workload, presets, cost, version
c wl-inspect workload inspect td/workload/bursty.yaml
c wl-inspect-json workload inspect --json td/workload/classes.csv
c wl-inspect-trace workload inspect td/replay/small.jsonl
c wl-generate workload generate td/workload/bursty.yaml -o gen.jsonl
c wl-generate-csv workload generate td/workload/bursty.yaml -o gen.csv
c wl-run-generated run --workload gen.jsonl
c presets presets
c cost-bad cost check --data /nonexistent
c record-bad record
c record-bad2 record http://127.0.0.1:1 --policy chunked,orca -o x.jsonl
c serve-bad serve --policy chunked,orca
c serve-bad2 serve --addr nohost:port:x --exit-after 1
if [ -d "$data/profiles" ]; then
	c cost-check cost check --data "$data"
fi

# every command's --help (flag wiring and generated name lists)
for cmd in "" run sweep capacity validate calibrate gate merge analyze replay report record serve \
	cost "cost check" workload "workload inspect" "workload generate" presets version; do
	# shellcheck disable=SC2086
	c "help-${cmd// /-}" $cmd --help
done
rm -f "$out/w/td"
echo "$n invocations into $out" >&2
