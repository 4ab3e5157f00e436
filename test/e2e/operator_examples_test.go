package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// operatorExample is one example of training-operator v1.9.0's examples/
// folder, written again by hand in its shape (testdata/trainingoperator/
// ex-*.yaml), and what kiln does with it on the local backend: it runs
// (its program swapped for a stand-in the test's directory holds, as the
// image would), and then its logs hold each line as often as said; or
// kiln refuses it before it runs, with code at field as the job writes
// it, the error holding detail.
type operatorExample struct {
	upstream string // the example's path in training-operator v1.9.0
	file     string
	lines    map[string]int
	code     apiv1.Code
	field    string
	detail   string
}

// operatorExamples is every file of training-operator v1.9.0's examples/,
// each with its outcome; docs/kubeflow.md has the same table.
var operatorExamples = []operatorExample{
	{
		upstream: "jax/cpu-demo/demo.yaml", file: "ex-jax-cpu-demo.yaml",
		lines: map[string]int{"standin argv=train.py COORDINATOR_ADDRESS=127.0.0.1 NUM_PROCESSES=2 PROCESS_ID=": 2},
	},
	{
		upstream: "jax/jax-dist-spmd-mnist/jaxjob_dist_spmd_mnist_gloo.yaml", file: "ex-jax-dist-spmd-mnist-gloo.yaml",
		code: apiv1.CodeRequired, field: "spec.jaxReplicaSpecs.Worker.template.spec.containers[0].command", detail: "its image's entrypoint runs on the kubernetes backend only",
	},
	{
		upstream: "mpi/tensorflow-mnist.yaml", file: "ex-mpi-tensorflow-mnist.yaml",
		lines: map[string]int{"launcher | rank 0/2: allreduce = 3 hostfile=hostfile": 1, "launcher | rank 1/2: allreduce = 3 hostfile=hostfile": 1},
	},
	{
		upstream: "mpi/tensorflow-mnist-elastic.yaml", file: "ex-mpi-tensorflow-mnist-elastic.yaml",
		code: apiv1.CodeUnsupported, field: "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].args[7]", detail: "/etc/mpi/discover_hosts.sh is a file the MPI operator writes and kiln does not",
	},
	{
		upstream: "paddlepaddle/simple-cpu.yaml", file: "ex-paddle-simple-cpu.yaml",
		lines: map[string]int{"paddle launch run_check: PADDLE_JOB_ID=": 2, "PADDLE_NNODES=2 PADDLE_MASTER=127.0.0.1:": 2},
	},
	{
		upstream: "paddlepaddle/simple-gpu.yaml", file: "ex-paddle-simple-gpu.yaml",
		code: apiv1.CodeTooLarge, field: "spec.paddleReplicaSpecs.Worker.template.spec.containers[0].resources", detail: "gpu 0",
	},
	{
		upstream: "pytorch/cpu-demo/demo.yaml", file: "ex-pytorch-cpu-demo.yaml",
		lines: map[string]int{"all_reduce = 10 nnodes=2 nproc=2": 4, "master-0 | [default1]:rank 1/4": 1, "worker-0 | [default1]:rank 3/4": 1},
	},
	{
		upstream: "pytorch/deepspeed-demo/pytorch_deepspeed_demo.yaml", file: "ex-pytorch-deepspeed-demo.yaml",
		code: apiv1.CodeTooLarge, field: "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].resources", detail: "gpu 0",
	},
	{
		upstream: "pytorch/elastic/echo/echo.yaml", file: "ex-pytorch-elastic-echo.yaml",
		lines: map[string]int{"standin argv= RANK=": 2, "WORLD_SIZE=2 LOCAL_RANK=0": 2, "PET_NNODES=1:2": 2},
	},
	{
		upstream: "pytorch/elastic/etcd.yaml", file: "ex-pytorch-elastic-etcd.yaml",
		code: apiv1.CodeKind, field: "apiVersion", detail: `apiVersion "v1" is not one kiln reads`,
	},
	{
		upstream: "pytorch/elastic/imagenet/imagenet.yaml", file: "ex-pytorch-elastic-imagenet.yaml",
		lines: map[string]int{"standin argv=--arch=resnet18 --epochs=1 RANK=": 3, "WORLD_SIZE=3": 3},
	},
	{
		upstream: "pytorch/mnist/v1/pytorch_job_mnist_gloo.yaml", file: "ex-pytorch-mnist-gloo.yaml",
		code: apiv1.CodeRequired, field: "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "pytorch/mnist/v1/pytorch_job_mnist_mpi.yaml", file: "ex-pytorch-mnist-mpi.yaml",
		code: apiv1.CodeRequired, field: "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "pytorch/mnist/v1/pytorch_job_mnist_nccl.yaml", file: "ex-pytorch-mnist-nccl.yaml",
		code: apiv1.CodeRequired, field: "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "pytorch/simple.yaml", file: "ex-pytorch-simple.yaml",
		lines: map[string]int{"master-0 | rank 0/2: all_reduce = 3 nnodes=2": 1, "worker-0 | rank 1/2: all_reduce = 3 nnodes=2": 1},
	},
	{
		upstream: "pytorch/smoke-dist/pytorch_job_sendrecv.yaml", file: "ex-pytorch-sendrecv.yaml",
		code: apiv1.CodeRequired, field: "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "tensorflow/dist-mnist/tf_job_mnist.yaml", file: "ex-tf-dist-mnist.yaml",
		code: apiv1.CodeRequired, field: "spec.tfReplicaSpecs.Chief.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "tensorflow/distribution_strategy/multi_worker_tfjob.yaml", file: "ex-tf-multi-worker-strategy.yaml",
		code: apiv1.CodeRequired, field: "spec.tfReplicaSpecs.Worker.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "tensorflow/distribution_strategy/pvc.yaml", file: "ex-tf-strategy-pvc.yaml",
		code: apiv1.CodeKind, field: "apiVersion", detail: "PersistentVolumeClaim/strategy-volume",
	},
	{
		upstream: "tensorflow/mnist_with_summaries/tf_job_mnist.yaml", file: "ex-tf-mnist-with-summaries.yaml",
		lines: map[string]int{"worker-0 | standin argv=--log_dir=/train/logs --learning_rate=0.01": 1},
	},
	{
		upstream: "tensorflow/mnist_with_summaries/tfevent-volume/tfevent-pv.yaml", file: "ex-tf-tfevent-pv.yaml",
		code: apiv1.CodeKind, field: "apiVersion", detail: "PersistentVolume/tfevent-volume",
	},
	{
		upstream: "tensorflow/mnist_with_summaries/tfevent-volume/tfevent-pvc.yaml", file: "ex-tf-tfevent-pvc.yaml",
		code: apiv1.CodeKind, field: "apiVersion", detail: "PersistentVolumeClaim/tfevent-volume",
	},
	{
		upstream: "tensorflow/simple.yaml", file: "ex-tf-simple.yaml",
		lines: map[string]int{`"task":{"type":"worker","index":0},"environment":"cloud"}`: 1, `"task":{"type":"worker","index":1},"environment":"cloud"}`: 1},
	},
	{
		upstream: "xgboost/lightgbm-dist/xgboostjob_v1_lightgbm_dist_training.yaml", file: "ex-xgb-lightgbm-dist.yaml",
		code: apiv1.CodeRequired, field: "spec.xgbReplicaSpecs.Master.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "xgboost/smoke-dist/xgboostjob_v1_rabit_test.yaml", file: "ex-xgb-rabit-test.yaml",
		code: apiv1.CodeRequired, field: "spec.xgbReplicaSpecs.Master.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "xgboost/smoke-dist/xgboostjob_v1alpha1_rabit_test.yaml", file: "ex-xgb-rabit-test-v1alpha1.yaml",
		code: apiv1.CodeRequired, field: "spec.xgbReplicaSpecs.Master.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "xgboost/xgboost-dist/xgboostjob_v1_iris_predict.yaml", file: "ex-xgb-iris-predict.yaml",
		code: apiv1.CodeRequired, field: "spec.xgbReplicaSpecs.Master.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "xgboost/xgboost-dist/xgboostjob_v1_iris_predict_local.yaml", file: "ex-xgb-iris-predict-local.yaml",
		code: apiv1.CodeRequired, field: "spec.xgbReplicaSpecs.Master.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "xgboost/xgboost-dist/xgboostjob_v1_iris_train.yaml", file: "ex-xgb-iris-train.yaml",
		code: apiv1.CodeRequired, field: "spec.xgbReplicaSpecs.Worker.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "xgboost/xgboost-dist/xgboostjob_v1_iris_train_local.yaml", file: "ex-xgb-iris-train-local.yaml",
		code: apiv1.CodeRequired, field: "spec.xgbReplicaSpecs.Worker.template.spec.containers[0].command", detail: "entrypoint",
	},
	{
		upstream: "xgboost/xgboostjob.yaml", file: "ex-xgboostjob.yaml",
		code: apiv1.CodeRequired, field: "spec.xgbReplicaSpecs.Worker.template.spec.containers[0].command", detail: "entrypoint",
	},
}

// TestOperatorExamplesRunOrAreRefused runs every example of the table on
// the local backend: each runs, or is refused before it runs with the
// code and field the table says. One at a time: each uses the machine's
// CPUs. docs/kubeflow.md must list each.
func TestOperatorExamplesRunOrAreRefused(t *testing.T) {
	dir := operatorDir(t)
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "kubeflow.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "ex-*.yaml"))
	if err != nil || len(files) != len(operatorExamples) || len(operatorExamples) != 31 {
		t.Fatalf("%d ex-*.yaml files (%v) and %d examples in the table, want the 31 files of v1.9.0's examples/", len(files), err, len(operatorExamples))
	}
	env := frameworkEnv(t)
	for _, ex := range operatorExamples {
		t.Run(ex.file, func(t *testing.T) {
			if !strings.Contains(string(doc), "`"+ex.upstream+"`") {
				t.Errorf("docs/kubeflow.md's table does not list %s", ex.upstream)
			}
			if ex.code == "" {
				logs := runOperatorJob(t, dir, ex.file)
				for want, n := range ex.lines {
					if got := strings.Count(logs, want); got != n {
						t.Errorf("%d log lines hold %q, want %d\n%s", got, want, n, logs)
					}
				}
				return
			}
			home := newHome(t)
			r := kilnWithEnv(t, env, home, "run", "-q", filepath.Join(dir, ex.file))
			if r.code != 1 || !strings.Contains(r.stderr, string(ex.code)+" ") || !strings.Contains(r.stderr, ": "+ex.field+": ") || !strings.Contains(r.stderr, ex.detail) {
				t.Errorf("kiln run: exit %d\n%s%s\nwant 1 and %s at %s (%q)", r.code, r.stdout, r.stderr, ex.code, ex.field, ex.detail)
			}
			if got := runs(t, home); len(got) != 0 {
				t.Errorf("a refused job left %d runs", len(got))
			}
		})
	}
}

// TestOperatorReplicaTypesRestartByTheirOwnPolicy runs an XGBoostJob whose
// Master (restartPolicy Never) and Workers (ExitCode) have their own args:
// a Worker's exit 130 restarts the gang, its exit 1 ends the job, as the
// operator's ExitCode rule has it.
func TestOperatorReplicaTypesRestartByTheirOwnPolicy(t *testing.T) {
	dir := operatorDir(t)
	logs := runOperatorJob(t, dir, "xgb-replicas.yaml")
	for want, n := range map[string]int{
		"master-0 | attempt 2 rank 0: args --job_type=Train --model_path=/tmp/xgboost-model --wait 3": 1,
		"attempt 2 rank 1: args --job_type=Train --fail 130":                                          1,
		"attempt 2 rank 2: args --job_type=Train --fail 130":                                          1,
	} {
		if got := strings.Count(logs, want); got != n {
			t.Errorf("%d log lines hold %q, want %d\n%s", got, want, n, logs)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "xgb-replicas.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	permanent := writeFile(t, dir, "xgb-permanent.yaml", strings.Replace(string(b), `--fail, "130"`, `--fail, "1"`, 1))
	home := newHome(t)
	r := kilnWithEnv(t, frameworkEnv(t), home, "run", "-q", permanent)
	want := "(not restarted: restartPolicy is ExitCode and exit code 1 (1-127) is permanent for replica type Worker)"
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, string(apiv1.CodeNotRestarted)) || !strings.Contains(r.stdout+r.stderr, want) {
		t.Errorf("a Worker's exit 1: exit %d\n%s%s\nwant %s and %q", r.code, r.stdout, r.stderr, apiv1.CodeNotRestarted, want)
	}
	run := describe(t, home, runs(t, home)[0].ID)
	if n := run.Status.Nodes; len(n) != 1 || len(n[0].Attempts) != 1 {
		t.Errorf("the job restarted after a permanent exit: %+v", n)
	}
}

// TestOperatorMPIHostfileAtEtcMPI runs an MPIJob whose mpirun names the
// hostfile where the MPI operator mounts it.
func TestOperatorMPIHostfileAtEtcMPI(t *testing.T) {
	dir := operatorDir(t)
	logs := runOperatorJob(t, dir, "mpijob-hostfile.yaml")
	if n := strings.Count(logs, "allreduce = 3 hostfile=hostfile"); n != 2 {
		t.Errorf("%d ranks reported the allreduce, want 2\n%s", n, logs)
	}
	r := kiln(t, t.TempDir(), "validate", filepath.Join(dir, "mpijob-hostfile.yaml"))
	if want := "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command[2] is ignored on the local backend: /etc/mpi/hostfile is not on this machine"; !strings.Contains(r.stdout, want) {
		t.Errorf("kiln validate does not say where /etc/mpi/hostfile goes:\n%s%s", r.stdout, r.stderr)
	}
}

// TestOperatorEntrypointExamplesPassForKubernetes checks that every
// example the local backend refuses for running its image's entrypoint
// passes kiln validate for the kubernetes backend, which runs it.
func TestOperatorEntrypointExamplesPassForKubernetes(t *testing.T) {
	t.Parallel()
	dir := operatorDir(t)
	home := t.TempDir()
	var files []string
	for _, ex := range operatorExamples {
		if ex.code == apiv1.CodeRequired {
			files = append(files, filepath.Join(dir, ex.file))
		}
	}
	r := kiln(t, home, append([]string{"validate", "--backend", "kubernetes"}, files...)...)
	if r.code != 0 || strings.Count(r.stdout, "ok: ") != len(files) {
		t.Errorf("kiln validate --backend kubernetes of %d entrypoint examples: exit %d\n%s%s", len(files), r.code, r.stdout, r.stderr)
	}
	if strings.Count(r.stdout, "template.apiVersion is ignored") != 2 {
		t.Errorf("the v1alpha1 rabit test's templates' apiVersion is not noted as ignored:\n%s", r.stdout)
	}
}
