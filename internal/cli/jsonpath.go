package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"k8s.io/client-go/util/jsonpath"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// jsonpathTemplate returns the template of an -o jsonpath=TEMPLATE
// format, and whether format is one.
func jsonpathTemplate(format string) (string, bool) {
	tmpl, ok := strings.CutPrefix(format, "jsonpath=")
	if !ok {
		return "", false
	}
	if len(tmpl) >= 2 && (tmpl[0] == '\'' || tmpl[0] == '"') && tmpl[len(tmpl)-1] == tmpl[0] {
		tmpl = tmpl[1 : len(tmpl)-1] // -o "jsonpath='{...}'" as the shell left it
	}
	if !strings.Contains(tmpl, "{") {
		tmpl = "{" + tmpl + "}" // kubectl takes -o jsonpath=.items[*].id too
	}
	return tmpl, true
}

// printJSONPath prints v's JSON form through a kubectl-style JSONPath
// template. Lists come as a listDoc (printList); a bare slice is the
// "items" of an object all the same, as kubectl shows lists: {.items[*].id}. A template that does not parse, or that
// names a field v does not have, is KLN-4053.
func printJSONPath(w io.Writer, tmpl string, v any) error {
	jp := jsonpath.New("output")
	if err := jp.Parse(tmpl); err != nil {
		return formatError(fmt.Sprintf("jsonpath template %q does not parse: %v", tmpl, err))
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		v = map[string]any{"kind": "List", "items": v}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := jp.Execute(&buf, doc); err != nil {
		return formatError(fmt.Sprintf("jsonpath template %q: %v", tmpl, err))
	}
	if buf.Len() > 0 && !bytes.HasSuffix(buf.Bytes(), []byte("\n")) {
		buf.WriteByte('\n')
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// formatError is the KLN-4053 error of an output format.
func formatError(msg string) error {
	return &apiv1.Error{Code: apiv1.CodeOutputFormat, Field: "--output", Message: msg}
}
