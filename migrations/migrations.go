package migrations

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"

	"github.com/uptrace/bun/migrate"
)

//go:embed *.sql
var sqlFiles embed.FS

// Migrations holds every schema migration of the library, in order.
var Migrations = migrate.NewMigrations()

func init() {
	if err := Migrations.Discover(sqlFiles); err != nil {
		panic(err)
	}
}

// Digest is a short hash of every migration file, so test harnesses can cache a migrated
// template database per schema version.
func Digest() string {
	h := sha256.New()
	entries, _ := fs.ReadDir(sqlFiles, ".")
	for _, e := range entries {
		b, _ := fs.ReadFile(sqlFiles, e.Name())
		h.Write([]byte(e.Name()))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
