package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
)

// apiClient talks to a running server with an API key: the CLI's commands that act on live state
// (a sync runs in a server process) go through the HTTP interface like any client.
type apiClient struct {
	base string
	key  string
	http *http.Client
}

func newAPIClient() (*apiClient, error) {
	base := strings.TrimRight(os.Getenv("DOCINDEX_URL"), "/")
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	key := os.Getenv("DOCINDEX_API_KEY")
	if key == "" {
		return nil, fmt.Errorf("set DOCINDEX_API_KEY (a key from `docindex apikey create`) and DOCINDEX_URL (default http://127.0.0.1:8080)")
	}
	return &apiClient{base: base, key: key, http: &http.Client{Timeout: 30 * time.Second}}, nil
}

func (c *apiClient) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if res.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, e.Error)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

type syncRun struct {
	ID      string  `json:"id"`
	Status  string  `json:"status"`
	Seen    int     `json:"seen"`
	Created int     `json:"created"`
	Updated int     `json:"updated"`
	Deleted int     `json:"deleted"`
	Skipped int     `json:"skipped"`
	Failed  int     `json:"failed"`
	Error   *string `json:"error"`
}

func newSources() *cobra.Command {
	cmd := &cobra.Command{Use: "sources", Short: "Work with data sources of a running server (DOCINDEX_URL, DOCINDEX_API_KEY)"}
	var wait bool
	syncCmd := &cobra.Command{
		Use:   "sync SOURCE_ID",
		Short: "Start a sync now; with --wait, show its progress until it and its indexing jobs finish",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			var src struct {
				CollectionID *string `json:"collectionId"`
			}
			if err := c.do(ctx, "GET", "/api/sources/"+args[0], nil, &src); err != nil {
				return err
			}
			var run syncRun
			if err := c.do(ctx, "POST", "/api/sources/"+args[0]+"/sync", nil, &run); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "sync %s started\n", run.ID)
			if !wait {
				return nil
			}
			return waitSync(ctx, c, args[0], run.ID, src.CollectionID, out)
		},
	}
	syncCmd.Flags().BoolVar(&wait, "wait", false, "show progress until the sync and its jobs finish")
	cmd.AddCommand(syncCmd)
	return cmd
}

func waitSync(ctx context.Context, c *apiClient, sourceID, runID string, collectionID *string, out io.Writer) error {
	bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(out), progressbar.OptionSetDescription("syncing"),
		progressbar.OptionShowCount(), progressbar.OptionSpinnerType(14), progressbar.OptionClearOnFinish())
	var run syncRun
	for {
		var hist struct {
			Syncs []syncRun `json:"syncs"`
		}
		if err := c.do(ctx, "GET", "/api/sources/"+sourceID+"/syncs?limit=20", nil, &hist); err != nil {
			return err
		}
		for _, r := range hist.Syncs {
			if r.ID == runID {
				run = r
			}
		}
		pending := 0
		if collectionID != nil {
			for _, st := range []string{"queued", "running"} {
				var jobs struct {
					Jobs []json.RawMessage `json:"jobs"`
				}
				if err := c.do(ctx, "GET", "/jobs?limit=1000&status="+st+"&collectionId="+*collectionID, nil, &jobs); err != nil {
					return err
				}
				pending += len(jobs.Jobs)
			}
		}
		bar.Describe(fmt.Sprintf("seen %d, queued %d, skipped %d, deleted %d, failed %d; jobs pending %d",
			run.Seen, run.Created+run.Updated, run.Skipped, run.Deleted, run.Failed, pending))
		_ = bar.Set(run.Seen)
		if run.Status != "" && run.Status != "running" && pending == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	_ = bar.Finish()
	fmt.Fprintf(out, "sync %s %s: seen %d, created %d, updated %d, deleted %d, skipped %d, failed %d\n",
		run.ID, run.Status, run.Seen, run.Created, run.Updated, run.Deleted, run.Skipped, run.Failed)
	if run.Status == "failed" && run.Error != nil {
		return fmt.Errorf("sync failed: %s", *run.Error)
	}
	return nil
}
