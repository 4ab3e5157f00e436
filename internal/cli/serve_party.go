package cli

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/server"
)

// partyFile is the party section of the configuration file: kiln serve's
// party identity, which --party and --advertise override.
type partyFile struct {
	Name        string `json:"name,omitempty"`
	Advertise   string `json:"advertise,omitempty"`
	IdleTimeout string `json:"idleTimeout,omitempty"`
}

// partyFlags give kiln serve its party identity.
type partyFlags struct {
	name, advertise string
	idle            time.Duration
}

func (p *partyFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&p.name, "party", "", "this server's party name in federated runs (default: the configuration file's party.name; none: no federation)")
	cmd.Flags().StringVar(&p.advertise, "advertise", "", "the URL other parties reach this server at (default: the configuration file's party.advertise, else http://<--addr>)")
	cmd.Flags().DurationVar(&p.idle, "party-idle-timeout", 0, "end this party's part of a federated run whose initiator is silent this long (KLN-7023; default: the configuration file's party.idleTimeout, else 10m; at least 20s)")
}

// apply sets cfg's party identity from the flags over the configuration
// file, checked.
func (p *partyFlags) apply(e *env, cfg *app.Config) error {
	file, path, err := e.backend.load(e.home)
	if err != nil {
		return err
	}
	name, advertise := cmp.Or(p.name, file.Party.Name), cmp.Or(p.advertise, file.Party.Advertise)
	// where names the place a value came from: its flag, else the file's key.
	where := func(flagValue, flag, key string) (string, string) {
		if flagValue == "" && path != "" {
			return path, "party." + key
		}
		return "", "--" + flag
	}
	if name == "" && advertise != "" {
		f, fl := where(p.advertise, "advertise", "advertise")
		return &apiv1.Error{Code: apiv1.CodeUsage, File: f, Field: fl, Message: "an advertised URL needs a party name", Hint: "add --party NAME"}
	}
	if name != "" && len(validation.IsDNS1123Label(name)) > 0 {
		f, fl := where(p.name, "party", "name")
		return &apiv1.Error{Code: apiv1.CodeInvalidName, File: f, Field: fl, Message: fmt.Sprintf("party name %q is not a DNS-1123 label", name)}
	}
	if advertise != "" {
		if u, err := url.Parse(advertise); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			f, fl := where(p.advertise, "advertise", "advertise")
			return &apiv1.Error{Code: apiv1.CodePartyURL, File: f, Field: fl, Message: fmt.Sprintf("%q is not an http:// or https:// URL with a host", advertise)}
		}
	}
	cfg.Party, cfg.Advertise = name, advertise
	idle, err := p.idleTimeout(file.Party, path)
	cfg.PartyIdleTimeout = idle
	return err
}

// idleTimeout is --party-idle-timeout, else the file's party.idleTimeout,
// checked; 0 for the default.
func (p *partyFlags) idleTimeout(file partyFile, path string) (time.Duration, error) {
	d, f, fl := p.idle, "", "--party-idle-timeout"
	if d == 0 && file.IdleTimeout != "" {
		f, fl = path, "party.idleTimeout"
		var err error
		if d, err = time.ParseDuration(file.IdleTimeout); err != nil {
			return 0, &apiv1.Error{Code: apiv1.CodeDuration, File: f, Field: fl, Message: fmt.Sprintf("%q is not a duration", file.IdleTimeout), Hint: "use Go durations such as 90s, 10m or 1h"}
		}
	}
	if d != 0 && d < app.MinPartyIdleTimeout {
		return 0, &apiv1.Error{
			Code: apiv1.CodeUsage, File: f, Field: fl,
			Message: fmt.Sprintf("a party idle timeout of %s is under the least, %s: an initiator calls each party every 5s", d, app.MinPartyIdleTimeout),
		}
	}
	return d, nil
}

// advertiseDefault gives a's party, if it has one and no advertised URL,
// the URL of ln, and says who it is.
func advertiseDefault(e *env, a *app.App, ln net.Listener, scheme string) {
	if a.Party == "" {
		return
	}
	if a.Advertise == "" {
		a.Advertise = scheme + "://" + ln.Addr().String()
	}
	fmt.Fprintf(e.stdout, "kiln is party %s, advertised at %s\n", a.Party, a.Advertise)
}

// partyHost is the engine as the host of parts of federated runs, once
// it is one and has a party identity; nil otherwise (KLN-7002).
func partyHost(a *app.App) server.PartyHost {
	if h, ok := any(a).(server.PartyHost); ok && a.Party != "" {
		return h
	}
	return nil
}

// channelHost is the engine as the federation channel of its shares,
// once it has a party identity; nil otherwise (KLN-7002).
func channelHost(a *app.App) server.ChannelHost {
	if a.Party == "" {
		return nil
	}
	return a
}
