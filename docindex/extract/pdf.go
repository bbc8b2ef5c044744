package extract

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// pdf extracts a PDF with pdftotext when configured, else with the pure Go reader.
// When pdftotext fails on a file (other than for a password) the pure Go reader gets
// a try, since the two tolerate different kinds of damage.
func (e *Extractor) pdf(ctx context.Context, path string) (*Document, error) {
	if e.pdftotext == "" {
		return e.pdfGo(ctx, path)
	}
	d, err := e.pdfPoppler(ctx, path)
	if err == nil || errors.Is(err, ErrEncrypted) || ctx.Err() != nil {
		return d, err
	}
	d, goErr := e.pdfGo(ctx, path)
	if goErr != nil {
		return nil, err
	}
	d.Warnings = append([]string{fmt.Sprintf("pdftotext failed (%v); the built-in PDF reader was used", err)}, d.Warnings...)
	return d, nil
}

// limitedBuffer keeps the first n bytes written to it (stderr of a tool).
type limitedBuffer struct {
	bytes.Buffer
	n int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.n - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// popplerError classifies a failed poppler tool run.
func popplerError(tool string, err error, stderr string) error {
	msg := firstLine(stderr)
	if msg == "" {
		msg = err.Error()
	}
	if strings.Contains(stderr, "Incorrect password") || strings.Contains(stderr, "encrypted") {
		return fmt.Errorf("%s: %s: %w", tool, msg, ErrEncrypted)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		// Exit code 1 is "error opening a PDF file": damaged or not a PDF.
		return fmt.Errorf("%s: %s: %w", tool, msg, ErrCorrupt)
	}
	return fmt.Errorf("%s: %s: %w", tool, msg, err)
}

// pdfInfo runs pdfinfo for the page count and title.
func (e *Extractor) pdfInfo(ctx context.Context, path string) (pages int, title string, err error) {
	cmd := exec.CommandContext(ctx, e.pdfinfo, "-enc", "UTF-8", path)
	stderr := &limitedBuffer{n: 8 << 10}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return 0, "", fmt.Errorf("pdfinfo: %w", ctx.Err())
		}
		return 0, "", popplerError("pdfinfo", err, stderr.String())
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Pages":
			pages, _ = strconv.Atoi(v)
		case "Title":
			title = v
		}
	}
	return pages, title, nil
}

// pdfPoppler runs pdftotext over the whole file once and splits its output at the
// form feeds it writes after every page. The output is read as a stream; text past
// the cap is dropped but still counted for pages.
func (e *Extractor) pdfPoppler(ctx context.Context, path string) (*Document, error) {
	ctx, cancel := context.WithTimeout(ctx, e.pdfTimeout)
	defer cancel()
	d := &Document{}
	if e.pdfinfo != "" {
		n, title, err := e.pdfInfo(ctx, path)
		if err != nil {
			return nil, err
		}
		d.PageCount, d.Title = n, title
	}
	args := []string{"-enc", "UTF-8", "-eol", "unix"}
	if e.maxPages > 0 {
		args = append(args, "-l", strconv.Itoa(e.maxPages))
	}
	cmd := exec.CommandContext(ctx, e.pdftotext, append(args, path, "-")...)
	stderr := &limitedBuffer{n: 64 << 10}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("pdftotext: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pdftotext: %w", err)
	}
	br := bufio.NewReaderSize(stdout, 64<<10)
	size, read, dropped := 0, 0, false
	var page strings.Builder
	for {
		chunk, rerr := br.ReadString('\f')
		ff := strings.HasSuffix(chunk, "\f")
		chunk = strings.TrimSuffix(chunk, "\f")
		if room := e.maxTextBytes - size; len(chunk) > room {
			chunk, dropped = truncateUTF8(chunk, room), true
		}
		size += len(chunk)
		page.WriteString(chunk)
		if ff {
			read++
			d.Pages = append(d.Pages, Page{Number: read, Text: page.String()})
			page.Reset()
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				cmd.Wait()
				return nil, fmt.Errorf("pdftotext output: %w", rerr)
			}
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("pdftotext: %w", ctx.Err())
		}
		perr := popplerError("pdftotext", err, stderr.String())
		if read == 0 || errors.Is(perr, ErrEncrypted) {
			return nil, perr
		}
		d.Warnings = append(d.Warnings, perr.Error())
	} else if problems := popplerProblems(stderr.String()); problems != "" {
		d.Warnings = append(d.Warnings, problems)
	}
	if d.PageCount == 0 {
		d.PageCount = read
	}
	if dropped {
		d.Warnings = append(d.Warnings, capWarning(e.maxTextBytes))
	}
	if e.maxPages > 0 && d.PageCount > e.maxPages {
		d.Warnings = append(d.Warnings, fmt.Sprintf("page cap reached: pages %d to %d left out", e.maxPages+1, d.PageCount))
	} else if read < d.PageCount {
		d.Warnings = append(d.Warnings, fmt.Sprintf("pdftotext read %d of %d pages", read, d.PageCount))
	}
	return d, nil
}

// popplerProblems summarises the errors poppler reported while it still produced
// text (damaged content streams, missing fonts), or "" when there were none.
func popplerProblems(stderr string) string {
	var errs []string
	for line := range strings.SplitSeq(stderr, "\n") {
		if strings.Contains(line, "Error") {
			errs = append(errs, strings.TrimSpace(line))
		}
	}
	switch len(errs) {
	case 0:
		return ""
	case 1:
		return "pdftotext reported a problem; some text may be missing: " + errs[0]
	}
	return fmt.Sprintf("pdftotext reported %d problems; some text may be missing; first: %s", len(errs), errs[0])
}
