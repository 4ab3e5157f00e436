package cli

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/workflow"
)

// runtimeFlags name the runtimes of a project, of a kind.
type runtimeFlags struct {
	project, kind, output string
	version               int64
}

func newGetRuntimesCmd(e *env) *cobra.Command {
	var f runtimeFlags
	cmd := &cobra.Command{
		Use:     "runtimes [NAME] [FILE...]",
		Aliases: []string{"runtime", "trainingruntimes", "clustertrainingruntimes"},
		Short:   "List training runtimes: built-in, stored (kiln apply) and those in FILE..., or show one",
		Long: "List the training runtimes a project's jobs may name: the built-in ones (ClusterTrainingRuntimes\n" +
			"that ship with kiln), the stored ClusterTrainingRuntimes and the project's TrainingRuntimes, and the\n" +
			"TrainingRuntimes of FILE... over them. SOURCE says overridden for one that a job naming it does not\n" +
			"get, because one earlier in the lookup order (files, project, cluster, built-in) has its name.\n\n" +
			"An argument holding a '.' or a '/' (or '-') is a file; another is the name of the one runtime to\n" +
			"show (runtime names are DNS labels). What -o yaml prints, kiln apply takes back.",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, files := splitRuntimeArgs(args)
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			if name != "" {
				if len(files) > 0 {
					return usagef("kiln get runtime %s shows one runtime: it takes no files", name)
				}
				rt, err := eng.GetRuntime(cmd.Context(), apiv1.RuntimeQuery{Project: f.project, Kind: f.kind, Name: name, Version: f.version})
				if err != nil {
					return err
				}
				if done, err := printObject(e.stdout, f.output, rt); done {
					return err
				}
				return printRuntimes(e, []*apiv1.TrainingRuntime{rt})
			}
			list, err := eng.ListRuntimes(cmd.Context(), f.project)
			if err != nil {
				return err
			}
			list, err = runtimesIn(e, list, files, f.kind)
			if err != nil {
				return err
			}
			if done, err := printList(e.stdout, f.output, "TrainingRuntime", list); done {
				return err
			}
			return printRuntimes(e, list)
		},
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE (what yaml prints of one runtime, kiln apply takes back)")
	cmd.Flags().StringVar(&f.project, "project", "default", "the project whose runtimes to list")
	cmd.Flags().StringVar(&f.kind, "kind", "", "only runtimes of this kind: TrainingRuntime or ClusterTrainingRuntime")
	cmd.Flags().Int64Var(&f.version, "version", 0, "show this version of a stored runtime (default: the current one)")
	return cmd
}

// splitRuntimeArgs tells a runtime's name from files: a name is a DNS
// label, which holds no '.' or '/'; a file's name here holds one, or is
// "-".
func splitRuntimeArgs(args []string) (name string, files []string) {
	for _, a := range args {
		if name == "" && len(files) == 0 && a != "-" && !strings.ContainsAny(a, "./") {
			name = a
			continue
		}
		files = append(files, a)
	}
	return name, files
}

// runtimesIn returns list with the TrainingRuntimes in files before it,
// those of list they override marked so, keeping those of kind (all if
// empty).
func runtimesIn(e *env, list []*apiv1.TrainingRuntime, files []string, kind string) ([]*apiv1.TrainingRuntime, error) {
	docs, err := workflow.ReadFiles(files)
	if err != nil {
		return nil, err
	}
	docs, terr := workflow.Translate(docs) // Trainer's and training-operator's documents too
	for i := range docs {
		if docs[i].Kind == apiv1.KindClusterTrainingRuntime {
			fmt.Fprintf(e.stderr, "note: %s of %s is not listed: a ClusterTrainingRuntime is used once stored with kiln apply, not from a run's files\n",
				docs[i].Object(), docs[i].File)
		}
	}
	user, err := workflow.UserRuntimes(docs)
	err = errors.Join(terr, err)
	inFiles := map[string]bool{}
	var out []*apiv1.TrainingRuntime
	for i := range user {
		rt := &user[i]
		rt.Status = &apiv1.RuntimeStatus{Source: apiv1.RuntimeSourceFiles}
		inFiles[rt.Metadata.Name] = true
		out = append(out, rt)
	}
	for _, rt := range list {
		if inFiles[rt.Metadata.Name] && rt.Status != nil {
			rt.Status.Source = apiv1.RuntimeSourceOverridden
		}
		out = append(out, rt)
	}
	out = slices.DeleteFunc(out, func(rt *apiv1.TrainingRuntime) bool { return kind != "" && rt.Kind != kind })
	slices.SortStableFunc(out, func(a, b *apiv1.TrainingRuntime) int { return strings.Compare(a.Metadata.Name, b.Metadata.Name) })
	return out, err
}

func printRuntimes(e *env, list []*apiv1.TrainingRuntime) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tPROJECT\tVERSION\tFRAMEWORK\tSOURCE\tAGE")
	for _, rt := range list {
		st := rt.Status
		if st == nil {
			st = &apiv1.RuntimeStatus{}
		}
		version, created := "-", "-"
		if st.Version > 0 {
			version = fmt.Sprint(st.Version)
		}
		if !st.CreatedAt.IsZero() {
			created = age(st.CreatedAt)
		}
		source := string(st.Source)
		if st.Source == apiv1.RuntimeSourceFiles {
			source = "files: " + rt.Metadata.Annotations["kiln.dev/source"]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", rt.Metadata.Name, cmp.Or(rt.Kind, apiv1.KindTrainingRuntime), cmp.Or(st.Project, "-"),
			version, framework(rt.Spec.MLPolicy), cmp.Or(source, "-"), created)
	}
	return tw.Flush()
}

func newDeleteRuntimeCmd(e *env) *cobra.Command {
	var f runtimeFlags
	cmd := &cobra.Command{
		Use:     "runtime NAME",
		Aliases: []string{"runtimes", "trainingruntime", "clustertrainingruntime"},
		Short:   "Delete a stored training runtime; runs that used it keep what they resolved",
		Long: "Delete a stored TrainingRuntime of the project (or, with --kind ClusterTrainingRuntime, one stored\n" +
			"for every project). Jobs submitted after no longer find it; runs submitted before keep the runtime\n" +
			"and version they resolved. The built-in runtimes cannot be deleted; a stored ClusterTrainingRuntime\n" +
			"of a built-in's name overrides it, and deleting that brings the built-in one back.",
		Args: one("kiln delete runtime takes the runtime's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			q := apiv1.RuntimeQuery{Project: f.project, Kind: cmp.Or(f.kind, apiv1.KindTrainingRuntime), Name: args[0]}
			if err := eng.DeleteRuntime(cmd.Context(), q); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s/%s deleted%s\n", q.Kind, q.Name, where(q.Kind, q.Project))
			return nil
		},
	}
	cmd.Flags().StringVar(&f.project, "project", "default", "the project that stores the TrainingRuntime")
	cmd.Flags().StringVar(&f.kind, "kind", apiv1.KindTrainingRuntime, "TrainingRuntime or ClusterTrainingRuntime")
	return cmd
}

// where says where a runtime of kind is stored, after what was done.
func where(kind, project string) string {
	if kind == apiv1.KindClusterTrainingRuntime {
		return " for every project"
	}
	return " in project " + project
}

// printApplied says what kiln apply did with each object, as kubectl does.
func printApplied(e *env, res *apiv1.ApplyResult) {
	if res == nil {
		return
	}
	for _, it := range res.Items {
		if it.Kind == apiv1.KindProjectQuota {
			fmt.Fprintf(e.stdout, "%s/%s %s\n", it.Kind, it.Name, it.Action)
			continue
		}
		if it.Kind == apiv1.KindWorkflowTemplate || it.Kind == apiv1.KindSchedule {
			fmt.Fprintf(e.stdout, "%s/%s %s in project %s\n", it.Kind, it.Name, it.Action, it.Project)
			continue
		}
		fmt.Fprintf(e.stdout, "%s/%s %s (version %d)%s\n", it.Kind, it.Name, it.Action, it.Version, where(it.Kind, it.Project))
	}
}
