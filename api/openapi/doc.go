// Package openapi holds kiln's generated API documents: the OpenAPI
// document of the HTTP API (openapi.json) and a JSON Schema for each kind
// users write (schemas/), which editors read for completion. They are
// generated from the Go types of api/ by internal/apidoc; never edit them.
package openapi

import "embed"

//go:generate go run kiln.dev/kiln/internal/apidoc/gen

// Document is the OpenAPI 3.0 document of the HTTP API.
//
//go:embed openapi.json
var Document []byte

// Schemas holds the kinds' JSON Schemas, as schemas/NAME.json.
//
//go:embed schemas/*.json
var Schemas embed.FS
