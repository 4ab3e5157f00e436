package apidoc

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// Files are the generated documents, by path beneath api/openapi.
type Files map[string][]byte

// Generate builds every document: openapi.json and the kinds' schemas
// beneath schemas/. It must run in the module's root (see NewReflector).
// The OpenAPI document is validated before it is returned.
func Generate(ctx context.Context) (Files, error) {
	loose, err := NewReflector(false)
	if err != nil {
		return nil, err
	}
	doc, err := OpenAPI(loose, Operations())
	if err != nil {
		return nil, err
	}
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := Validate(ctx, raw); err != nil {
		return nil, err
	}
	strict, err := NewReflector(true)
	if err != nil {
		return nil, err
	}
	kinds, err := KindSchemas(strict)
	if err != nil {
		return nil, err
	}
	files := Files{"openapi.json": append(raw, '\n')}
	for _, name := range slices.Sorted(maps.Keys(kinds)) {
		files["schemas/"+name] = kinds[name]
	}
	return files, nil
}

// Validate loads an OpenAPI document as a client would and checks it
// against the OpenAPI 3.0 specification, its examples included.
func Validate(ctx context.Context, raw []byte) error {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return fmt.Errorf("the OpenAPI document does not load: %w", err)
	}
	if err := doc.Validate(ctx, openapi3.EnableExamplesValidation()); err != nil {
		return fmt.Errorf("the OpenAPI document is not valid: %w", err)
	}
	return nil
}
