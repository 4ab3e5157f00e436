package metrics

import "github.com/prometheus/client_golang/prometheus"

// Leading is who leads the replicas of a store, read at scrape time:
// the leader's name, address and term, and whether it is this replica.
type Leading func() (holder, address string, term int64, self bool)

// SetLeadership registers the leadership gauges, read from leading.
func (m *Metrics) SetLeadership(leading Leading) {
	m.registry.MustRegister(&leaderGauges{
		leading: leading,
		self:    prometheus.NewDesc("kiln_leader", "1 if this replica leads (runs the engine), 0 if it follows.", nil, nil),
		term:    prometheus.NewDesc("kiln_leader_term", "The term of the leader this replica last saw (0: none yet).", nil, nil),
		info:    prometheus.NewDesc("kiln_leader_info", "The leader this replica last saw, as labels; always 1.", []string{"holder", "address"}, nil),
	})
}

type leaderGauges struct {
	leading          Leading
	self, term, info *prometheus.Desc
}

func (g *leaderGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.self
	ch <- g.term
	ch <- g.info
}

func (g *leaderGauges) Collect(ch chan<- prometheus.Metric) {
	holder, address, term, self := g.leading()
	v := 0.0
	if self {
		v = 1
	}
	ch <- prometheus.MustNewConstMetric(g.self, prometheus.GaugeValue, v)
	ch <- prometheus.MustNewConstMetric(g.term, prometheus.GaugeValue, float64(term))
	if holder != "" {
		ch <- prometheus.MustNewConstMetric(g.info, prometheus.GaugeValue, 1, holder, address)
	}
}
