package workflow

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "kiln.dev/kiln/api/kubeflow/v1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/training"
)

// pytorchJob translates a PyTorchJob: Master (one) and Worker replicas
// are the nodes, nprocPerNode their processes (default auto), and the
// pytorch container the trainer.
func pytorchJob(doc *Document) ([]Document, error) {
	in := &kubeflowv1.PyTorchJob{}
	problems, ok := decodeStrict(doc, in)
	if !ok {
		return nil, joinErrs(problems)
	}
	s := &in.Spec
	o := newOpJob(doc, problems, &in.Metadata, kubeflowv1.KindPyTorchJob, "pytorchReplicaSpecs", kubeflowv1.ContainerPyTorch,
		s.PyTorchReplicaSpecs, kubeflowv1.ReplicaMaster, kubeflowv1.ReplicaWorker)
	lead, leader := kubeflowv1.ReplicaWorker, ""
	if o.has(kubeflowv1.ReplicaMaster) {
		lead, leader = kubeflowv1.ReplicaMaster, string(kubeflowv1.ReplicaMaster)
		o.need(kubeflowv1.ReplicaMaster, true)
	} else {
		o.need(kubeflowv1.ReplicaWorker, false)
	}
	o.nodesField, o.procsField = o.field(kubeflowv1.ReplicaWorker)+".replicas", "spec.nprocPerNode"
	tr := o.trainer(lead)
	o.same(kubeflowv1.ReplicaMaster, kubeflowv1.ReplicaWorker)
	o.nodes(tr, kubeflowv1.ReplicaMaster, kubeflowv1.ReplicaWorker)
	procs := apiv1.Quantity("auto") // the operator's default
	if s.NprocPerNode != nil {
		procs = apiv1.Quantity(*s.NprocPerNode)
	}
	tr.NumProcPerNode = &procs
	o.job.Spec.Trainer = tr
	o.policy = apiv1.MLPolicy{Torch: &apiv1.TorchPolicy{}, TrainingOperator: &apiv1.OperatorEnv{Leader: leader}}
	if s.ElasticPolicy != nil {
		o.policy.Torch.ElasticPolicy = o.elastic(s.ElasticPolicy, tr)
	}
	o.restartPolicies(kubeflowv1.RestartOnFailure)
	o.runPolicy(&s.RunPolicy, o.total())
	return o.documents()
}

// tfJob translates a TFJob: Chief or Master (one) and Worker replicas
// are the nodes, PS replicas the parameter servers, the tensorflow
// container the trainer; every replica gets the operator's TF_CONFIG.
func tfJob(doc *Document) ([]Document, error) {
	in := &kubeflowv1.TFJob{}
	problems, ok := decodeStrict(doc, in)
	if !ok {
		return nil, joinErrs(problems)
	}
	s := &in.Spec
	o := newOpJob(doc, problems, &in.Metadata, kubeflowv1.KindTFJob, "tfReplicaSpecs", kubeflowv1.ContainerTensorFlow, s.TFReplicaSpecs,
		kubeflowv1.ReplicaChief, kubeflowv1.ReplicaMaster, kubeflowv1.ReplicaWorker, kubeflowv1.ReplicaPS, kubeflowv1.ReplicaEvaluator)
	lead := tfLeader(o)
	o.nodesField, o.procsField, o.psField = o.field(kubeflowv1.ReplicaWorker)+".replicas", "spec.tfReplicaSpecs", o.field(kubeflowv1.ReplicaPS)+".replicas"
	first := lead
	if lead == "" {
		first = kubeflowv1.ReplicaWorker
	}
	tr := o.trainer(first)
	for _, t := range []kubeflowv1.ReplicaType{kubeflowv1.ReplicaWorker, kubeflowv1.ReplicaPS} {
		if t != first {
			o.same(first, t)
		}
	}
	o.nodes(tr, kubeflowv1.ReplicaChief, kubeflowv1.ReplicaMaster, kubeflowv1.ReplicaWorker)
	o.job.Spec.Trainer = tr
	ps := o.count(kubeflowv1.ReplicaPS)
	o.policy = apiv1.MLPolicy{TensorFlow: &apiv1.TensorFlowPolicy{NumPS: &ps}, TrainingOperator: &apiv1.OperatorEnv{Leader: string(lead)}}
	if p := s.SuccessPolicy; p != nil && *p != "" {
		o.c.fail(apiv1.CodeUnsupported, "spec.successPolicy", fmt.Sprintf("successPolicy %s is not run: the job ends when its chief (or worker 0) does", *p), "drop successPolicy")
	}
	if s.EnableDynamicWorker {
		o.c.fail(apiv1.CodeUnsupported, "spec.enableDynamicWorker", "kiln writes the whole cluster into TF_CONFIG; workers do not join later", "drop enableDynamicWorker")
	}
	o.restartPolicies(kubeflowv1.RestartNever)
	o.runPolicy(&s.RunPolicy, o.total())
	return o.documents()
}

// tfLeader is the TFJob's chief group (Chief or Master, one replica), ""
// when it has none; Evaluator replicas are refused.
func tfLeader(o *opJob) kubeflowv1.ReplicaType {
	if o.has(kubeflowv1.ReplicaEvaluator) {
		o.c.fail(apiv1.CodeUnsupported, o.field(kubeflowv1.ReplicaEvaluator), "Evaluator replicas are not run: kiln's TF_CONFIG has chief, worker and ps tasks",
			"evaluate in a workflow task after the job")
	}
	chief, master := o.has(kubeflowv1.ReplicaChief), o.has(kubeflowv1.ReplicaMaster)
	switch {
	case chief && master:
		o.c.fail(apiv1.CodeReplicaSpecs, o.field(kubeflowv1.ReplicaMaster), "a TFJob has a Chief or a Master, not both", "")
		return kubeflowv1.ReplicaChief
	case chief:
		o.need(kubeflowv1.ReplicaChief, true)
		return kubeflowv1.ReplicaChief
	case master:
		o.need(kubeflowv1.ReplicaMaster, true)
		return kubeflowv1.ReplicaMaster
	}
	o.need(kubeflowv1.ReplicaWorker, false)
	return ""
}

// mpiJob translates an MPIJob: the Worker replicas are the nodes and
// slotsPerWorker their ranks; the launcher's command runs mpirun, which
// kiln runs in worker 0's pod, so the workers' image and resources size
// the nodes.
func mpiJob(doc *Document) ([]Document, error) {
	in := &kubeflowv1.MPIJob{}
	problems, ok := decodeStrict(doc, in)
	if !ok {
		return nil, joinErrs(problems)
	}
	s := &in.Spec
	o := newOpJob(doc, problems, &in.Metadata, kubeflowv1.KindMPIJob, "mpiReplicaSpecs", "", s.MPIReplicaSpecs,
		kubeflowv1.ReplicaLauncher, kubeflowv1.ReplicaWorker)
	o.nodesField, o.procsField = o.field(kubeflowv1.ReplicaWorker)+".replicas", "spec.slotsPerWorker"
	if o.need(kubeflowv1.ReplicaLauncher, true) && o.need(kubeflowv1.ReplicaWorker, false) {
		o.job.Spec.Trainer = o.mpiTrainer(s.MainContainer)
		o.nodes(o.job.Spec.Trainer, kubeflowv1.ReplicaWorker)
	}
	if s.SlotsPerWorker != nil && o.job.Spec.Trainer != nil {
		slots := apiv1.Quantity(strconv.Itoa(int(*s.SlotsPerWorker)))
		o.job.Spec.Trainer.NumProcPerNode = &slots
	}
	o.policy = apiv1.MLPolicy{MPI: &apiv1.MPIPolicy{}, TrainingOperator: &apiv1.OperatorEnv{}}
	o.cleanPodPolicy("spec.cleanPodPolicy", s.CleanPodPolicy)
	o.restartPolicies(kubeflowv1.RestartNever)
	o.runPolicy(&s.RunPolicy, o.total())
	return o.documents()
}

// mpiTrainer is the launcher's command, args and env with the workers'
// image, resources and pod: kiln's nodes are the workers, and the
// launcher runs inside the first of them.
func (o *opJob) mpiTrainer(mainContainer string) *apiv1.Trainer {
	launch, li := o.readContainer(kubeflowv1.ReplicaLauncher)
	launchField, launchPod := o.containerField, o.podField
	if li < 0 {
		return launch
	}
	o.mpiFiles(launchField+".command", launch.Command)
	o.mpiFiles(launchField+".args", launch.Args)
	o.container = mainContainer
	worker := o.trainer(kubeflowv1.ReplicaWorker)
	if o.containerField == launchField {
		return launch // no worker container: reported
	}
	wf := o.containerField
	if len(worker.Command)+len(worker.Args) > 0 {
		o.c.ignore(wf+".command", "kiln's launcher starts the ranks itself (mpirun on the hostfile); the workers' own command (sshd) is not run")
	}
	if len(worker.Env) > 0 {
		o.c.ignore(wf+".env", "the ranks get the launcher's env, which mpirun passes on")
	}
	if launch.Image != "" && launch.Image != worker.Image {
		o.c.ignore(launchField+".image", "the launcher's mpirun runs in worker 0's pod, in the workers' image", backendKube)
	}
	if launch.ResourcesPerNode != nil {
		o.c.ignore(launchField+".resources", "the launcher's mpirun runs in worker 0's pod, within the workers' resources")
	}
	lt := &o.replicas[kubeflowv1.ReplicaLauncher].spec.Template
	if !sameJSON(podRest(&lt.Spec, li), &corev1.PodSpec{Containers: []corev1.Container{{Name: apiv1.MainContainer}}}) || lt.Metadata != nil {
		o.c.ignore(launchPod, "the launcher's mpirun runs in worker 0's pod, shaped by the workers' template", backendKube)
	}
	worker.Command, worker.Args, worker.Env = launch.Command, launch.Args, launch.Env
	o.containerField = launchField
	return worker
}

// mpiFiles refuses arguments, written at field, that name a file the MPI
// operator puts in /etc/mpi besides the hostfile (elastic Horovod's
// discover_hosts.sh): kiln writes the hostfile alone. One that names the
// hostfile is noted: locally it names the attempt's (training.mpi).
func (o *opJob) mpiFiles(field string, args []string) {
	for i, a := range args {
		if strings.Contains(a, training.MPIHostfile) {
			o.c.ignore(fmt.Sprintf("%s[%d]", field, i), training.MPIHostfile+" is not on this machine: kiln names the attempt's hostfile in its place, "+
				"the one OMPI_MCA_orte_default_hostfile names", backendLocal)
		}
		if at := strings.Index(a, "/etc/mpi/"); at >= 0 && !strings.Contains(a, training.MPIHostfile) {
			o.c.fail(apiv1.CodeUnsupported, fmt.Sprintf("%s[%d]", field, i),
				fmt.Sprintf("%s is a file the MPI operator writes and kiln does not: kiln writes /etc/mpi/hostfile alone (a job of fixed size)", strings.Fields(a[at:])[0]),
				"run the job at a fixed size: drop the host discovery script and mpirun (or horovodrun) the hosts of /etc/mpi/hostfile")
		}
	}
}

// xgboostJob translates an XGBoostJob: Master (one) and Worker replicas
// are the nodes, the xgboost container the trainer.
func xgboostJob(doc *Document) ([]Document, error) {
	in := &kubeflowv1.XGBoostJob{}
	problems, ok := decodeStrict(doc, in)
	if !ok {
		return nil, joinErrs(problems)
	}
	s := &in.Spec
	o := newOpJob(doc, problems, &in.Metadata, kubeflowv1.KindXGBoostJob, "xgbReplicaSpecs", kubeflowv1.ContainerXGBoost, s.XGBReplicaSpecs,
		kubeflowv1.ReplicaMaster, kubeflowv1.ReplicaWorker)
	o.nodesField, o.procsField = o.field(kubeflowv1.ReplicaWorker)+".replicas", "spec.xgbReplicaSpecs"
	o.need(kubeflowv1.ReplicaMaster, true)
	tr := o.trainer(kubeflowv1.ReplicaMaster)
	o.same(kubeflowv1.ReplicaMaster, kubeflowv1.ReplicaWorker)
	o.nodes(tr, kubeflowv1.ReplicaMaster, kubeflowv1.ReplicaWorker)
	o.job.Spec.Trainer = tr
	o.policy = apiv1.MLPolicy{XGBoost: &apiv1.XGBoostPolicy{}, TrainingOperator: &apiv1.OperatorEnv{Leader: string(kubeflowv1.ReplicaMaster)}}
	o.restartPolicies(kubeflowv1.RestartNever)
	o.runPolicy(&s.RunPolicy, o.total())
	return o.documents()
}

// jaxJob translates a JAXJob: the Worker replicas are the nodes, the jax
// container the trainer; worker 0 coordinates.
func jaxJob(doc *Document) ([]Document, error) {
	in := &kubeflowv1.JAXJob{}
	problems, ok := decodeStrict(doc, in)
	if !ok {
		return nil, joinErrs(problems)
	}
	s := &in.Spec
	o := newOpJob(doc, problems, &in.Metadata, kubeflowv1.KindJAXJob, "jaxReplicaSpecs", kubeflowv1.ContainerJAX, s.JAXReplicaSpecs, kubeflowv1.ReplicaWorker)
	o.nodesField, o.procsField = o.field(kubeflowv1.ReplicaWorker)+".replicas", "spec.jaxReplicaSpecs"
	var tr *apiv1.Trainer
	if o.need(kubeflowv1.ReplicaWorker, false) {
		tr = o.trainer(kubeflowv1.ReplicaWorker)
		o.nodes(tr, kubeflowv1.ReplicaWorker)
	}
	o.job.Spec.Trainer = tr
	o.policy = apiv1.MLPolicy{JAX: &apiv1.JAXPolicy{}, TrainingOperator: &apiv1.OperatorEnv{}}
	o.restartPolicies(kubeflowv1.RestartNever)
	o.runPolicy(&s.RunPolicy, o.total())
	return o.documents()
}

// paddleJob translates a PaddleJob in collective mode: the Worker
// replicas are the nodes, the paddle container the trainer; worker 0 is
// the rendezvous (PADDLE_MASTER). A Master (parameter-server mode) and an
// elasticPolicy are refused.
func paddleJob(doc *Document) ([]Document, error) {
	in := &kubeflowv1.PaddleJob{}
	problems, ok := decodeStrict(doc, in)
	if !ok {
		return nil, joinErrs(problems)
	}
	s := &in.Spec
	o := newOpJob(doc, problems, &in.Metadata, kubeflowv1.KindPaddleJob, "paddleReplicaSpecs", kubeflowv1.ContainerPaddle, s.PaddleReplicaSpecs,
		kubeflowv1.ReplicaMaster, kubeflowv1.ReplicaWorker)
	o.nodesField, o.procsField = o.field(kubeflowv1.ReplicaWorker)+".replicas", "spec.paddleReplicaSpecs"
	if o.has(kubeflowv1.ReplicaMaster) {
		o.c.fail(apiv1.CodeUnsupported, o.field(kubeflowv1.ReplicaMaster), "a Master runs the PaddleJob in parameter-server mode, which kiln does not run: it runs collective mode, Workers alone",
			"drop the Master and run the Workers in collective mode")
	}
	if s.ElasticPolicy != nil {
		o.c.fail(apiv1.CodeUnsupported, "spec.elasticPolicy", "kiln runs a PaddleJob at its written size; it does not scale one", "drop elasticPolicy")
	}
	var tr *apiv1.Trainer
	if o.need(kubeflowv1.ReplicaWorker, false) {
		tr = o.trainer(kubeflowv1.ReplicaWorker)
		o.nodes(tr, kubeflowv1.ReplicaWorker)
	}
	o.job.Spec.Trainer = tr
	o.policy = apiv1.MLPolicy{Paddle: &apiv1.PaddlePolicy{}, TrainingOperator: &apiv1.OperatorEnv{}}
	o.restartPolicies(kubeflowv1.RestartOnFailure)
	o.runPolicy(&s.RunPolicy, o.total())
	return o.documents()
}
