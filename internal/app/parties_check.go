package app

import (
	"context"
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/federation"
	"kiln.dev/kiln/internal/store"
)

// checkParty calls p's server before it is registered: it must be
// reached, be a kiln with party p.Name, and accept p's credential when
// one is given and this kiln has a party identity to present it as. What
// could not be checked comes back as warnings.
func (a *App) checkParty(ctx context.Context, p store.Party, given bool) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, partyCheckTimeout)
	defer cancel()
	// Who answers is asked without the credential first: a wrong URL
	// must not be handed a credential meant for p.
	name, err := federation.New(p.URL, a.Party, "", p.Pin).Hello(ctx)
	object := "party/" + p.Name
	switch {
	case name == "" && apiv1.CodeOf(err) == "" && err != nil:
		return nil, &apiv1.Error{
			Code: apiv1.CodePartyUnreachable, Object: object, Field: "url",
			Message: fmt.Sprintf("party %s's server was not reached at %s: %v", p.Name, p.URL, err),
		}
	case name == "":
		return nil, &apiv1.Error{
			Code: apiv1.CodeNoPartyIdentity, Object: object, Field: "url",
			Message: fmt.Sprintf("the kiln server at %s has no party identity", p.URL),
			Hint:    fmt.Sprintf("start it with kiln serve --party %s, or check the URL", p.Name),
		}
	case name != p.Name:
		return nil, &apiv1.Error{
			Code: apiv1.CodePartyMismatch, Object: object, Field: "url",
			Message: fmt.Sprintf("the kiln server at %s is party %s, not %s", p.URL, name, p.Name),
		}
	}
	if p.Credential != "" && a.Party != "" {
		_, err = federation.New(p.URL, a.Party, p.Credential, p.Pin).Hello(ctx)
	}
	return a.checkedCredential(p, err, given)
}

// checkedCredential says what the answer err of p's server (which was
// reached and is p) says of the credential it was sent: given now, or
// stored from before.
func (a *App) checkedCredential(p store.Party, err error, given bool) ([]string, error) {
	switch {
	case p.Credential == "":
		return []string{fmt.Sprintf("party %s's credential is missing: this server cannot call %s until it is given "+
			"(kiln party add %s --credential C, with what kiln party add printed on %s's server)", p.Name, p.Name, p.Name, p.Name)}, nil
	case a.Party == "":
		return []string{fmt.Sprintf("party %s's credential was not checked: this kiln has no party identity to present it as "+
			"(run kiln party add with --server, through the server started with --party)", p.Name)}, nil
	case apiv1.CodeOf(err) == apiv1.CodePartyCredential && !given:
		return nil, &apiv1.Error{
			Code: apiv1.CodePartyCredential, Object: "party/" + p.Name, Field: "credential",
			Message: fmt.Sprintf("party %s's server refused the credential stored for it here: %s; %s has removed or rotated party %s",
				p.Name, apiv1.Errors(err)[0].Message, p.Name, a.Party),
			Hint: fmt.Sprintf("on %s's server run kiln party add %s again (with --rotate if it is registered), and give the credential it prints here "+
				"with --credential; --no-check stores this change without calling %s", p.Name, a.Party, p.Name),
		}
	case apiv1.CodeOf(err) == apiv1.CodePartyCredential:
		return nil, &apiv1.Error{
			Code: apiv1.CodePartyCredential, Object: "party/" + p.Name, Field: "credential",
			Message: fmt.Sprintf("party %s's server refused the credential given for it: %s", p.Name, apiv1.Errors(err)[0].Message),
			Hint: fmt.Sprintf("give the credential that kiln party add %s printed on %s's server; if it was lost, run that again there with --rotate",
				a.Party, p.Name),
		}
	}
	return nil, err
}

// PartyClient is a client of party name's server, as this kiln's party,
// with the credential the party issued to it. KLN-7002 if this kiln has
// no party identity, KLN-7003 if name is not registered, KLN-7005 if its
// credential was not given yet.
func (a *App) PartyClient(ctx context.Context, name string) (*federation.Client, error) {
	if a.Party == "" {
		return nil, &apiv1.Error{Code: apiv1.CodeNoPartyIdentity, Object: "party/" + name, Message: fmt.Sprintf("this kiln has no party identity to call party %s as", name)}
	}
	p, err := a.Store.GetParty(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notRegistered(name)
	}
	if err != nil {
		return nil, err
	}
	if p.Credential == "" {
		return nil, &apiv1.Error{
			Code: apiv1.CodePartyNoCredential, Object: "party/" + name, Field: "credential",
			Message: fmt.Sprintf("party %s is registered without the credential it issued to this server", name),
			Hint:    fmt.Sprintf("kiln party add %s --credential C, with the credential kiln party add %s printed on %s's server", name, a.Party, name),
		}
	}
	return federation.New(p.URL, a.Party, p.Credential, p.Pin), nil
}
