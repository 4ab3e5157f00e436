package v1alpha1

//go:generate go run ../../hack/errdocs ../../docs/errors.md

// Code is a stable error code, "KLN-" and four digits. Codes are grouped:
// 1xxx spec validation, 2xxx admission and resources, 3xxx execution,
// 4xxx API and CLI use, 5xxx store, 6xxx backend, 7xxx federation. A code never changes
// meaning once released.
type Code string

// The codes kiln returns. CodeInfos lists them with their meaning.
const (
	CodeParse           Code = "KLN-1001"
	CodeUnknownField    Code = "KLN-1002"
	CodeKind            Code = "KLN-1003"
	CodeRequired        Code = "KLN-1004"
	CodeInvalidName     Code = "KLN-1005"
	CodeDuplicate       Code = "KLN-1006"
	CodeUnknownDep      Code = "KLN-1007"
	CodeCycle           Code = "KLN-1008"
	CodeDuration        Code = "KLN-1009"
	CodeQuantity        Code = "KLN-1010"
	CodeTemplate        Code = "KLN-1011"
	CodeInvalidValue    Code = "KLN-1012"
	CodeRunnable        Code = "KLN-1013"
	CodeUnknownParam    Code = "KLN-1014"
	CodeMissingParam    Code = "KLN-1015"
	CodeReservedEnv     Code = "KLN-1016"
	CodeUnknownRuntime  Code = "KLN-1017"
	CodeNoMLPolicy      Code = "KLN-1018"
	CodeImageRequired   Code = "KLN-1019"
	CodeRead            Code = "KLN-1020"
	CodeBareValue       Code = "KLN-1021"
	CodeDuplicateKey    Code = "KLN-1022"
	CodeOutOfRange      Code = "KLN-1023"
	CodeExpression      Code = "KLN-1024"
	CodeSubworkflow     Code = "KLN-1025"
	CodeUnsupported     Code = "KLN-1026"
	CodeRuntimeRef      Code = "KLN-1035"
	CodeRuntimeKind     Code = "KLN-1036"
	CodeReplicaSpecs    Code = "KLN-1045"
	CodeMainContainer   Code = "KLN-1046"
	CodeReplicasDiffer  Code = "KLN-1047"
	CodeFederationRoles Code = "KLN-1060"
	CodeTaskRoles       Code = "KLN-1061"
	CodeUnknownRole     Code = "KLN-1062"
	CodeOverrideKey     Code = "KLN-1063"
	CodeNotFederable    Code = "KLN-1064"
	CodeShareName       Code = "KLN-1065"
	CodeCrossParty      Code = "KLN-1066"
	CodeNoShare         Code = "KLN-1067"
	CodeCron            Code = "KLN-1070"
	CodeTimeZone        Code = "KLN-1071"
	CodeScheduleTarget  Code = "KLN-1072"
	CodeScheduleRef     Code = "KLN-1073"
	CodeTooLarge        Code = "KLN-2001"
	CodeScheduleTimeout Code = "KLN-2002"
	CodeCommandNotFound Code = "KLN-3001"
	CodeExit            Code = "KLN-3002"
	CodeAttemptTimeout  Code = "KLN-3003"
	CodeAttemptLost     Code = "KLN-3004"
	CodeRunTimeout      Code = "KLN-3005"
	CodeOutput          Code = "KLN-3006"
	CodeCancelled       Code = "KLN-3007"
	CodeUpstreamFailed  Code = "KLN-3008"
	CodeStart           Code = "KLN-3009"
	CodeSuspended       Code = "KLN-3010"
	CodeSecret          Code = "KLN-3011"
	CodeNotAList        Code = "KLN-3012"
	CodeFragment        Code = "KLN-3013"
	CodeCondition       Code = "KLN-3014"
	CodeRejected        Code = "KLN-3015"
	CodeGateTimeout     Code = "KLN-3016"
	CodeTooFewSucceeded Code = "KLN-3017"
	CodeTriggerRule     Code = "KLN-3018"
	CodeChildFailed     Code = "KLN-3019"
	CodeStopped         Code = "KLN-3020"
	CodeTickMissed      Code = "KLN-3090"
	CodeTickSkipped     Code = "KLN-3091"
	CodeTickFailed      Code = "KLN-3092"
	CodeNoSchedule      Code = "KLN-3094"
	CodeRunNotFound     Code = "KLN-4001"
	CodeUsage           Code = "KLN-4002"
	CodeUnauthenticated Code = "KLN-4003"
	CodeForbidden       Code = "KLN-4004"
	CodeBodyTooLarge    Code = "KLN-4005"
	CodeBadRequest      Code = "KLN-4006"
	CodeInternal        Code = "KLN-4009"
	CodeRunPhase        Code = "KLN-4010"
	CodeSecretNotFound  Code = "KLN-4011"
	CodeRateLimited     Code = "KLN-4012"
	CodeBusy            Code = "KLN-4013"
	CodeNotWaiting      Code = "KLN-4014"
	CodeNoTemplate      Code = "KLN-4015"
	CodeNoCacheEntry    Code = "KLN-4025"
	CodeNoLogs          Code = "KLN-4026"
	CodeRerunGone       Code = "KLN-4027"
	CodeRunInUse        Code = "KLN-4030"
	CodeNotTrainJob     Code = "KLN-4032"
	CodeNoRuntime       Code = "KLN-4028"
	CodeBuiltinRuntime  Code = "KLN-4029"
	CodeNoQuota         Code = "KLN-4040"
	// The command line as a daily tool (issue 16).
	CodeUnknownPhase   Code = "KLN-4050"
	CodeBadTime        Code = "KLN-4051"
	CodeNoContext      Code = "KLN-4052"
	CodeOutputFormat   Code = "KLN-4053"
	CodeNoSchema       Code = "KLN-4054"
	CodeConfigExposed  Code = "KLN-4056"
	CodeRerunNode      Code = "KLN-4020"
	CodeRerunUpstream  Code = "KLN-4021"
	CodeStoreOpen      Code = "KLN-5001"
	CodeStoreCorrupt   Code = "KLN-5002"
	CodeStoreVersion   Code = "KLN-5003"
	CodeStoreFull      Code = "KLN-5004"
	CodeSecretKey      Code = "KLN-5005"
	CodeStoreKind      Code = "KLN-5050"
	CodeLeadershipLost Code = "KLN-5051"
	CodeStoreBusy      Code = "KLN-5052"
	CodeHomeStore      Code = "KLN-5053"
	CodeStorePassword  Code = "KLN-5054"
	// The command line talking to a server (issue 16).
	CodeServerUnreachable Code = "KLN-5060"
	// The PostgreSQL store (issue 15).
	CodePGAddress       Code = "KLN-5040"
	CodePGUnreachable   Code = "KLN-5041"
	CodePGAuth          Code = "KLN-5042"
	CodePGDatabase      Code = "KLN-5043"
	CodePGSecretKey     Code = "KLN-5044"
	CodeSupervisor      Code = "KLN-6001"
	CodeBackend         Code = "KLN-6002"
	CodeOOMKilled       Code = "KLN-6003"
	CodeEvicted         Code = "KLN-6004"
	CodeImagePull       Code = "KLN-6005"
	CodeContainerConfig Code = "KLN-6006"
	CodeUnschedulable   Code = "KLN-6007"
	CodeKubeConfig      Code = "KLN-6008"
	CodePodLost         Code = "KLN-6009"
	CodeIsolation       Code = "KLN-6010"
	CodeLogsLost        Code = "KLN-6011"
	// Initializers and run policy (issue 13).
	CodeStorageScheme   Code = "KLN-1055"
	CodeArtifactStore   Code = "KLN-1056"
	CodeReplicaGroup    Code = "KLN-1057"
	CodeRunPolicyValue  Code = "KLN-1058"
	CodeInitializer     Code = "KLN-3025"
	CodeNotRestarted    Code = "KLN-3026"
	CodeWorkspace       Code = "KLN-6013"
	CodeElasticNumNodes Code = "KLN-1040"
	CodeElasticRange    Code = "KLN-1041"
	CodeElasticCommand  Code = "KLN-1042"
	CodeElasticTooFew   Code = "KLN-3022"
	// Parties of federated runs (issue 14).
	CodePartyCredential   Code = "KLN-7001"
	CodeNoPartyIdentity   Code = "KLN-7002"
	CodePartyNotFound     Code = "KLN-7003"
	CodePartyUnreachable  Code = "KLN-7004"
	CodePartyNoCredential Code = "KLN-7005"
	CodePartyMismatch     Code = "KLN-7006"
	CodePartyURL          Code = "KLN-7007"
	CodePartySelf         Code = "KLN-7008"
	// Federated execution (issue 14).
	CodeShareNeverFits     Code = "KLN-7010"
	CodeFederatedAdmission Code = "KLN-7011"
	CodePartyLost          Code = "KLN-7012"
	CodeShareFailed        Code = "KLN-7013"
	CodeShareAborted       Code = "KLN-7014"
	CodePartRefused        Code = "KLN-7015"
	CodeShareOrder         Code = "KLN-7016"
	// The federation channel and party policies (issue 33).
	CodeChannelPeer     Code = "KLN-7020"
	CodeChannelMessage  Code = "KLN-7021"
	CodeChannelConflict Code = "KLN-7022"
	CodePartIdle        Code = "KLN-7023"
	CodeChannelToken    Code = "KLN-7024"
	CodeChannelTimeout  Code = "KLN-7025"
	CodePolicy          Code = "KLN-7026"
	// Project quotas (issue 15).
	CodeQuotaSpec     Code = "KLN-1080"
	CodeQuotaValue    Code = "KLN-1081"
	CodeQuotaWait     Code = "KLN-2040"
	CodeQuotaRunsWait Code = "KLN-2041"
	CodePreempted     Code = "KLN-3095"
	// The artifact repository (issue 18).
	CodeArtifactConfig Code = "KLN-1084"
	// training-operator jobs as the operator runs them (issue 36).
	CodeEntrypointWrapped   Code = "KLN-1087"
	CodeArtifactCredentials Code = "KLN-6020"
	CodeArtifactRepository  Code = "KLN-6021"
	CodeArtifactTransfer    Code = "KLN-6022"
	CodeNoArtifact          Code = "KLN-4055"
	// Kueue on Kubernetes (issue 36).
	CodeKueueEvicted Code = "KLN-6023"
	CodeKueueMissing Code = "KLN-6024"
	// A launch the cluster refuses (issue 36).
	CodeLaunchRefused Code = "KLN-6025"
	// The engine ↔ supervisor protocol (issue 37).
	CodeSupervisorVersion  Code = "KLN-6026"
	CodeSupervisorProtocol Code = "KLN-6027"
	// The Slurm backend (issue 38).
	CodeSlurmConfig      Code = "KLN-6028"
	CodeSlurmRefused     Code = "KLN-6029"
	CodeSlurmNodeFailure Code = "KLN-6030"
	CodeSlurmTimeLimit   Code = "KLN-6031"
	// Idempotent and bounded submissions (issue 34).
	CodeIdempotencyKey Code = "KLN-4060"
	CodeKeyReused      Code = "KLN-4061"
	CodeSubmitDeadline Code = "KLN-4062"
	CodeNoRoute        Code = "KLN-4063"
	CodeMethod         Code = "KLN-4064"
	// Every error answer JSON with its code (issue 35).
	CodeNoUIFile    Code = "KLN-4070"
	CodeUnsatisfied Code = "KLN-4071"
	CodeHTTPSOnly   Code = "KLN-4072"
	CodeHTTPRefusal Code = "KLN-4073"
	// Argo Workflows documents (issue 36).
	CodeArgoTemplate Code = "KLN-1085"
	// Paging a run's nodes and events (issue 35).
	CodeStaleVersion Code = "KLN-4075"
	CodeBadContinue  Code = "KLN-4076"
	// What a new user's walk found (issue 35).
	CodeNoToken Code = "KLN-4077"
	// Documents as Kubernetes users write them (issue 36).
	CodeNamespace Code = "KLN-1089"
	// Large specs validated without an error per repeat (issue 37).
	CodeMoreErrors Code = "KLN-1086"
)

// CodeInfo describes one code for people and for generated docs.
type CodeInfo struct {
	Code    Code   `json:"code"`
	Meaning string `json:"meaning"`
	Hint    string `json:"hint"`
}

// CodeInfos returns every code kiln defines, in order. It is the one
// registry of codes; docs/errors.md is generated from it.
func CodeInfos() []CodeInfo {
	return []CodeInfo{
		{CodeParse, "the file is not valid YAML or a value has the wrong type", "check indentation and quoting at the position given"},
		{CodeUnknownField, "a field is not part of the schema", "check the spelling; fields are camelCase"},
		{CodeKind, "apiVersion or kind is missing or not one kiln knows", "use apiVersion kiln.dev/v1alpha1 and a kind such as Workflow, or a Kubeflow document kiln reads (docs/kubeflow.md)"},
		{CodeRequired, "a required field is missing or empty", "set the field named"},
		{CodeInvalidName, "a name is not a DNS-1123 label", "use lowercase letters, digits and '-', start and end with a letter or digit, at most 63 characters"},
		{CodeDuplicate, "two items share a name that must be unique", "rename one of them"},
		{CodeUnknownDep, "dependsOn names a task that does not exist", "check the task name"},
		{CodeCycle, "the tasks' dependencies form a cycle", "remove one dependsOn edge of the cycle shown"},
		{CodeDuration, "a duration cannot be parsed", "use Go durations such as 90s, 5m or 1h30m"},
		{CodeQuantity, "a resource quantity cannot be parsed", "use quantities such as 500m, 2, 512Mi or 4Gi"},
		{CodeTemplate, "a {{...}} template refers to something that does not exist", "refer to a declared param, an output of an upstream task, outputs.dir, run.id, run.name, task.name, task.attempt or task.retries"},
		{CodeInvalidValue, "a value is not one the field allows", "the message says what the field allows"},
		{CodeRunnable, "the files do not hold exactly one runnable resource", "pass files with one Workflow or TrainJob (TrainingRuntimes may come with it)"},
		{CodeUnknownParam, "a parameter given at submit is not declared by the workflow", "declare it under spec.params or fix its name"},
		{CodeMissingParam, "a parameter without a default was not given", "pass it with -p name=value"},
		{CodeReservedEnv, "an environment variable name is reserved by kiln or by the job's framework", "rename the variable; kiln and the framework set it"},
		{CodeUnknownRuntime, "a TrainJob or train task names a runtime that is neither defined in the files, stored (kiln apply) nor built in", "list runtimes with kiln get runtimes --project P, add a TrainingRuntime document, or store one with kiln apply -f FILE"},
		{CodeNoMLPolicy, "a TrainingRuntime has no mlPolicy, or more than one framework in it", "set exactly one of mlPolicy.torch, mpi, xgboost, tensorflow, jax or plain"},
		{CodeImageRequired, "a task has no container image and the backend runs containers (kubernetes)", "set image on the task, on the workflow's spec, or trainer.image"},
		{CodeRead, "a file cannot be read", "check the path and that the file is readable"},
		{CodeBareValue, "an unquoted value that YAML reads as a boolean or a number (y, n, yes, no, on, off, 1.10) stands where a string belongs", "quote the value, for example name: \"n\""},
		{CodeDuplicateKey, "a key appears twice in one mapping; YAML would keep only the later value", "remove one of the two lines named"},
		{CodeOutOfRange, "a number, quantity or duration is outside the range the field allows (negative, too large, or an exponent kiln will not expand)", "the message gives the allowed range"},
		{CodeExpression, "a when or depends expression does not compile, is not a boolean, or refers to a name that does not exist", "the message quotes the expression and says what is wrong; conditions are CEL over params.<name> and tasks.<name>"},
		{CodeSubworkflow, "a subworkflow names a workflow that is neither in the files nor a WorkflowTemplate stored in the run's project, or workflows run each other in a cycle", "submit the named Workflow in the same files or store it with kiln apply -f FILE --project P; break the cycle printed"},
		{CodeUnsupported, "a document of another API group (Kubeflow Trainer, training-operator, Argo Workflows) sets a field to a value kiln cannot honour: the job would not run as written", "change or drop the field named; docs/kubeflow.md and docs/argo.md list what each field maps to"},
		{CodeRuntimeRef, "a runtimeRef's kind or apiGroup (a train task's runtimeKind) is not one kiln knows", "kind is TrainingRuntime or ClusterTrainingRuntime, apiGroup kiln.dev or trainer.kubeflow.org; leave them out to look the name up in every kind"},
		{CodeRuntimeKind, "the runtime named exists, but not of the kind the job asks for (runtimeRef.kind or runtimeKind)", "change the kind to the one the message names, or leave it out"},
		{CodeReplicaSpecs, "a training-operator job (kubeflow.org/v1) has a replica type its kind does not have, lacks one it needs, or asks for a count the kind does not allow (a PyTorchJob's Master is one replica)", "the message lists the replica types of the kind and their counts; keys are read in any case (worker is Worker)"},
		{CodeMainContainer, "a replica's pod of a training-operator job has no container named as its kind requires (pytorch, tensorflow, xgboost, jax; an MPIJob's launcher's first container), or has more than that one", "name the trainer's container as the kind does; move a sidecar's work into the trainer or into a workflow task"},
		{CodeReplicasDiffer, "replicas of a training-operator job that kiln runs as one set of nodes (a PyTorchJob's Master and Worker, a TFJob's Chief, Worker and PS) differ in image, resources or pod spec, or one writes no command, args or env where the trainer's replica does", "give the replica types the same image, resources and pod; each may write its own command, args, env and restartPolicy"},
		{CodeFederationRoles, "a federated workflow's spec.federation.roles is missing or empty, names a role or party that is not a DNS-1123 label, leaves a role without parties or lists a party twice in one role", "map each role to the registered parties that fill it: roles: {guest: [alice], host: [bob]}"},
		{CodeTaskRoles, "a task of a federated workflow lists no roles, lists a role twice, or a task lists roles in a workflow without spec.federation", "give every task of a federated workflow roles: [...] naming roles of spec.federation.roles, and only those"},
		{CodeUnknownRole, "a task's roles name a role that spec.federation.roles does not define", "add the role to spec.federation.roles or fix its spelling"},
		{CodeOverrideKey, "a key of a task's perRole is not one of the task's roles, or a key of perParty is not a party of them", "key perRole by the task's roles and perParty by the parties that fill them"},
		{CodeNotFederable, "a federated workflow uses what kiln cannot run across parties: forEach, dynamic, workflow, gate, initialize, cache, depends, when, a trigger other than allSucceeded, onExit, or the workflow runs as a subworkflow", "drop the field named; run that logic inside the task's own program, or in a workflow of its own"},
		{CodeShareName, "the name a task's share takes in a party's part (<task>-<role>, when the party fills several of the task's roles) is another task's or share's name there, or is longer than 63 characters", "rename the task or the role"},
		{CodeCrossParty, "a federated task reads the outputs of an upstream task that one of its parties runs no share of (or runs under several roles): each party reads only its own shares' outputs", "give the party a role in the upstream task, read the value at a party that has it, or pass it through the parties' own program"},
		{CodeNoShare, "the party asked for fills no role of the federated workflow, or the workflow is not federated, so it has no part to run", "check the party's name and spec.federation.roles"},
		{CodeCron, "a Schedule's spec.schedule is not a cron expression kiln reads", "use five fields (minute hour day-of-month month day-of-week), six with seconds first, or a descriptor such as @hourly or @every 90s; the message says which field is wrong"},
		{CodeTimeZone, "a Schedule's spec.timeZone is not an IANA time zone this machine knows", "use a name such as UTC, Europe/Paris or America/New_York"},
		{CodeScheduleTarget, "a Schedule sets neither or both of spec.workflowTemplateRef and spec.workflow", "set exactly one: the name of a stored WorkflowTemplate, or a Workflow's spec inline"},
		{CodeScheduleRef, "a Schedule's spec.workflowTemplateRef names a WorkflowTemplate that is neither in the files applied nor stored in the project", "store the template first (kiln apply -f FILE --project P), or apply it in the same files"},
		{CodeTooLarge, "a task asks for more than the whole resource pool", "lower the task's resources or raise --cpus, --memory or --gpus"},
		{CodeScheduleTimeout, "a task or gang was not admitted within its admission timeout (admissionTimeout, or a runtime's gangPolicy.scheduleTimeoutSeconds)", "free resources, shrink the task or job, or raise the timeout"},
		{CodeCommandNotFound, "the task's command does not exist or is not executable", "install the program or use its full path"},
		{CodeExit, "the task's process exited with a non-zero status", "read the task's logs with kiln logs"},
		{CodeAttemptTimeout, "an attempt ran longer than the task's timeout", "raise timeout or make the task faster"},
		{CodeAttemptLost, "an attempt's supervisor went away before the attempt finished", "the attempt is retried if the task allows retries"},
		{CodeRunTimeout, "the run ran longer than spec.timeout", "raise spec.timeout"},
		{CodeOutput, "a declared output was not written, or is too large", "write the file under $KILN_OUTPUTS before exiting"},
		{CodeCancelled, "the run or task was cancelled", ""},
		{CodeUpstreamFailed, "the task did not start because a task it depends on failed", "fix the upstream task"},
		{CodeStart, "the task's process could not be started", "check workingDir and permissions"},
		{CodeSuspended, "a training job's attempt was stopped because the job was suspended", "kiln unsuspend RUN starts it again"},
		{CodeSecret, "a task's environment names a secret its project does not have", "kiln secret set NAME --project P"},
		{CodeNotAList, "a map task's forEach value is not a JSON list", "make the upstream output or param a JSON list such as [\"a\",\"b\"]; the message quotes its first bytes"},
		{CodeFragment, "the workflow fragment a dynamic task wrote is not valid", "the message lists each problem of the fragment; fix the program that writes it"},
		{CodeCondition, "a task's when condition failed to evaluate", "check the values it reads; the message gives the error"},
		{CodeRejected, "an approval gate was rejected", "see who rejected it and why in kiln describe run"},
		{CodeGateTimeout, "a gate was not approved, signalled or woken, or a sensor did not find what it waits for, within its timeout", "raise gate.timeout or sensor.timeout, or set onTimeout"},
		{CodeTooFewSucceeded, "fewer items of a map task succeeded than its minSuccesses or minSuccessRatio asks", "see the failed items in kiln describe run"},
		{CodeTriggerRule, "the task did not start because its trigger rule or depends expression was not met by how its upstream tasks ended", "see the upstream tasks' phases"},
		{CodeChildFailed, "a task of a dynamic fragment, subworkflow or exit handler failed", "see the failed child in kiln describe run"},
		{CodeStopped, "the run was stopped on request (kiln stop): its running tasks were stopped, nothing else started, and its exit handlers ran", "kiln retry runs what did not succeed again"},
		{CodeTickMissed, "a Schedule's tick started no run because it was found later than spec.startingDeadlineSeconds allows (the server was down, or suspended)", "raise startingDeadlineSeconds to catch up longer outages; kiln get schedule NAME -o yaml counts the ticks missed"},
		{CodeTickSkipped, "a Schedule's tick started no run because an earlier run of it had not finished and its concurrencyPolicy is Forbid", "use concurrencyPolicy Allow or Replace, or make the runs shorter than the schedule's period"},
		{CodeTickFailed, "a Schedule's tick could not start its run: its WorkflowTemplate is gone, or the workflow no longer checks", "read the message in kiln get schedule NAME -o yaml; fix or store the template and the next tick runs"},
		{CodeNoSchedule, "the project has no Schedule of the given name", "list a project's schedules with kiln get schedules --project P"},
		{CodeRunNotFound, "no run has the given ID", "list runs with kiln get runs"},
		{CodeUsage, "a command-line argument is invalid", "see kiln help for the command"},
		{CodeUnauthenticated, "the request carries no valid API token", "send Authorization: Bearer <token>; the first start writes an admin token to KILN_HOME/admin.token"},
		{CodeForbidden, "the token's role or projects do not allow this", "use a token of the run's project with the needed role (viewer reads, editor submits and cancels, admin manages tokens)"},
		{CodeBodyTooLarge, "the request body is larger than the server accepts", "split the submission or raise the server's limit"},
		{CodeBadRequest, "a request parameter is missing or malformed", "see the message"},
		{CodeInternal, "the server failed while handling the request", "see the server's log"},
		{CodeRunPhase, "the run's phase does not allow the request: cancelling or suspending a run that ended, retrying one that did not fail, rerunning or deleting one that has not ended", "check the run's phase with kiln describe run: a run that ended can be retried (Failed, Cancelled) or rerun (kiln rerun), not cancelled, stopped or suspended"},
		{CodeSecretNotFound, "the project has no secret of the given name", "list a project's secrets with kiln secret list --project P"},
		{CodeRateLimited, "the token (or client) sent more requests than the server allows per second", "wait for the Retry-After seconds and try again"},
		{CodeBusy, "the server is handling as many submissions as it allows at once", "wait for the Retry-After seconds and try again"},
		{CodeNotWaiting, "an approval or signal was sent to a task that is not a gate waiting for it, or the value does not fit the gate's type", "check the task with kiln describe run; a signal's value must parse as the gate's type"},
		{CodeNoTemplate, "the project has no WorkflowTemplate of the given name", "list a project's templates with kiln get templates --project P"},
		{CodeNoLogs, "the task ran no process in this run (its result came from the cache, or a rerun reused it), so it has no logs here", "read the logs of the run the message names"},
		{CodeRerunGone, "a task a rerun would reuse was produced by a run that has been deleted, and its outputs with it", "rerun from that task, so that it runs again"},
		{CodeRunInUse, "the run is not deleted: a rerun that has not ended reuses its results and reads their files", "delete it once the rerun has ended (kiln gc and TTLs wait for that by themselves)"},
		{CodeNotTrainJob, "kiln get trainjob names a run that is not of a TrainJob, or a name no TrainJob run has", "list TrainJob runs with kiln get runs; a Workflow's training tasks are shown by kiln describe run"},
		{CodeNoRuntime, "no runtime of the given kind and name is stored (in the project, for a TrainingRuntime), or not in the version asked for", "list runtimes with kiln get runtimes --project P; a ClusterTrainingRuntime needs --kind ClusterTrainingRuntime"},
		{CodeNoQuota, "the project has no ProjectQuota", "list the projects' quotas with kiln get quotas; the quota's name is its project's"},
		{CodeUnknownPhase, "a phase filter (kiln get runs --phase, or the phase parameter of GET /api/v1/runs) names no phase a run can be in", "use one of Pending, Running, Suspended, Failing, Cancelling, Succeeded, Failed, Cancelled, in any case, several separated by commas"},
		{CodeBadTime, "a time filter (--since, --until, or the since and until parameters) is neither an RFC 3339 time nor a duration", "write 2026-11-23T16:00:00Z, or a duration such as 2h or 10m meaning that long ago"},
		{CodeNoContext, "the kiln configuration file has no context of the name given (--context, or current-context)", "list contexts with kiln config get-contexts; add one under contexts: in KILN_HOME/config.yaml"},
		{CodeOutputFormat, "the output format (-o) is not one the command prints, or its jsonpath template does not parse", "use table, wide, json, yaml, name or jsonpath='{.items[*].id}'"},
		{CodeConfigExposed, "the kiln configuration file holds a secret (a context's token, the store's password) and users other than its owner may read it", "chmod 600 the file named, or move the secret out of it (KILN_TOKEN, PGPASSWORD)"},
		{CodeNoSchema, "GET /api/v1/schemas/NAME names no JSON Schema the server has", "the answer lists the schemas; kiln.json takes a document of any kind"},
		{CodeBuiltinRuntime, "a built-in runtime cannot be deleted", "store a ClusterTrainingRuntime of its name with kiln apply to override it; deleting that brings the built-in one back"},
		{CodeNoCacheEntry, "the cache holds no entry with the given key", "list entries with kiln cache ls; a key may be given by a prefix of at least 8 characters"},
		{CodeRerunNode, "kiln rerun names a task that is not a top-level task of the run (a child such as sweep.3, the onExit handler, or no task at all)", "name one of the top-level tasks the message lists; for a child, name its parent"},
		{CodeRerunUpstream, "kiln rerun --only names a task whose upstream task did not succeed in the run, so it has no inputs to reuse", "rerun --from the upstream task, or --until the task, to run the upstream task too"},
		{CodeStoreOpen, "the store cannot be opened or written", "check that KILN_HOME is a writable directory"},
		{CodeStoreCorrupt, "the store file is damaged or not a kiln store", "move the file away and start again, or restore a backup"},
		{CodeStoreVersion, "the store was written by a newer kiln", "upgrade kiln"},
		{CodeStoreFull, "the disk holding the store or KILN_HOME is full; nothing was written", "free space on the device named; kiln resume RUN then finishes the run"},
		{CodeSecretKey, "the key that encrypts secret values at rest is missing, unreadable or not the one the store was written with", "restore KILN_HOME/secret.key (or KILN_SECRET_KEY_FILE) from where it was kept"},
		{CodeStoreKind, "--store (or KILN_STORE, or the configuration file's store) names no store kiln knows", "use sqlite (the default: KILN_HOME/kiln.db) or a PostgreSQL URL such as postgres://kiln@db.example:5432/kiln (the password in PGPASSWORD or ~/.pgpass, not the URL)"},
		{CodeLeadershipLost, "this server led its replicas and another replica took over (it was paused, or cut off from the store, past its lease); it stopped before writing anything more", "restart it: it serves as a follower and leads again when the leader is gone. Run replicas under a supervisor (systemd, Kubernetes) that restarts them"},
		{CodePGAddress, "the PostgreSQL store's address (a postgres:// URL or key=value DSN) does not parse", "write it as postgres://USER@HOST:PORT/DATABASE; keep the password in PGPASSWORD or ~/.pgpass"},
		{CodePGUnreachable, "the PostgreSQL server named by the store's address cannot be reached, or stopped answering", "check that the server runs and that its host and port are right and reachable from here"},
		{CodePGAuth, "the PostgreSQL server refused the store's user: wrong password, or no pg_hba.conf rule lets it in", "check the user and password (PGPASSWORD, ~/.pgpass) and the server's pg_hba.conf"},
		{CodePGDatabase, "the database named by the PostgreSQL store's address does not exist, or its user may not use it", "create it (createdb -O USER DATABASE) or grant the user access"},
		{CodePGSecretKey, "a PostgreSQL store was opened without a secret key file: there is no directory beside the database to keep one in", "set KILN_SECRET_KEY_FILE to a key file every replica reads (the same 32 bytes); kiln makes it on first use"},
		{CodeStoreBusy, "a write to the PostgreSQL store waited more than 3 s for another writer's lock, and gave up; nothing of it was written", "try again; if it lasts, look in pg_stat_activity for a session idle in a transaction (a replica frozen mid-write is ended after 5 s)"},
		{CodeHomeStore, "KILN_HOME belongs to kiln serve replicas of a PostgreSQL store (its file store says which), and the command names another store", "set --store or KILN_STORE to the store the file names; to move the home to another store, remove KILN_HOME/store"},
		{CodeStorePassword, "--store holds a password: every process on the machine, every task included, can read kiln's command line", "give --store without the password, and the password in PGPASSWORD (or KILN_STORE), which kiln reads at start and removes from the environment of what it starts, or in a password file (PGPASSFILE, default ~/.pgpass)"},
		{CodeServerUnreachable, "the kiln server the command talks to (--server, KILN_SERVER, or the context's server) cannot be reached: nothing answers at its URL, or the name does not resolve", "check the URL in --server, KILN_SERVER or the current context (kiln config get-contexts), and that kiln serve runs there; --server \"\" uses the engine embedded in kiln instead"},
		{CodeSupervisor, "the local supervisor cannot be started or reached", "see supervisor.log in KILN_HOME"},
		{CodeBackend, "the backend refused or failed an operation", "see the message"},
		{CodeOOMKilled, "a container was killed for using more memory than its limit (OOMKilled)", "raise resources.memory or use less memory"},
		{CodeEvicted, "the cluster evicted the pod (node pressure, preemption or drain)", "see the message; the attempt is retried per its retry policy"},
		{CodeImagePull, "the cluster cannot pull the container image (ErrImagePull, ImagePullBackOff, InvalidImageName)", "check the image name and tag, and imagePullSecrets in podTemplate"},
		{CodeContainerConfig, "the cluster cannot create the container (CreateContainerConfigError): a secret, config map or volume it names is missing", "create the object the message names, or fix podTemplate"},
		{CodeUnschedulable, "the pods were not all placed on nodes within the schedule timeout, counted from their creation; none of them was left behind", "ask for less (resources, numNodes) or add nodes; the message is the scheduler's, or says that no scheduler of the pods' schedulerName answered (is the gang scheduler running?)"},
		{CodeKubeConfig, "no usable Kubernetes client configuration (kubeconfig, context, namespace)", "check --kubeconfig, --kube-context and --namespace, or KUBECONFIG"},
		{CodePodLost, "a pod of a running attempt was deleted by someone other than kiln", "see the cluster's events; the attempt is retried per its retry policy"},
		{CodeStorageScheme, "an initializer's storageUri has a scheme kiln cannot fetch (hf://, gs://, ...)", "use a local path, file://, http:// or https://; fetch other sources in the trainer's own code"},
		{CodeArtifactStore, "an initializer's storageUri is s3://, which needs an artifact store, and none is configured", "copy the data to a local path or an http(s) server, or configure an artifact store once kiln has one"},
		{CodeReplicaGroup, "runPolicy.groups names a replica group the job's framework does not have", "use node (every framework), launcher (mpi) or ps (tensorflow)"},
		{CodeRunPolicyValue, "runPolicy.cleanPodPolicy or a restartPolicy is not one of the values kiln knows", "cleanPodPolicy: None, Running or All; restartPolicy: Never, OnFailure, Always or ExitCode"},
		{CodeInitializer, "a training job's dataset or model initializer could not fetch its storageUri (missing file, HTTP error, unreachable host); the trainer did not start", "check the URI the message names; kiln logs RUN shows the initializer's own words"},
		{CodeNotRestarted, "a training job failed without restarting: its restartPolicy (Never, or ExitCode with an exit code from 1 to 127) says the failure is permanent", "fix the failure; exit 128 or more (or a signal) restarts under ExitCode, OnFailure restarts on any failure"},
		{CodeWorkspace, "the volume that a training job's initializers and trainer share on kubernetes could not be created", "give the job a pod template volume named initializer (a PersistentVolumeClaim the cluster can bind), or let kiln create one: it needs a default StorageClass"},
		{CodeIsolation, "the isolation asked for tasks cannot be set up on this machine", "see kiln serve's start-up log for what the kernel offers, or change --isolation"},
		{CodeLogsLost, "a task's log could not be written whole (the disk was full): the bytes it lost are counted, the task's outcome stands", "free space on the disk of KILN_HOME; kiln logs shows [kiln: N bytes lost: CAUSE] where the bytes went missing, kiln describe run the bytes each log lost"},
		{CodeElasticNumNodes, "numNodes is set (in the runtime's mlPolicy or template, or the job's trainer) on a job whose runtime sets torch.elasticPolicy", "remove numNodes: the elastic policy's minNodes and maxNodes size the job"},
		{CodeElasticRange, "an elastic policy's minNodes is greater than its maxNodes", "set minNodes to at most maxNodes"},
		{CodeElasticCommand, "an elastic PyTorch job's command is not torchrun: only torchrun's agents can meet again after a node is lost", "start the trainer with torchrun (or python -m torch.distributed.run)"},
		{CodeElasticTooFew, "an elastic training job lost nodes until fewer than its minNodes were left", "see which nodes were lost in kiln describe run and their logs; lower minNodes to go on with fewer"},
		{CodePartyCredential, "a party's server refused a call: the party credential is missing, unknown or revoked, or the Kiln-Party header does not name the party it was issued to", "give the credential the other server's kiln party add printed for this party (kiln party add NAME --url URL --credential C); if it was lost, run kiln party add there again with --rotate"},
		{CodeNoPartyIdentity, "the server has no party identity, so it takes part in no federated run: it was started without --party, or this is an embedded kiln", "start the server with kiln serve --party NAME --advertise URL, and submit federated workflows to it with --server"},
		{CodePartyNotFound, "no party of the given name is registered on this server", "list parties with kiln party list; register one with kiln party add NAME --url URL"},
		{CodePartyUnreachable, "a party's server cannot be reached at the URL it was registered with", "check the URL (kiln party list), that the party's kiln serve runs and that this machine reaches it; --no-check registers a party whose server is down"},
		{CodePartyNoCredential, "a party is registered without the credential it issued to this server, so this server cannot call it", "run kiln party add NAME --url URL --credential C with the credential the party's own kiln party add printed"},
		{CodePartyMismatch, "the server at a party's URL says it is another party (its kiln serve --party)", "check the URL and the name: a party is registered under the name its server was started with"},
		{CodePartyURL, "a party's URL (kiln party add --url, kiln serve --advertise) is not an http:// or https:// URL with a host", "give a URL such as http://10.0.0.2:8420"},
		{CodePartySelf, "a server was asked to register its own party", "register the other parties on this server, and this one on theirs"},
		{CodeShareNeverFits, "a party's share of a federated task asks for more than that party's whole pool", "lower the task's resources for that role or party (perRole, perParty), or give the party's server more --cpus/--memory/--gpus"},
		{CodeFederatedAdmission, "not every party admitted its share of a federated task within spec.federation.admissionTimeout; every share already held was given back", "the message names the party and what it lacked; free room there or raise admissionTimeout"},
		{CodePartyLost, "a party's server could not be reached for longer than spec.federation.partyTimeout while the party took part in an attempt", "check that the party's kiln serve runs and is reachable at its registered URL (kiln party list); raise partyTimeout for slow links"},
		{CodeShareFailed, "a party's share of a federated task failed, so the task's attempt failed at every party", "read the share's log at that party (kiln logs there); the message carries the party's own code"},
		{CodeShareAborted, "the share was stopped by the initiator because its attempt failed at another party or the run stopped", "look at the federated run on the initiator for the party whose share failed"},
		{CodePartRefused, "a party refused to create its part of a federated run", "the message carries the party's reason and code; fix the workflow or the party's registration"},
		{CodeQuotaSpec, "a ProjectQuota document is malformed: a missing metadata.name, or an apiVersion other than kiln.dev/v1alpha1 (an unknown field is KLN-1002)", "see docs/quotas.md for the fields: cpu, memory, gpu, runs, weight, borrowing, preemption"},
		{CodeQuotaValue, "a ProjectQuota field has a value out of range: a negative or malformed quantity, a weight below 1, or a preemption other than Never or LowerPriority", "the message names the field; quantities are written as in a task's resources (\"4\", \"500m\", \"8Gi\")"},
		{CodeQuotaWait, "a task waits because its project's quota (spec.cpu, spec.memory, spec.gpu) is used up and it may not borrow spare capacity now, or because it needs more than the whole quota of a project that may not borrow: then it cannot start until the quota is raised", "wait, raise the project's quota (kiln apply a ProjectQuota), or set spec.borrowing: true"},
		{CodeQuotaRunsWait, "a run stays Pending because its project already has spec.runs unfinished runs running", "wait for one to end, or raise spec.runs of the project's ProjectQuota"},
		{CodePreempted, "an attempt was stopped to make room for a task of higher priority of its project, or for a project reclaiming its quota; it counts as a failure of the machine and is retried", "give the task a higher priority, or spec.preemption: Never on the project's ProjectQuota to never evict"},
		{CodeShareOrder, "an order names a share, or an attempt, that the part does not have or that already ended", "orders come from the initiator's engine; a mismatch means the part and the run diverged (see the part's events)"},
		{CodeChannelPeer, "a federation channel message names a party and role that is not another share of the same attempt, or comes from a party that fills no role of the run", "send to the parties listed in KILN_FEDERATION_PEERS, by party and role"},
		{CodeChannelMessage, "a federation channel message is malformed: its name, size, digest or piece numbers are wrong, or it is over the largest message", "names are 1 to 128 letters, digits, '.', '_' or '-'; the Python package kiln.federation sends well-formed messages"},
		{CodeChannelConflict, "a federation channel message of that name was already sent in this attempt with other content", "messages are immutable within an attempt: give each one its own name (such as weights-round-3)"},
		{CodeChannelToken, "a call to the federation channel carries no channel token, or one that is not the token of that attempt of that share", "a share's processes find their token in KILN_FEDERATION_TOKEN and their channel's URL in KILN_FEDERATION_CHANNEL; each attempt has its own"},
		{CodeChannelTimeout, "(kiln.federation, in a share's process) a message did not arrive within the receiver's timeout", "the sending share may have failed: its party's part shows why; FEDERATION_TIMEOUT sets how long a call waits"},
		{CodePolicy, "a party's policy for the initiator refuses a task: a command line, image or podTemplate it does not allow, a secret it does not name, or more resources than a share may ask", "ask the party to allow it (kiln party add NAME --policy FILE at its server; docs/federation.md), or change the task"},
		{CodePartIdle, "a party ended its part of a federated run because the initiator was silent longer than the party's --party-idle-timeout", "see whether the initiator's server is down; rerun the federated run from the initiator once it is back"},
		{CodeEntrypointWrapped, "a task that runs its image's entrypoint (a container without a command) asks for what kiln runs its command under a wrapper for: output parameters or artifacts, which the pod's command must collect", "write the command the image's ENTRYPOINT runs, or drop the task's outputs and artifacts"},
		{CodeArtifactConfig, "the configuration's artifacts section is invalid: artifacts.s3 lacks its endpoint or bucket, or a field has a value it does not allow", "see docs/artifacts.md: artifacts: {s3: {endpoint, bucket, prefix, region, insecure, secret}}"},
		{CodeArtifactCredentials, "the credentials of the S3 artifact repository cannot be read: the secret artifacts.s3.secret names is not in project default, or its value is not ACCESS_KEY:SECRET_KEY", "printf '%s:%s' \"$ACCESS\" \"$SECRET\" | kiln secret set NAME; or set KILN_S3_ACCESS_KEY and KILN_S3_SECRET_KEY"},
		{CodeArtifactRepository, "the S3 artifact repository cannot be reached, refused the credentials, or has no such bucket", "check artifacts.s3.endpoint, bucket, insecure (plain HTTP) and the credentials' secret; the message carries the store's answer"},
		{CodeArtifactTransfer, "a task's output artifact could not be uploaded to the artifact repository, or an input artifact could not be fetched from it", "the message names the artifact and the store's answer; a declared output must exist when the task succeeds"},
		{CodeKueueEvicted, "Kueue evicted the Workload of an attempt it had admitted (preempted by a job of higher priority, deactivated, or its pods not ready in time); the attempt is retried from the system's budget", "the message gives Kueue's reason; see the ClusterQueue's quota and preemption policy"},
		{CodeKueueMissing, "a task names a Kueue queue (label kueue.x-k8s.io/queue-name) but the cluster serves no Kueue Workloads (kueue.x-k8s.io/v1beta1)", "install Kueue in the cluster, or drop the label to run without it"},
		{CodeSlurmConfig, "the Slurm backend's configuration cannot be used: slurm.dir is not an absolute path to a directory here, or the Slurm commands (squeue, sbatch) do not run or cannot reach the controller", "set slurm.dir to a directory the cluster's nodes share with kiln at the same path; put the Slurm commands in PATH (or slurm.bin) and SLURM_CONF (or slurm.conf) where they find the controller; scontrol ping says whether it answers"},
		{CodeSlurmRefused, "sbatch refused the attempt's job, so it can never start: a partition, account or QOS the cluster does not have or does not let the user use, or more CPUs, memory, GPUs or nodes than the partition's nodes hold; it fails at once and is not retried", "the message gives sbatch's own words: fix the task's resources or the backend's slurm.partition, slurm.account or slurm.qos (sinfo and sacctmgr show what the cluster has) and submit again"},
		{CodeSlurmNodeFailure, "Slurm ended the attempt's job for the cluster's sake, not the task's: its node failed (NODE_FAIL), did not boot (BOOT_FAIL), or a job of a higher priority preempted it (PREEMPTED); it is retried from the system budget", "nothing, if the retry succeeds; otherwise ask the cluster's administrators about the node the message names (scontrol show node), or run at a QOS that is not preempted"},
		{CodeSlurmTimeLimit, "Slurm ended the attempt's job at its time limit (TIMEOUT): the task's timeout and a minute, or the partition's limit, passed while kiln was not there to end it itself", "raise the task's timeout, or ask for a partition whose MaxTime is longer (sinfo -o '%P %l')"},
		{CodeLaunchRefused, "the Kubernetes API server refused an object of the attempt (its pod, say) as invalid or forbidden by admission, so the attempt can never start; it fails at once and is not retried", "the message gives the API server's own words and the field it names: fix that field of the task (a label or nodeSelector value, an env name, the pod template) and submit again"},
		{CodeSupervisorVersion, "the supervisor already serving this KILN_HOME is from another kiln build and speaks another protocol (kiln was upgraded while it ran) and still runs attempts; the engine refuses to drive it, and the attempts go on under it (an idle one is replaced at once)", "the engine retries: once the older supervisor's attempts end it is replaced by one of this build; to stop them sooner, kill the PID in $KILN_HOME/supervisor.lock (its attempts are then reported lost and retried)"},
		{CodeSupervisorProtocol, "the engine or the supervisor received a frame it cannot read on the supervisor's socket: torn, too long, of an unknown message type, or with a message that does not decode", "both ends must be the same kiln build: stop the supervisor (the PID in $KILN_HOME/supervisor.lock) and run again; report it if it recurs with one build"},
		{CodeNoArtifact, "the run, node or artifact named has no artifact stored in the repository", "kiln artifacts ls RUN lists what a run's tasks stored"},
		{CodeIdempotencyKey, "the Idempotency-Key header of a submission is empty or not 1 to 255 letters, digits and the characters - _ . : + / =", "send a random key, such as 32 hex digits, the same on every retry of one submission (kiln run --idempotency-key; the CLI and SDK make one)"},
		{CodeKeyReused, "a submission's Idempotency-Key was already used, within the server's window, for a different submission (other files, params or options) to the same project", "send each new submission with a new key; a retry must send the same submission with the same key"},
		{CodeNoRoute, "the API has no route at the path asked for", "see /api/v1/openapi.json for the routes; check the path's spelling and its /api/v1 prefix"},
		{CodeMethod, "the API's route at the path does not take the method asked for (405); the Allow header lists those it takes", "use one of the methods that the Allow header and the error's message list"},
		{CodeNoUIFile, "the web UI has no file at the path asked for under /ui/", "open the UI at / and let it load its own files; after an upgrade, reload the page"},
		{CodeUnsatisfied, "the request's Range or conditional headers (If-Match, If-Unmodified-Since) cannot be met by the file asked for (416 or 412)", "ask for a range within the file's size, or leave the headers out to get the whole file"},
		{CodeHTTPSOnly, "a plain HTTP request reached a server that serves HTTPS only (kiln serve --tls-cert)", "use https:// in the server's URL (kiln --server, KILN_SERVER, the context's server)"},
		{CodeHTTPRefusal, "the server refused the request for a reason of HTTP itself, before any route read it; the message says which", "check the client's request: its method, headers and body; the status says more"},
		{CodeStaleVersion, "the sinceVersion of a request for a run's changed nodes is not a version of that run's nodes: not a number, or past the run's own version (its store was replaced or restored since); 410 Gone, as Kubernetes answers an expired resourceVersion", "list the run's nodes again without sinceVersion, and send the resourceVersion of that answer from then on"},
		{CodeNoToken, "no API token has the given ID (kiln token revoke takes a token's ID, not its name or value)", "list tokens, with their IDs, with kiln token list"},
		{CodeBadContinue, "the continue token of a request for a page of a run's nodes or events is not one this server gave for that run and query", "send back the continue of the previous page unchanged, with the same phase, parent and sinceVersion; or start again without continue"},
		{CodeSubmitDeadline, "the server could not read and check the submission before its write timeout (--write-timeout) would cut off the answer, so it created no run", "wait for the Retry-After seconds and try again with the same Idempotency-Key, or ask for a longer --write-timeout; a smaller spec checks faster"},
		{CodeArgoTemplate, "an Argo call (template, templateRef, workflowTemplateRef, onExit) names a template that is neither in the document, nor in the files submitted with it, nor stored", "name one of the document's spec.templates; apply the WorkflowTemplate a templateRef names first (kiln apply -f FILE), or submit it in the same files"},
		{CodeNamespace, "a document's metadata.namespace cannot be the project its run or apply goes to: it differs from the project given (--project), names no project kiln has, or the documents name several namespaces", "drop metadata.namespace, or give --project with the namespace's name (kiln reads a namespace as the project of that name)"},
		{CodeMoreErrors, "more errors of one kind (one code at one field pattern) were found than are listed: the first 50 are, and this error counts the rest", "fix the errors listed; the rest are the same mistake repeated, at the fields the pattern names"},
	}
}

// Hint returns the registered hint for c, or "".
func (c Code) Hint() string {
	for _, info := range CodeInfos() {
		if info.Code == c {
			return info.Hint
		}
	}
	return ""
}
