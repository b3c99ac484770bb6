package main

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A unit is a systemd unit file: each section's directives, with every
// value a repeated directive was given.
type unit map[string]map[string][]string

func parseUnit(t *testing.T, name string) unit {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unit{}
	var section string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";"):
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			section = l[1 : len(l)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: %q is not a directive of a section", name, n, l)
			}
			u[section][strings.TrimSpace(k)] = append(u[section][strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSystemdUnit checks deploy/linkbolt.service has the sandbox
// docs/install.md ("systemd") promises: a dynamic user that writes only
// its state directory, no new privileges, no capabilities, a narrow system
// call and address family set, and restarts on failure.
func TestSystemdUnit(t *testing.T) {
	checkUnitSandbox(t, "linkbolt.service", "linkbolt", "LINKBOLT_STORAGE_PATH=/var/lib/linkbolt/linkbolt.db")
	// The template unit of several instances (docs/instances.md), each in
	// a state directory of its own.
	checkUnitSandbox(t, "linkbolt@.service", "linkbolt/%i", "LINKBOLT_STORAGE_PATH=/var/lib/linkbolt/%i/linkbolt.db")
}

// checkUnitSandbox checks the unit deploy/name: its sandbox, its state
// directory and where its data lives.
func checkUnitSandbox(t *testing.T, name, stateDir, storage string) {
	u := parseUnit(t, filepath.Join("..", "deploy", name))
	for _, d := range []struct{ section, key, value string }{
		{"Service", "DynamicUser", "yes"},
		{"Service", "StateDirectory", stateDir},
		{"Service", "ProtectSystem", "strict"},
		{"Service", "NoNewPrivileges", "yes"},
		{"Service", "PrivateTmp", "yes"},
		{"Service", "PrivateDevices", "yes"},
		{"Service", "ProtectHome", "yes"},
		{"Service", "ProtectKernelTunables", "yes"},
		{"Service", "ProtectKernelModules", "yes"},
		{"Service", "ProtectKernelLogs", "yes"},
		{"Service", "ProtectControlGroups", "yes"},
		{"Service", "RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX AF_NETLINK"},
		{"Service", "SystemCallFilter", "@system-service"},
		{"Service", "SystemCallArchitectures", "native"},
		{"Service", "CapabilityBoundingSet", ""},
		{"Service", "AmbientCapabilities", ""},
		{"Service", "Restart", "on-failure"},
		{"Service", "LimitNOFILE", "65536"},
		{"Service", "Environment", storage},
		{"Install", "WantedBy", "multi-user.target"},
	} {
		if got := u[d.section][d.key]; !slices.Contains(got, d.value) {
			t.Errorf("%s: [%s] %s=%s is missing (has %q)", name, d.section, d.key, d.value, got)
		}
	}
	if got := u["Service"]["ExecStart"]; len(got) != 1 || !strings.HasPrefix(got[0], "/usr/local/bin/linkbolt serve ") {
		t.Errorf("ExecStart %q: want /usr/local/bin/linkbolt serve ...", got)
	}
	// Nothing may give back what the sandbox took: the data lives in the
	// state directory, the user is made up.
	for _, k := range []string{"ReadWritePaths", "User", "Group"} {
		if got := u["Service"][k]; len(got) > 0 {
			t.Errorf("%s=%q would undo the sandbox", k, got)
		}
	}
	if got := u["Service"]["ProtectSystem"]; len(got) != 1 {
		t.Errorf("ProtectSystem is given %d times: %q", len(got), got)
	}
}

// checkUnitServes starts the released binary as the unit does, after the
// install steps of docs/install.md: its ExecStart arguments with config.example.yaml
// as /etc/linkbolt/config.yaml, and its environment.
func checkUnitServes(t *testing.T, root, bin string) {
	u := parseUnit(t, filepath.Join(root, "deploy", "linkbolt.service"))
	args := strings.Fields(u["Service"]["ExecStart"][0])[1:]
	config := filepath.Join(t.TempDir(), "config.yaml")
	example, err := os.ReadFile(filepath.Join(root, "config.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, example, 0o644); err != nil {
		t.Fatal(err)
	}
	i := slices.Index(args, "/etc/linkbolt/config.yaml")
	if i < 0 {
		t.Fatalf("ExecStart %v does not read /etc/linkbolt/config.yaml, where docs/install.md installs it", args)
	}
	args[i] = config
	env := map[string]string{}
	for _, e := range u["Service"]["Environment"] {
		k, v, ok := strings.Cut(e, "=")
		if !ok {
			t.Fatalf("Environment=%s: want KEY=value", e)
		}
		env[k] = v
	}
	serveWithEnv(t, bin, env, args...)
}
