package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"time"

	"sigs.k8s.io/yaml"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
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

// listDoc is what -o json and -o yaml print for a list, as kubectl
// prints one: a document of kind <Kind>List whose items are the objects,
// so that a jsonpath of .items[*] reads it.
type listDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Items      any    `json:"items"`
}

// printList is printObject of the list items of objects of kind, as a
// listDoc; an empty list, nil or not, prints its items as [].
func printList(w io.Writer, format, kind string, items any) (bool, error) {
	if v := reflect.ValueOf(items); v.Kind() == reflect.Slice && v.IsNil() {
		items = reflect.MakeSlice(v.Type(), 0, 0).Interface()
	}
	return printObject(w, format, listDoc{APIVersion: apiv1.APIVersion, Kind: kind + "List", Items: items})
}

// nonNil is list, or an empty list of its type when it is nil.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
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
