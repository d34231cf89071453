package rls_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/redis/go-redis/v9"
	"go.yaml.in/yaml/v3"

	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// The Kubernetes example (examples/envoy) and the Envoy and Istio
// snippets of docs/envoy.md, read as their users read them.
const (
	envoyExampleDir = "../examples/envoy"
	envoyDoc        = "../docs/envoy.md"
)

// k8sObject is the part of a Deployment, Service or ConfigMap the test
// reads.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Selector yaml.Node `yaml:"selector"`
		Template struct {
			Spec struct {
				Containers []struct {
					Name  string `yaml:"name"`
					Image string `yaml:"image"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					Env []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
						SubPath   string `yaml:"subPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name      string `yaml:"name"`
					ConfigMap *struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
		Ports []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

// readK8sObjects decodes every document of every .yaml file in dir.
func readK8sObjects(t *testing.T, dir string) []k8sObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .yaml file in %s (%v)", dir, err)
	}
	var objs []k8sObject
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var o k8sObject
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o.Kind == "" {
				t.Fatalf("%s: a document without kind", f)
			}
			objs = append(objs, o)
		}
	}
	return objs
}

// TestEnvoyExampleManifests checks examples/envoy: a Deployment whose
// environment reads its configuration where its ConfigMap volume is
// mounted (without subPath, so that updates reach it), a Service on its
// gRPC port, and a ConfigMap of one domain that parses with no problem,
// also as a ConfigMap volume lays it out.
func TestEnvoyExampleManifests(t *testing.T) {
	objs := readK8sObjects(t, envoyExampleDir)
	byKind := map[string][]k8sObject{}
	for _, o := range objs {
		byKind[o.Kind] = append(byKind[o.Kind], o)
	}
	for _, kind := range []string{"Deployment", "Service", "ConfigMap"} {
		if len(byKind[kind]) != 1 {
			t.Fatalf("%d %s objects in %s, want 1", len(byKind[kind]), kind, envoyExampleDir)
		}
	}
	dep, svc, cm := byKind["Deployment"][0], byKind["Service"][0], byKind["ConfigMap"][0]

	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("env %s given twice", e.Name)
		}
		env[e.Name] = e.Value
	}
	for name, want := range map[string]string{
		"RUNTIME_ROOT":           "/data",
		"RUNTIME_SUBDIRECTORY":   "ratelimit",
		"RUNTIME_IGNOREDOTFILES": "true",
		"RUNTIME_WATCH_ROOT":     "false",
	} {
		if env[name] != want {
			t.Errorf("env %s = %q, want %q", name, env[name], want)
		}
	}
	for _, name := range []string{"GRPC_PORT", "REDIS_URL"} {
		if env[name] == "" {
			t.Errorf("env %s not set", name)
		}
	}

	configDir := path.Join(env["RUNTIME_ROOT"], env["RUNTIME_SUBDIRECTORY"], "config")
	var volume string
	for _, m := range c.VolumeMounts {
		if m.MountPath != configDir {
			continue
		}
		if m.SubPath != "" {
			t.Errorf("volume %s is mounted with subPath %q: a subPath mount never sees the ConfigMap's updates", m.Name, m.SubPath)
		}
		volume = m.Name
	}
	if volume == "" {
		t.Fatalf("no volume mounted at %s ($RUNTIME_ROOT/$RUNTIME_SUBDIRECTORY/config)", configDir)
	}
	var configMap string
	for _, v := range pod.Volumes {
		if v.Name == volume && v.ConfigMap != nil {
			configMap = v.ConfigMap.Name
		}
	}
	if configMap != cm.Metadata.Name {
		t.Errorf("volume %s is ConfigMap %q, want the example's %q", volume, configMap, cm.Metadata.Name)
	}

	var grpcPort string
	for _, p := range c.Ports {
		if itoa(p.ContainerPort) == env["GRPC_PORT"] {
			grpcPort = p.Name
		}
	}
	if grpcPort == "" {
		t.Errorf("no container port is GRPC_PORT %s", env["GRPC_PORT"])
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != grpcPort && svc.Spec.Ports[0].TargetPort != env["GRPC_PORT"] {
		t.Errorf("the Service's ports %+v do not target the gRPC port %s (%s)", svc.Spec.Ports, grpcPort, env["GRPC_PORT"])
	}

	// The ConfigMap as its volume holds it: the files in a timestamped
	// directory, ..data linking to it, and a link per file.
	dir := t.TempDir()
	stamp := filepath.Join(dir, "..2026_01_02_10_00_00.000000001")
	if err := os.Mkdir(stamp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(stamp), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for name, text := range cm.Data {
		if err := os.WriteFile(filepath.Join(stamp, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		if _, err := rls.Parse(name, []byte(text)); err != nil {
			t.Errorf("ConfigMap %s, %s: %v", cm.Metadata.Name, name, err)
		}
	}
	configs, err := rls.LoadDir(dir, env["RUNTIME_IGNOREDOTFILES"] == "true")
	if err != nil {
		t.Fatal(err)
	}
	if len(configs) != 1 {
		t.Errorf("the ConfigMap configures %d domains, want 1", len(configs))
	}
}

// envoyExampleConfig is the example ConfigMap's one configuration.
func envoyExampleConfig(t *testing.T) *rls.Config {
	t.Helper()
	for _, o := range readK8sObjects(t, envoyExampleDir) {
		if o.Kind != "ConfigMap" {
			continue
		}
		for name, text := range o.Data {
			c, err := rls.Parse(name, []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	t.Fatal("no configuration in the example's ConfigMap")
	return nil
}

// docSection is the text of the "## title" section of a markdown file.
func docSection(t *testing.T, doc, title string) string {
	t.Helper()
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	start := strings.Index(s, "\n## "+title+"\n")
	if start < 0 {
		t.Fatalf("%s has no section %q", doc, title)
	}
	s = s[start+len(title)+5:]
	if end := strings.Index(s, "\n## "); end >= 0 {
		s = s[:end]
	}
	return s
}

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// docYAML is the one YAML block of a section, decoded.
func docYAML(t *testing.T, title string) map[string]any {
	t.Helper()
	blocks := yamlBlock.FindAllStringSubmatch(docSection(t, envoyDoc, title), -1)
	if len(blocks) != 1 {
		t.Fatalf("section %q of %s has %d yaml blocks, want 1", title, envoyDoc, len(blocks))
	}
	var v map[string]any
	if err := yaml.Unmarshal([]byte(blocks[0][1]), &v); err != nil {
		t.Fatalf("section %q of %s: %v", title, envoyDoc, err)
	}
	return v
}

// walk calls fn on every mapping under v.
func walk(v any, fn func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(v)
		for _, x := range v {
			walk(x, fn)
		}
	case []any:
		for _, x := range v {
			walk(x, fn)
		}
	}
}

// sampleHeaders are the request headers the test's requests carry.
var sampleHeaders = map[string]string{":path": "/api/v1/orders?page=2", "x-tenant": "acme"}

// descriptorsOf is the descriptors Envoy builds from rate_limits (a list
// of {actions: [...]}) for a request from 192.0.2.10 with sampleHeaders,
// for the actions the docs use.
func descriptorsOf(t *testing.T, rateLimits []any) []*ratelimitv3.RateLimitDescriptor {
	t.Helper()
	var ds []*ratelimitv3.RateLimitDescriptor
	for _, rl := range rateLimits {
		d := &ratelimitv3.RateLimitDescriptor{}
		for _, a := range rl.(map[string]any)["actions"].([]any) {
			for action, arg := range a.(map[string]any) {
				m, _ := arg.(map[string]any)
				s := func(k string) string { v, _ := m[k].(string); return v }
				var key, value string
				switch action {
				case "remote_address":
					key, value = "remote_address", "192.0.2.10"
				case "request_headers":
					key, value = s("descriptor_key"), sampleHeaders[s("header_name")]
					if value == "" {
						t.Fatalf("request_headers of %q: no sample value for that header", s("header_name"))
					}
				case "generic_key":
					key, value = s("descriptor_key"), s("descriptor_value")
					if key == "" {
						key = "generic_key" // Envoy's default
					}
				default:
					t.Fatalf("action %q: not one the test builds", action)
				}
				d.Entries = append(d.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: key, Value: value})
			}
		}
		ds = append(ds, d)
	}
	return ds
}

// TestEnvoyExampleSnippets checks the Envoy and Istio snippets of
// docs/envoy.md against the example ConfigMap: the filter names its
// domain, with the settings the docs describe, and every descriptor the
// route's actions produce matches one of its limits.
func TestEnvoyExampleSnippets(t *testing.T) {
	c := envoyExampleConfig(t)

	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := redisstore.New(rdb, redisstore.WithTimeout(storeTimeout))
	if err != nil {
		t.Fatal(err)
	}
	lim, err := limiter.New(st, rls.Limits(c))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lim.Close() })
	srv, err := rls.NewServer(lim, []*rls.Config{c}, rls.Options{})
	if err != nil {
		t.Fatal(err)
	}

	for _, title := range []string{"Envoy", "Istio"} {
		t.Run(title, func(t *testing.T) {
			doc := docYAML(t, title)
			var filters []map[string]any
			var rateLimits [][]any
			walk(doc, func(m map[string]any) {
				if m["name"] == "envoy.filters.http.ratelimit" {
					filters = append(filters, m)
				}
				if rl, ok := m["rate_limits"].([]any); ok {
					rateLimits = append(rateLimits, rl)
				}
			})
			if len(filters) != 1 || len(rateLimits) != 1 {
				t.Fatalf("%d ratelimit filters and %d rate_limits, want 1 each", len(filters), len(rateLimits))
			}
			tc, _ := filters[0]["typed_config"].(map[string]any)
			if tc["domain"] != c.Domain {
				t.Errorf("the filter's domain is %v, the example config's %q", tc["domain"], c.Domain)
			}
			for k, want := range map[string]any{
				"@type":                      "type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit",
				"failure_mode_deny":          true,
				"timeout":                    "0.02s",
				"enable_x_ratelimit_headers": "DRAFT_VERSION_03",
			} {
				if tc[k] != want {
					t.Errorf("the filter's %s is %v, want %v", k, tc[k], want)
				}
			}
			svc, _ := tc["rate_limit_service"].(map[string]any)
			if svc["transport_api_version"] != "V3" || svc["grpc_service"] == nil {
				t.Errorf("rate_limit_service %v: want transport_api_version V3 and a grpc_service", svc)
			}

			ds := descriptorsOf(t, rateLimits[0])
			res, err := srv.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: c.Domain, Descriptors: ds})
			if err != nil {
				t.Fatal(err)
			}
			if res.GetOverallCode() != rlsv3.RateLimitResponse_OK {
				t.Errorf("overall %v, want OK", res.GetOverallCode())
			}
			if len(res.GetStatuses()) != len(ds) {
				t.Fatalf("%d statuses for %d descriptors", len(res.GetStatuses()), len(ds))
			}
			for i, s := range res.GetStatuses() {
				if s.GetCurrentLimit() == nil {
					t.Errorf("descriptor %v matches no limit of the example config", ds[i].GetEntries())
				}
			}
		})
	}
}
