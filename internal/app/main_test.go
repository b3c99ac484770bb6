package app_test

import (
	"os"
	"testing"

	"github.com/linkbolt/linkbolt/internal/pgtest"
)

// TestMain stops the PostgreSQL cluster the tests started, if any.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
