package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func newCacheCmd(e *env) *cobra.Command {
	c := group("cache", "List and remove the stored results of cached tasks")
	c.AddCommand(newCacheLsCmd(e), newCacheRmCmd(e), newCachePruneCmd(e), newCacheGetCmd(e))
	return c
}

func newCacheLsCmd(e *env) *cobra.Command {
	var q apiv1.CacheQuery
	var output string
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List stored results, most recently used first",
		Args:    none("kiln cache ls takes no arguments; filter with --project, --workflow and --task"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			list, err := eng.CacheEntries(cmd.Context(), q)
			if err != nil {
				return err
			}
			if list == nil {
				list = []*apiv1.CacheEntry{}
			}
			if done, err := printList(e.stdout, output, "CacheEntry", list); done {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintln(e.stdout, "the cache holds no results"+cacheFilter(q))
				return nil
			}
			return printCache(e, list)
		},
	}
	cmd.Flags().StringVar(&q.Project, "project", "", "only this project's results (default: every project's)")
	cmd.Flags().StringVar(&q.Workflow, "workflow", "", "only results of this workflow")
	cmd.Flags().StringVar(&q.Task, "task", "", "only results of this task")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json, yaml or jsonpath=TEMPLATE")
	return cmd
}

// cacheFilter says which results a listing kept, or "".
func cacheFilter(q apiv1.CacheQuery) string {
	var parts []string
	for _, f := range []struct{ name, v string }{{"project", q.Project}, {"workflow", q.Workflow}, {"task", q.Task}} {
		if f.v != "" {
			parts = append(parts, fmt.Sprintf("%s %s", f.name, f.v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " of " + strings.Join(parts, ", ")
}

func printCache(e *env, list []*apiv1.CacheEntry) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tWORKFLOW\tTASK\tVERSION\tSIZE\tSOURCE RUN\tCREATED\tLAST USED\tEXPIRES")
	for _, c := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", shortKey(c.Key), c.Workflow, c.Task, dash(c.Version),
			humanBytes(c.Size), c.SourceRun, age(c.CreatedAt), age(c.UsedAt), expires(c.ExpiresAt))
	}
	return tw.Flush()
}

// shortKey is the first 12 hex digits of a key, which kiln cache rm takes.
func shortKey(key string) string {
	hex := strings.TrimPrefix(key, "sha256:")
	if len(hex) > 12 {
		hex = hex[:12]
	}
	return hex
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// expires says when an entry expires: "-" never, "expired", or "in 3h".
func expires(t *time.Time) string {
	switch {
	case t == nil:
		return "-"
	case !t.After(time.Now()):
		return "expired"
	}
	return "in " + age(time.Now().Add(-time.Until(*t))) // as long ago as it is ahead
}

// humanBytes formats n bytes with a binary unit: 512B, 1.5KiB, 10GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func newCacheRmCmd(e *env) *cobra.Command {
	var project string
	cmd := &cobra.Command{
		Use:     "rm KEY...",
		Aliases: []string{"remove", "delete"},
		Short:   "Remove stored results by key (whole, or its first 8 or more hex digits, as kiln cache ls shows)",
		Args:    between(1, -1, "kiln cache rm takes the keys of the results to remove, as kiln cache ls shows them"),
		RunE: func(cmd *cobra.Command, keys []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			out, err := eng.RemoveCacheEntries(cmd.Context(), project, keys)
			if err == nil || out.Entries > 0 {
				fmt.Fprintln(e.stdout, removed(out))
			}
			return err
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "look for the keys among this project's results only (default: every project's)")
	return cmd
}

// removed says what a removal or prune removed.
func removed(p apiv1.CachePruned) string {
	noun := "entries"
	if p.Entries == 1 {
		noun = "entry"
	}
	return fmt.Sprintf("removed %d cache %s, %s freed", p.Entries, noun, humanBytes(p.Bytes))
}

func newCachePruneCmd(e *env) *cobra.Command {
	var p apiv1.CachePrune
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove expired results, and those --all, --older-than or --max-size select",
		Long: "Remove the stored results past their task's maxAge, and those the flags select: --all every one,\n" +
			"--older-than those not used for that long, --max-size the least recently used until the rest fit.\n" +
			"With --project, only that project's. The bytes no remaining result needs are freed.",
		Args: none("kiln cache prune takes no arguments; select with --all, --older-than or --max-size"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			eng, done, err := e.open(cmd.Context(), reading, nil)
			if err != nil {
				return err
			}
			defer done()
			if !p.All && p.OlderThan == "" && p.MaxSize == "" {
				fmt.Fprintln(e.stdout, "removing expired results only: select more with --all, --older-than or --max-size")
			}
			out, err := eng.PruneCache(cmd.Context(), p)
			if err != nil {
				return flagNames(err, map[string]string{"olderThan": "--older-than", "maxSize": "--max-size"})
			}
			fmt.Fprintln(e.stdout, removed(out))
			return nil
		},
	}
	cmd.Flags().BoolVar(&p.All, "all", false, "remove every result (of --project, if set)")
	cmd.Flags().StringVar(&p.OlderThan, "older-than", "", "remove results not used for this long, e.g. 720h")
	cmd.Flags().StringVar(&p.MaxSize, "max-size", "", "remove the least recently used results until the rest hold at most this much, e.g. 5Gi")
	cmd.Flags().StringVar(&p.Project, "project", "", "prune only this project's results (default: every project's)")
	return cmd
}

// flagNames renames the fields of err's coded errors to the flags that
// set them, so that a message names what the user typed.
func flagNames(err error, flags map[string]string) error {
	for _, c := range apiv1.Errors(err) {
		if f, ok := flags[c.Field]; ok {
			c.Field = f
		}
	}
	return err
}
