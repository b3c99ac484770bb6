package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// buildBinary builds linkbolt into dir, or returns the -bin given.
func buildBinary(ctx context.Context, o options, dir string) (string, error) {
	if o.bin != "" {
		return filepath.Abs(o.bin)
	}
	bin := filepath.Join(dir, "linkbolt")
	logf("building linkbolt from %s", o.src)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir, cmd.Stdout, cmd.Stderr = o.src, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build: %w", err)
	}
	return bin, nil
}

// benchEmail and benchPassword are the admin of the benchmark's instance.
const (
	benchEmail    = "bench@example.com"
	benchPassword = "benchmark-password"
	// benchPasswordCost is auth.password_cost: cheap, as logins are not
	// measured.
	benchPasswordCost = 4
)

// server is the linkbolt process under test, configured through the
// environment as bench/scale.sh does.
type server struct {
	bin, dataPath, logPath, base string
	env                          []string
	cmd                          *exec.Cmd
	exited                       chan struct{}
}

func newServer(bin, dir string, o options) *server {
	s := &server{
		bin:      bin,
		dataPath: filepath.Join(dir, "lb.db"),
		logPath:  filepath.Join(dir, "server.log"),
		base:     fmt.Sprintf("http://127.0.0.1:%d", o.port),
	}
	s.env = []string{
		"LINKBOLT_SERVER_LISTEN=" + strings.TrimPrefix(s.base, "http://"),
		"LINKBOLT_SERVER_BASE_URL=" + s.base,
		"LINKBOLT_STORAGE_PATH=" + s.dataPath,
		"LINKBOLT_ADMIN_EMAIL=" + benchEmail,
		"LINKBOLT_ADMIN_PASSWORD=" + benchPassword,
		"LINKBOLT_LOG_LEVEL=warn",
		"LINKBOLT_PLANS_FREE=0",
		"LINKBOLT_AUTH_PASSWORD_COST=" + strconv.Itoa(benchPasswordCost),
		"LINKBOLT_SERVER_SEARCH_SCAN_LIMIT=" + strconv.Itoa(o.scanLimit),
	}
	if o.store == "postgres" {
		s.env = append(s.env, "LINKBOLT_STORAGE_POSTGRES_URL="+o.pgURL)
	}
	return s
}

// start starts the server and returns the time from the start to the
// first 200 of /healthz.
func (s *server) start(ctx context.Context) (time.Duration, error) {
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(s.bin)
	// The environment of the run wins only where the benchmark sets
	// nothing: other LINKBOLT_ settings (clicks.queue_bytes, ...) pass.
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	t := time.Now()
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return 0, err
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(s.exited)
	}()
	hc := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-s.exited:
			return 0, fmt.Errorf("linkbolt exited at start: %s", s.logTail())
		case <-ctx.Done():
			return 0, ctx.Err()
		default:
		}
		if resp, err := hc.Get(s.base + "/healthz"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(t), nil
			}
		}
		if time.Since(t) > 5*time.Minute {
			return 0, errors.New("linkbolt not healthy after 5 minutes")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// stop sends SIGTERM and waits for the graceful stop.
func (s *server) stop() error {
	if s.cmd == nil {
		return nil
	}
	select {
	case <-s.exited:
		return nil
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-s.exited:
	case <-time.After(5 * time.Minute):
		return errors.New("linkbolt did not stop within 5 minutes of SIGTERM")
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("linkbolt exited %d: %s", code, s.logTail())
	}
	return nil
}

// kill ends a server left running by an error.
func (s *server) kill() {
	if s.cmd == nil {
		return
	}
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *server) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// procMem is what /proc/PID/status says of a process's memory.
type procMem struct {
	rssAnon, rssFile, hwm int64
}

// readStatus reads RssAnon, RssFile and VmHWM of pid.
func readStatus(pid int) (procMem, error) {
	var m procMem
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(val)
		if len(fields) == 0 {
			continue
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "RssAnon":
			m.rssAnon = kb << 10
		case "RssFile":
			m.rssFile = kb << 10
		case "VmHWM":
			m.hwm = kb << 10
		}
	}
	return m, sc.Err()
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// apiClient calls linkbolt's API with the admin's token over keep-alive
// connections.
type apiClient struct {
	base, token string
	hc          *http.Client
}

func login(ctx context.Context, base string) (*apiClient, error) {
	a := &apiClient{base: base, hc: &http.Client{
		Timeout:   10 * time.Minute,
		Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute},
	}}
	var tok struct{ Token string }
	if err := a.call(ctx, "POST", "/v1/auth/login", map[string]string{"email": benchEmail, "password": benchPassword}, &tok); err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	a.token = tok.Token
	return a, nil
}

// workspaceID returns the admin's one workspace.
func (a *apiClient) workspaceID(ctx context.Context) (string, error) {
	var me struct {
		Workspaces []struct{ ID string }
	}
	if err := a.call(ctx, "GET", "/v1/me", nil, &me); err != nil {
		return "", err
	}
	if len(me.Workspaces) != 1 {
		return "", fmt.Errorf("the admin has %d workspaces, want 1", len(me.Workspaces))
	}
	return me.Workspaces[0].ID, nil
}

// do sends one request and returns the status and the body.
func (a *apiClient) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// call sends in as JSON and decodes a 2xx answer into out; any other
// status is an error.
func (a *apiClient) call(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	status, b, err := a.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	if status/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, status, snippet(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

func snippet(b []byte) string {
	if len(b) > 300 {
		b = b[:300]
	}
	return strings.TrimSpace(string(b))
}

// metric reads one sample of /metrics (unlabelled, or under the
// instance label linkbolt adds on PostgreSQL); -1 when absent.
func (a *apiClient) metric(ctx context.Context, name string) float64 {
	_, b, err := a.do(ctx, "GET", "/metrics", nil)
	if err != nil {
		return -1
	}
	return metricValue(b, name)
}

// metricValue reads the metric name from the text of /metrics; -1 when it
// is not there.
func metricValue(b []byte, name string) float64 {
	for _, line := range strings.Split(string(b), "\n") {
		// name value, or name{labels} value (linkbolt_instance on
		// PostgreSQL).
		if !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if f, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				return f
			}
		}
	}
	return -1
}
