package extract

import (
	"context"
	"errors"
	"fmt"

	"github.com/xuri/excelize/v2"
)

// Limits passed to excelize: parts larger than the XML limit are unpacked to
// temporary files and read as streams instead of being held in memory.
const (
	xlsxUnzipLimit    = 4 << 30
	xlsxUnzipXMLLimit = 16 << 20
)

// xlsx renders each sheet as a Markdown table under a "## sheet name" heading, one
// page (Number 0) per sheet. Cells come formatted as Excel shows them; rows are
// streamed.
func (e *Extractor) xlsx(ctx context.Context, path string) (*Document, error) {
	f, err := excelize.OpenFile(path, excelize.Options{UnzipSizeLimit: xlsxUnzipLimit, UnzipXMLSizeLimit: xlsxUnzipXMLLimit})
	if err != nil {
		if errors.Is(err, excelize.ErrWorkbookFileFormat) || errors.Is(err, excelize.ErrWorkbookPassword) {
			return nil, fmt.Errorf("open: %v: %w", err, ErrEncrypted)
		}
		return nil, fmt.Errorf("open: %v: %w", err, ErrCorrupt)
	}
	defer f.Close()
	d := &Document{}
	if p, err := f.GetDocProps(); err == nil {
		d.Title = p.Title
	}
	w := newTextBuf(e.maxTextBytes)
	for _, sheet := range f.GetSheetList() {
		if w.full {
			break
		}
		start := w.Len()
		if err := e.sheet(ctx, f, sheet, w); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			d.Warnings = append(d.Warnings, fmt.Sprintf("sheet %q: %v", sheet, err))
		}
		text := w.String()[start:]
		if text != "" {
			d.Pages = append(d.Pages, Page{Text: "## " + sheet + "\n\n" + text})
		}
	}
	if w.full {
		d.Warnings = append(d.Warnings, capWarning(e.maxTextBytes))
	}
	return d, nil
}

func (e *Extractor) sheet(ctx context.Context, f *excelize.File, sheet string, w *textBuf) error {
	rows, err := f.Rows(sheet)
	if err != nil {
		return err
	}
	defer rows.Close()
	t := &tableWriter{w: w}
	for n := 0; rows.Next() && !w.full; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		t.row(cols)
	}
	return rows.Error()
}
