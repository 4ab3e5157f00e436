package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/yaml"
)

// printObject prints v as JSON, YAML or through a jsonpath template; it
// reports false for the table formats (default, table, wide). Another
// format is KLN-4053.
func printObject(w io.Writer, format string, v any) (bool, error) {
	if tmpl, ok := jsonpathTemplate(format); ok {
		return true, printJSONPath(w, tmpl, v)
	}
	switch format {
	case "", "table", "wide":
		return false, nil
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return true, enc.Encode(v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return true, err
		}
		_, err = w.Write(b)
		return true, err
	}
	return true, formatError(fmt.Sprintf("output format %q is not one of json, yaml, jsonpath=TEMPLATE", format))
}

// duration formats the time from start to end (or now) for tables.
func duration(start, end *time.Time) string {
	if start == nil {
		return "-"
	}
	stop := time.Now()
	if end != nil {
		stop = *end
	}
	d := stop.Sub(*start)
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// age formats how long ago t was.
func age(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
