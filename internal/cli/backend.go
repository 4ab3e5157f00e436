package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/backend/kube"
	"kiln.dev/kiln/internal/backend/slurm"
)

// fileConfig is KILN_HOME/config.yaml (or --config): defaults that
// flags override.
type fileConfig struct {
	// Contexts name the servers the CLI talks to (kubectl's contexts);
	// CurrentContext is the one used when --context is not given.
	Contexts       []cliContext `json:"contexts,omitempty"`
	CurrentContext string       `json:"current-context,omitempty"`

	// Store is "sqlite" (the default) or a postgres:// URL.
	Store string `json:"store,omitempty"`
	// Backend names an entry of app's backend table: "local",
	// "kubernetes", "slurm".
	Backend    string      `json:"backend,omitempty"`
	Kubernetes kubeConfig  `json:"kubernetes,omitempty"`
	Slurm      slurmConfig `json:"slurm,omitempty"`
	Cache      cacheFile   `json:"cache,omitempty"`
	Party      partyFile   `json:"party,omitempty"`
	Serve      serveFile   `json:"serve,omitempty"`
	// Artifacts is the artifact repository (artifacts_config.go).
	Artifacts artifactsFile `json:"artifacts,omitempty"`
}

type kubeConfig struct {
	Kubeconfig           string `json:"kubeconfig,omitempty"`
	Context              string `json:"context,omitempty"`
	Namespace            string `json:"namespace,omitempty"`
	GangScheduler        string `json:"gangScheduler,omitempty"`
	SchedulerName        string `json:"schedulerName,omitempty"`
	CleanPolicy          string `json:"cleanPolicy,omitempty"`
	CleanTTL             string `json:"cleanTTL,omitempty"`
	UnschedulableTimeout string `json:"unschedulableTimeout,omitempty"`
	StuckTimeout         string `json:"stuckTimeout,omitempty"`
	// KilnImage is an image holding kiln, whose binary pods copy to run
	// their tasks under kiln artifact-exec when artifacts.s3 is set.
	KilnImage string `json:"kilnImage,omitempty"`
}

// backendFlags choose where attempts run. They are persistent flags of
// the root command, so every command that starts an engine honours them.
type backendFlags struct {
	fs     *pflag.FlagSet
	config string
	file   fileConfig
	// envStore is KILN_STORE as it was when first read: the variable is
	// removed from the environment once the store is open.
	envStore string
	envRead  bool
}

func (b *backendFlags) add(fs *pflag.FlagSet) {
	b.fs = fs
	k := &b.file.Kubernetes
	fs.StringVar(&b.config, "config", "", "configuration file (default KILN_HOME/config.yaml if it exists)")
	fs.StringVar(&b.file.Store, "store", "", "where kiln keeps its state: sqlite (KILN_HOME/kiln.db) or a postgres:// URL that several kiln servers share (env KILN_STORE; default sqlite)")
	fs.StringVar(&b.file.Backend, "backend", "", "where tasks run: "+strings.Join(app.BackendNames(), ", ")+" (env KILN_BACKEND; default local)")
	fs.StringVar(&k.Kubeconfig, "kubeconfig", "", "kubeconfig file for --backend kubernetes (default $KUBECONFIG, then ~/.kube/config; in a pod, the in-cluster config)")
	fs.StringVar(&k.Context, "kube-context", "", "kubeconfig context for --backend kubernetes (default the kubeconfig's current one)")
	fs.StringVar(&k.Namespace, "namespace", "", "namespace for kiln's pods (default the context's, else default)")
	fs.StringVar(&k.KilnImage, "kiln-image", "", "an image holding kiln (at /usr/local/bin/kiln or on its PATH): pods copy it to fetch and store their artifacts in artifacts.s3")
	fs.StringVar(&k.GangScheduler, "gang-scheduler", "", "create PodGroups for training gangs: coscheduling (scheduler-plugins) or volcano")
	fs.StringVar(&k.CleanPolicy, "clean-policy", "", "delete a finished attempt's pods: Never (default), OnSuccess or Always")
	fs.StringVar(&k.CleanTTL, "clean-ttl", "", "wait this long after an attempt ends before deleting its pods (e.g. 1h)")
	s := &b.file.Slurm
	fs.StringVar(&s.Dir, "slurm-dir", "", "for --backend slurm, a directory at the same path on this machine and on the cluster's nodes, where attempts keep their scripts, logs and outputs (default KILN_HOME)")
	fs.StringVar(&s.Partition, "partition", "", "the Slurm partition jobs are submitted to (default the cluster's)")
	fs.StringVar(&s.Account, "account", "", "the Slurm account jobs are charged to (default the user's)")
	fs.StringVar(&s.QOS, "qos", "", "the Slurm quality of service jobs ask for (default the account's)")
}

// load reads the configuration file, if there is one, and returns it
// with its path ("" when there is none).
func (b *backendFlags) load(home string) (fileConfig, string, error) {
	var cfg fileConfig
	path := b.config
	if path == "" {
		path = filepath.Join(home, "config.yaml")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return cfg, "", nil
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, path, &apiv1.Error{Code: apiv1.CodeParse, File: path, Message: err.Error()}
	}
	if e := unknownConfigField(path, data, reflect.TypeFor[fileConfig]()); e != nil {
		return cfg, path, e
	}
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return cfg, path, &apiv1.Error{Code: apiv1.CodeParse, File: path, Message: yamlMessage(err)}
	}
	return cfg, path, checkExposed(path, cfg)
}

// checkExposed refuses, as ssh refuses a private key others may read, a
// configuration file that holds a secret and is open to group or others.
func checkExposed(path string, cfg fileConfig) error {
	secret := secretIn(cfg)
	if secret == "" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return &apiv1.Error{Code: apiv1.CodeParse, File: path, Message: err.Error()}
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	return &apiv1.Error{
		Code: apiv1.CodeConfigExposed, File: path,
		Message: fmt.Sprintf("the file holds %s and its mode %04o lets other users read it: it is not used", secret, fi.Mode().Perm()),
		Hint:    "chmod 600 " + path,
	}
}

// secretIn names the first secret cfg holds, "" if none.
func secretIn(cfg fileConfig) string {
	for _, c := range cfg.Contexts {
		if c.Token != "" {
			return fmt.Sprintf("the token of context %q", c.Name)
		}
	}
	if app.StoreHasPassword(cfg.Store) {
		return "the store's password"
	}
	return ""
}

// chosenBackend is the backend the flags and configuration file name,
// and its settings.
type chosenBackend struct {
	name  string
	kube  kube.Config
	slurm slurm.Config
}

// resolve merges the configuration file under the flags that were set.
func (b *backendFlags) resolve(home string) (chosenBackend, error) {
	flags := b.file
	cfg, path, err := b.load(home)
	if err != nil {
		return chosenBackend{}, err
	}
	if cfg.Backend == "" {
		cfg.Backend = os.Getenv("KILN_BACKEND")
	}
	over := func(flag string, dst *string, v string) {
		if b.fs.Changed(flag) {
			*dst = v
		}
	}
	k := &cfg.Kubernetes
	over("backend", &cfg.Backend, flags.Backend)
	over("kubeconfig", &k.Kubeconfig, flags.Kubernetes.Kubeconfig)
	over("kube-context", &k.Context, flags.Kubernetes.Context)
	over("namespace", &k.Namespace, flags.Kubernetes.Namespace)
	over("gang-scheduler", &k.GangScheduler, flags.Kubernetes.GangScheduler)
	over("clean-policy", &k.CleanPolicy, flags.Kubernetes.CleanPolicy)
	over("clean-ttl", &k.CleanTTL, flags.Kubernetes.CleanTTL)
	over("kiln-image", &k.KilnImage, flags.Kubernetes.KilnImage)
	s := &cfg.Slurm
	over("slurm-dir", &s.Dir, flags.Slurm.Dir)
	over("partition", &s.Partition, flags.Slurm.Partition)
	over("account", &s.Account, flags.Slurm.Account)
	over("qos", &s.QOS, flags.Slurm.QOS)
	kc, err := k.compile(path)
	if err != nil {
		return chosenBackend{name: cfg.Backend}, err
	}
	sc, err := s.compile(path)
	return chosenBackend{name: cfg.Backend, kube: kc, slurm: sc}, err
}

// compile checks the kubernetes settings and turns them into the backend's.
func (k *kubeConfig) compile(file string) (kube.Config, error) {
	out := kube.Config{
		Kubeconfig: k.Kubeconfig, Context: k.Context, Namespace: k.Namespace,
		GangScheduler: k.GangScheduler, SchedulerName: k.SchedulerName, CleanPolicy: kube.CleanPolicy(k.CleanPolicy),
		KilnImage: k.KilnImage,
	}
	bad := func(field, msg string) error {
		return &apiv1.Error{Code: apiv1.CodeInvalidValue, File: file, Field: "kubernetes." + field, Message: msg}
	}
	switch out.GangScheduler {
	case kube.GangNone, kube.GangCoscheduling, kube.GangVolcano:
	default:
		return out, bad("gangScheduler", fmt.Sprintf("%q is not a gang scheduler kiln knows: use coscheduling or volcano", out.GangScheduler))
	}
	switch out.CleanPolicy {
	case "", kube.CleanNever, kube.CleanOnSuccess, kube.CleanAlways:
	default:
		return out, bad("cleanPolicy", fmt.Sprintf("%q is not a clean policy: use Never, OnSuccess or Always", out.CleanPolicy))
	}
	for _, d := range []struct {
		field string
		s     string
		dst   *time.Duration
	}{{"cleanTTL", k.CleanTTL, &out.CleanTTL}, {"unschedulableTimeout", k.UnschedulableTimeout, &out.Unschedulable}, {"stuckTimeout", k.StuckTimeout, &out.Stuck}} {
		if d.s == "" {
			continue
		}
		v, err := time.ParseDuration(d.s)
		if err != nil || v < 0 {
			return out, bad(d.field, fmt.Sprintf("%q is not a duration such as 10m", d.s))
		}
		*d.dst = v
	}
	return out, nil
}

// store returns the store the flag, the configuration file or KILN_STORE
// name, in that order; "" for the default.
func (b *backendFlags) store(home string) (string, error) {
	if b.fs.Changed("store") {
		return b.file.Store, passwordInArgs(b.file.Store)
	}
	cfg, _, err := b.load(home)
	if err != nil {
		return "", err
	}
	if cfg.Store != "" {
		return cfg.Store, nil
	}
	if !b.envRead {
		b.envStore, b.envRead = os.Getenv("KILN_STORE"), true
	}
	return b.envStore, nil
}

// passwordInArgs refuses a store address with a password in it on the
// command line, where any process on the machine can read it from
// /proc/PID/cmdline.
func passwordInArgs(url string) error {
	if !app.StoreHasPassword(url) {
		return nil
	}
	return &apiv1.Error{
		Code: apiv1.CodeStorePassword, Field: "--store",
		Message: "the address holds a password, which every process on this machine can read from kiln's command line",
		Hint: "give --store without the password and the password in PGPASSWORD or a password file (PGPASSFILE, default ~/.pgpass); " +
			"or give the whole address in KILN_STORE instead of --store. kiln removes PGPASSWORD and KILN_STORE from the environment of what it starts",
	}
}

// withBackend sets cfg's backend from the flags and configuration file.
func (e *env) withBackend(cfg app.Config) (app.Config, error) {
	chosen, err := e.backend.resolve(e.home)
	cfg.Backend, cfg.Kube, cfg.Slurm = chosen.name, chosen.kube, chosen.slurm
	return cfg, err
}
