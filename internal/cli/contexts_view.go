package cli

// contextView is a context as kiln config get-contexts -o json or yaml
// prints it: whether it has a token, never the token.
type contextView struct {
	Name     string `json:"name"`
	Current  bool   `json:"current"`
	Server   string `json:"server,omitempty"`
	Project  string `json:"project,omitempty"`
	TokenSet bool   `json:"tokenSet"`
}

// contextViews are cfg's contexts, in the file's order, as printed.
func contextViews(cfg fileConfig) []contextView {
	out := make([]contextView, 0, len(cfg.Contexts))
	for _, c := range cfg.Contexts {
		out = append(out, contextView{Name: c.Name, Current: c.Name == cfg.CurrentContext, Server: c.Server, Project: c.Project, TokenSet: c.Token != ""})
	}
	return out
}
