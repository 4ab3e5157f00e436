package app

import (
	"context"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// openPostgres opens the PostgreSQL store at url. (Replaced by the
// PostgreSQL store package when it lands.)
func openPostgres(_ context.Context, url, _ string) (store.Store, error) {
	return nil, &apiv1.Error{Code: apiv1.CodeStoreKind, Field: "store", Message: redactURL(url) + ": PostgreSQL is not built in yet"}
}
