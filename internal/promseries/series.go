package promseries

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Series maps each sample's key (Key: the sample name with its sorted
// labels, `le` included) to its value.
type Series map[string]float64

// Key is the key of the sample name{labels}, labels sorted by name.
func Key(name string, labels map[string]string) string {
	names := make([]string, 0, len(labels))
	for k := range labels {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", k, labels[k])
	}
	b.WriteByte('}')
	return b.String()
}

// Parse reads a Prometheus text exposition and keeps the samples of the
// families keep accepts, without the labels in ignore (a collector's job,
// instance and otel_scope_* labels, which the server does not have).
func Parse(r io.Reader, keep func(family string) bool, ignore func(label string) bool) (Series, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("promseries: parse: %w", err)
	}
	s := Series{}
	for name, f := range fams {
		if !keep(name) {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				if !ignore(l.GetName()) {
					labels[l.GetName()] = l.GetValue()
				}
			}
			s.add(name, f.GetType(), m, labels)
		}
	}
	return s, nil
}

func (s Series) add(name string, t dto.MetricType, m *dto.Metric, labels map[string]string) {
	switch t {
	case dto.MetricType_COUNTER:
		s[Key(name, labels)] = m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		s[Key(name, labels)] = m.GetGauge().GetValue()
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		for _, b := range h.GetBucket() {
			s[Key(name+"_bucket", with(labels, "le", FormatBound(b.GetUpperBound())))] = float64(b.GetCumulativeCount())
		}
		s[Key(name+"_bucket", with(labels, "le", "+Inf"))] = float64(h.GetSampleCount())
		s[Key(name+"_count", labels)] = float64(h.GetSampleCount())
		s[Key(name+"_sum", labels)] = h.GetSampleSum()
	default:
		s[Key(name, labels)] = m.GetUntyped().GetValue()
	}
}

// FormatBound writes a bucket bound as the `le` label does.
func FormatBound(b float64) string {
	if math.IsInf(b, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(b, 'g', -1, 64)
}

func with(labels map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(labels)+1)
	for lk, lv := range labels {
		out[lk] = lv
	}
	out[k] = v
	return out
}

// sumTolerance is the relative difference allowed between two _sum
// samples: the hosts add the same values in different orders (live token
// order against request end order), which changes the last bits.
const sumTolerance = 1e-9

// Diff lists the samples that differ between want and got, sorted: those
// missing on either side and those with other values. Every value must be
// equal except a histogram's _sum, within sumTolerance.
func Diff(want, got Series) []string {
	var out []string
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("missing %s (want %v)", k, w))
		case g != w && !(isSum(k) && math.Abs(g-w) <= sumTolerance*math.Max(math.Abs(w), 1)):
			out = append(out, fmt.Sprintf("%s = %v, want %v", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("unexpected %s = %v", k, g))
		}
	}
	slices.Sort(out)
	return out
}

func isSum(key string) bool {
	name, _, _ := strings.Cut(key, "{")
	return strings.HasSuffix(name, "_sum")
}

// Add returns the sample-wise sum of a and b (the expected series of a
// gateway that aggregates two replicas).
func Add(a, b Series) Series {
	out := Series{}
	for k, v := range a {
		out[k] += v
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}
