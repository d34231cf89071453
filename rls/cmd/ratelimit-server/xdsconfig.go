package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	rlsconfv3 "github.com/envoyproxy/go-control-plane/ratelimit/config/ratelimit/v3"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// rateLimitConfigType is the type URL of the RateLimitConfig resources an
// xDS server (Envoy Gateway's, for one) sends a rate limit server.
const rateLimitConfigType = "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig"

// xdsConfigs turns one version of RateLimitConfig resources into the
// server's configuration: each resource is written out in the runtime
// directory's YAML format and parsed by rls.Parse under the name
// "xds:<resource name>", so that a resource goes through the checks a
// file does and its problems name it. Every resource's problems are
// returned, joined; two resources of one domain are an error. No
// resource at all is a valid, empty configuration: every call is
// answered OK, as the reference server does.
func xdsConfigs(resources []*anypb.Any) ([]*rls.Config, error) {
	var configs []*rls.Config
	var errs []error
	from := map[string]string{} // domain -> resource name
	for i, res := range resources {
		var rc rlsconfv3.RateLimitConfig
		if err := res.UnmarshalTo(&rc); err != nil {
			errs = append(errs, fmt.Errorf("%w: resource %d (%s): %w", ratelimit.ErrConfig, i, res.GetTypeUrl(), err))
			continue
		}
		name := "xds:" + rc.GetName()
		c, err := rls.Parse(name, renderYAML(&rc))
		switch {
		case err != nil:
			errs = append(errs, err)
		case from[c.Domain] != "":
			errs = append(errs, fmt.Errorf("%w: %s: domain %q is configured in %s already", ratelimit.ErrConfig, name, c.Domain, from[c.Domain]))
		default:
			from[c.Domain] = name
			configs = append(configs, c)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(configs, func(a, b *rls.Config) int { return strings.Compare(a.Domain, b.Domain) })
	return configs, nil
}

// yamlConfig, yamlDescriptor, yamlLimit and yamlReplace are a
// RateLimitConfig as the runtime directory's YAML writes it.
type yamlConfig struct {
	Domain      string           `yaml:"domain"`
	Descriptors []yamlDescriptor `yaml:"descriptors,omitempty"`
}

type yamlDescriptor struct {
	Key            string           `yaml:"key"`
	Value          string           `yaml:"value,omitempty"`
	RateLimit      *yamlLimit       `yaml:"rate_limit,omitempty"`
	ShadowMode     bool             `yaml:"shadow_mode,omitempty"`
	DetailedMetric bool             `yaml:"detailed_metric,omitempty"`
	Descriptors    []yamlDescriptor `yaml:"descriptors,omitempty"`
}

type yamlLimit struct {
	// Unit is left out when the resource has none (UNKNOWN), so that an
	// unlimited policy reads as one and a limited one lacks its unit.
	Unit            string        `yaml:"unit,omitempty"`
	RequestsPerUnit *uint32       `yaml:"requests_per_unit,omitempty"`
	Unlimited       bool          `yaml:"unlimited,omitempty"`
	Name            string        `yaml:"name,omitempty"`
	Replaces        []yamlReplace `yaml:"replaces,omitempty"`
}

type yamlReplace struct {
	Name string `yaml:"name"`
}

// renderYAML writes rc in the runtime directory's format.
func renderYAML(rc *rlsconfv3.RateLimitConfig) []byte {
	out, err := yaml.Marshal(yamlConfig{Domain: rc.GetDomain(), Descriptors: yamlDescriptors(rc.GetDescriptors())})
	if err != nil {
		panic(fmt.Sprintf("ratelimit: writing a RateLimitConfig as YAML: %v", err)) // plain strings, numbers and booleans always marshal
	}
	return out
}

func yamlDescriptors(ds []*rlsconfv3.RateLimitDescriptor) []yamlDescriptor {
	out := make([]yamlDescriptor, 0, len(ds))
	for _, d := range ds {
		out = append(out, yamlDescriptor{Key: d.GetKey(), Value: d.GetValue(), RateLimit: yamlPolicy(d.GetRateLimit()),
			ShadowMode: d.GetShadowMode(), DetailedMetric: d.GetDetailedMetric(), Descriptors: yamlDescriptors(d.GetDescriptors())})
	}
	return out
}

func yamlPolicy(p *rlsconfv3.RateLimitPolicy) *yamlLimit {
	if p == nil {
		return nil
	}
	l := &yamlLimit{Unlimited: p.GetUnlimited(), Name: p.GetName()}
	if p.GetUnit() != rlsconfv3.RateLimitUnit_UNKNOWN {
		l.Unit = strings.ToLower(p.GetUnit().String())
	}
	if n := p.GetRequestsPerUnit(); !p.GetUnlimited() || n != 0 {
		l.RequestsPerUnit = &n
	}
	for _, r := range p.GetReplaces() {
		l.Replaces = append(l.Replaces, yamlReplace{Name: r.GetName()})
	}
	return l
}
