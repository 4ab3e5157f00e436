package cli

import (
	"fmt"
	"path/filepath"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/slurm"
)

// slurmConfig is the configuration file's slurm section: how the slurm
// backend reaches the cluster and what its jobs ask for.
type slurmConfig struct {
	// Dir is shared with the cluster's nodes at the same path; empty:
	// KILN_HOME, which must then be shared.
	Dir string `json:"dir,omitempty"`
	// Conf is the slurm.conf the Slurm commands read (SLURM_CONF).
	Conf string `json:"conf,omitempty"`
	// Bin is the directory of the Slurm commands (default: PATH).
	Bin       string `json:"bin,omitempty"`
	Partition string `json:"partition,omitempty"`
	Account   string `json:"account,omitempty"`
	QOS       string `json:"qos,omitempty"`
	// Prefix starts every job's name; two kiln servers on one cluster
	// and user need distinct prefixes (default kiln).
	Prefix string `json:"prefix,omitempty"`
	// Poll is how often kiln asks squeue about its jobs (default 1s).
	Poll string `json:"poll,omitempty"`
	// SbatchArgs are further arguments every sbatch gets.
	SbatchArgs []string `json:"sbatchArgs,omitempty"`
}

// compile checks the slurm settings and turns them into the backend's.
// Whether the cluster answers is checked when the backend opens.
func (s *slurmConfig) compile(file string) (slurm.Config, error) {
	out := slurm.Config{
		Dir: s.Dir, Conf: s.Conf, Bin: s.Bin, Partition: s.Partition, Account: s.Account, QOS: s.QOS,
		Prefix: s.Prefix, SbatchArgs: s.SbatchArgs,
	}
	bad := func(field, msg string) error {
		return &apiv1.Error{Code: apiv1.CodeInvalidValue, File: file, Field: "slurm." + field, Message: msg}
	}
	for field, p := range map[string]string{"dir": s.Dir, "conf": s.Conf, "bin": s.Bin} {
		if p != "" && !filepath.IsAbs(p) {
			return out, bad(field, fmt.Sprintf("%q is not an absolute path: the cluster's nodes see the same path", p))
		}
	}
	if s.Poll != "" {
		v, err := time.ParseDuration(s.Poll)
		if err != nil || v <= 0 {
			return out, bad("poll", fmt.Sprintf("%q is not a duration such as 2s", s.Poll))
		}
		out.Poll = v
	}
	return out, nil
}
